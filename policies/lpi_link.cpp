#include "policies/lpi_link.h"

#include <algorithm>

namespace ebb::policies {

const char* toString(LpiState s) {
  switch (s) {
    case LpiState::kActive:
      return "active";
    case LpiState::kHold:
      return "hold";
    case LpiState::kFastWake:
      return "fast-wake";
    case LpiState::kSleepSignal:
      return "sleep-signal";
    case LpiState::kQuiet:
      return "quiet";
    case LpiState::kRefresh:
      return "refresh";
    case LpiState::kWaking:
      return "waking";
  }
  return "?";
}

const char* toString(LpiEvent e) {
  switch (e) {
    case LpiEvent::kPacketReady:
      return "packet-ready";
    case LpiEvent::kTransmissionEnded:
      return "transmission-ended";
    case LpiEvent::kTimer:
      return "timer";
  }
  return "?";
}

namespace {
constexpr std::size_t idx(LpiState s) {
  return static_cast<std::size_t>(s);
}
}  // namespace

LpiLink::LpiLink(const LpiParams& params, TimePs start, LpiTimes carried)
    : p_(params),
      hold_(params.hold),
      idleHold_(params.hold),
      times_(carried),
      idleSince_(start),
      creditedUntil_(start) {}

TimePs LpiLink::cyclesStart() const {
  switch (p_.mode) {
    case LpiMode::kDeepSleep:
      return idleHold_ + p_.sleepSignal;
    case LpiMode::kHybrid:
      return idleHold_ + p_.hybridFastWake + p_.sleepSignal;
    default:
      return -1;
  }
}

LpiLink::Phase LpiLink::idlePhase(TimePs now) const {
  const TimePs e = now - idleSince_;
  const TimePs h = idleHold_;
  if (p_.mode == LpiMode::kOff || pinned_) return {LpiState::kHold, -1};
  if (e < h) return {LpiState::kHold, idleSince_ + h};
  if (p_.mode == LpiMode::kFastWake) return {LpiState::kFastWake, -1};
  TimePs signalStart = h;
  if (p_.mode == LpiMode::kHybrid) {
    signalStart = h + p_.hybridFastWake;
    if (e < signalStart) return {LpiState::kFastWake, idleSince_ + signalStart};
  }
  const TimePs c0 = signalStart + p_.sleepSignal;
  if (e < c0) return {LpiState::kSleepSignal, idleSince_ + c0};
  const TimePs period = p_.quiet + p_.refresh;
  const TimePs pos = (e - c0) % period;
  if (pos < p_.quiet) return {LpiState::kQuiet, now + (p_.quiet - pos)};
  return {LpiState::kRefresh, now + (period - pos)};
}

LpiState LpiLink::stateAt(TimePs now) const {
  if (busy_) return now < activeSince_ ? LpiState::kWaking : LpiState::kActive;
  return idlePhase(now).state;
}

TimePs LpiLink::nextTransition(TimePs now) const {
  if (busy_) return now < activeSince_ ? activeSince_ : -1;
  return idlePhase(now).end;
}

TimePs LpiLink::wakeDelay(LpiState s) const {
  switch (s) {
    case LpiState::kFastWake:
      return p_.wakeFastWake;
    case LpiState::kSleepSignal:
    case LpiState::kQuiet:
    case LpiState::kRefresh:
      return p_.wakeDeepSleep;
    default:
      return 0;
  }
}

// Credits idle time [creditedUntil_, until) to the states of the idle timeline.
void LpiLink::creditIdle(TimePs until) {
  TimePs a = creditedUntil_ - idleSince_;
  const TimePs b = until - idleSince_;
  if (b <= a) return;
  creditedUntil_ = until;
  const auto overlap = [&](TimePs lo, TimePs hi) {
    return std::max<TimePs>(0, std::min(b, hi) - std::max(a, lo));
  };
  constexpr TimePs kInf = INT64_MAX;
  const TimePs h = idleHold_;
  if (pinned_) {
    times_[idx(LpiState::kHold)] += b - a;
    return;
  }
  switch (p_.mode) {
    case LpiMode::kOff:
      times_[idx(LpiState::kHold)] += b - a;
      return;
    case LpiMode::kFastWake:
      times_[idx(LpiState::kHold)] += overlap(0, h);
      times_[idx(LpiState::kFastWake)] += overlap(h, kInf);
      return;
    case LpiMode::kDeepSleep:
    case LpiMode::kHybrid:
      break;
  }
  const TimePs fw = p_.mode == LpiMode::kHybrid ? p_.hybridFastWake : 0;
  times_[idx(LpiState::kHold)] += overlap(0, h);
  times_[idx(LpiState::kFastWake)] += overlap(h, h + fw);
  times_[idx(LpiState::kSleepSignal)] += overlap(h + fw, h + fw + p_.sleepSignal);
  const TimePs c0 = cyclesStart();
  if (b <= c0) return;
  // Quiet time in [0, x) of the quiet/refresh cycling.
  const TimePs period = p_.quiet + p_.refresh;
  const auto quietUpTo = [&](TimePs x) {
    return (x / period) * p_.quiet + std::min(x % period, p_.quiet);
  };
  const TimePs x0 = std::max<TimePs>(a, c0) - c0;
  const TimePs x1 = b - c0;
  const TimePs q = quietUpTo(x1) - quietUpTo(x0);
  times_[idx(LpiState::kQuiet)] += q;
  times_[idx(LpiState::kRefresh)] += (x1 - x0) - q;
}

void LpiLink::pin(TimePs now) {
  if (busy_ || pinned_ || suspended_) return;
  // Still in hold, or at the instant it went idle (back to back, zero hold).
  if (now != idleSince_ && idlePhase(now).state != LpiState::kHold) return;
  creditIdle(now);
  pinned_ = true;
}

// Credits busy time [creditedUntil_, until): waking, then active.
void LpiLink::creditBusy(TimePs until) {
  if (until <= creditedUntil_) return;
  const TimePs a = creditedUntil_;
  const TimePs wakeEnd = std::min(until, activeSince_);
  if (wakeEnd > a) times_[idx(LpiState::kWaking)] += wakeEnd - std::max(a, wakeSince_);
  const TimePs activeFrom = std::max(a, activeSince_);
  if (until > activeFrom) times_[idx(LpiState::kActive)] += until - activeFrom;
  creditedUntil_ = until;
}

TimePs LpiLink::packetReady(TimePs now) {
  if (busy_) return std::max<TimePs>(0, activeSince_ - now);
  creditIdle(now);
  // A packet ready the instant the link went idle goes out back to back, even
  // with a zero hold (marker 1 of Tables II-IV).
  const TimePs delay = now == idleSince_ ? 0 : wakeDelay(idlePhase(now).state);
  ++counters_.packets;
  if (delay > 0) {
    ++counters_.wakeups;
    counters_.wakeDelay += delay;
  }
  if (p_.adaptive.enabled) {
    adapt(now - idleSince_, delay);
    const TimePs charged = counters_.wakeDelay - counters_.longIdleWakeDelay;
    const TimePs earned =
        saturatingMul(p_.adaptive.delayBudget, static_cast<TimePs>(counters_.packets));
    counters_.maxOverdraw = std::max(counters_.maxOverdraw, charged - earned);
  }
  pinned_ = false;
  busy_ = true;
  wakeSince_ = now;
  activeSince_ = now + delay;
  creditedUntil_ = now;
  return delay;
}

void LpiLink::transmissionEnded(TimePs now) {
  if (!busy_) return;
  creditBusy(now);
  busy_ = false;
  idleSince_ = creditedUntil_ = now;
  startIdle();
}

void LpiLink::startIdle() {
  // In debt: this idle period holds for max_hold, so only a long idle (whose
  // length dwarfs the wake-up) can cost a wake-up beyond the budget.
  overBudgetIdle_ = overBudget();
  idleHold_ = overBudgetIdle_ ? std::max(hold_, p_.adaptive.maxHold) : hold_;
  if (overBudgetIdle_ && p_.mode != LpiMode::kOff) ++counters_.overBudgetIdles;
}

void LpiLink::adapt(TimePs idle, TimePs delay) {
  const AdaptiveHold& a = p_.adaptive;
  const bool held = pinned_ || overBudgetIdle_;  // the hold was not what decided
  // A wake-up after an idle period of max_hold or more no hold could have
  // spared; it costs at most T_w / max_hold of that idle time and is not
  // charged. The account holds at most one wake-up's worth of savings.
  if (delay > 0 && idle >= a.maxHold) {
    ++counters_.longIdleWakeups;
    counters_.longIdleWakeDelay += delay;
    delay = 0;
  }
  const TimePs cap = std::max(p_.wakeDeepSleep, p_.wakeFastWake);
  balance_ = std::min(cap, balance_ + a.delayBudget) - delay;
  if (delay > 0 && balance_ < 0) {
    const TimePs grown = std::max<TimePs>(hold_ > a.maxHold / 2 ? a.maxHold : 2 * hold_,
                                          std::max<TimePs>(1, p_.sleepSignal));
    hold_ = std::min(a.maxHold, grown);
  } else if (!held && idle / AdaptiveHold::kLongIdleHolds >= hold_) {
    hold_ = std::max(a.minHold, hold_ / 2);
  }
}

LpiCounters LpiLink::counters() const {
  LpiCounters c = counters_;
  c.hold = hold_;
  return c;
}

LpiStep LpiLink::onEvent(LpiEvent e, TimePs now) {
  LpiStep step;
  switch (e) {
    case LpiEvent::kPacketReady:
      step.delay = packetReady(now);
      break;
    case LpiEvent::kTransmissionEnded:
      transmissionEnded(now);
      break;
    case LpiEvent::kTimer:
      finish(now);
      break;
  }
  step.state = stateAt(now);
  step.nextTimer = nextTransition(now);
  return step;
}

void LpiLink::suspend(TimePs now) {
  if (suspended_) return;
  finish(now);
  suspended_ = true;
}

void LpiLink::resume(TimePs now) {
  if (!suspended_) return;
  suspended_ = false;
  busy_ = false;
  idleSince_ = creditedUntil_ = now;
  startIdle();
}

void LpiLink::finish(TimePs now) {
  if (suspended_) return;
  if (busy_) {
    creditBusy(now);
  } else {
    creditIdle(now);
  }
}

}  // namespace ebb::policies
