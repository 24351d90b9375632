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

namespace {
constexpr std::size_t idx(LpiState s) {
  return static_cast<std::size_t>(s);
}
}  // namespace

LpiLink::LpiLink(const LpiParams& params, TimePs start, LpiTimes carried)
    : p_(params), times_(carried), idleSince_(start), creditedUntil_(start) {}

TimePs LpiLink::cyclesStart() const {
  switch (p_.mode) {
    case LpiMode::kDeepSleep:
      return p_.hold + p_.sleepSignal;
    case LpiMode::kHybrid:
      return p_.hold + p_.hybridFastWake + p_.sleepSignal;
    default:
      return -1;
  }
}

LpiLink::Phase LpiLink::idlePhase(TimePs now) const {
  const TimePs e = now - idleSince_;
  const TimePs h = p_.hold;
  if (p_.mode == LpiMode::kOff || pinned_) return {LpiState::kHold, -1};
  // A packet ready the instant the previous one ends goes out back to back,
  // even with a zero hold (marker 1 of Tables II-IV).
  if (e < h || e <= 0) return {LpiState::kHold, idleSince_ + h};
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
  const TimePs h = p_.hold;
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
  if (idlePhase(now).state != LpiState::kHold) return;
  creditIdle(now);
  pinned_ = true;
}

TimePs LpiLink::packetReady(TimePs now) {
  if (busy_) return std::max<TimePs>(0, activeSince_ - now);
  creditIdle(now);
  const TimePs delay = wakeDelay(idlePhase(now).state);
  pinned_ = false;
  times_[idx(LpiState::kWaking)] += delay;
  busy_ = true;
  activeSince_ = now + delay;
  creditedUntil_ = activeSince_;
  return delay;
}

void LpiLink::transmissionEnded(TimePs now) {
  if (!busy_) return;
  times_[idx(LpiState::kActive)] += std::max<TimePs>(0, now - activeSince_);
  busy_ = false;
  idleSince_ = creditedUntil_ = now;
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
  pinned_ = false;
  idleSince_ = creditedUntil_ = now;
}

void LpiLink::finish(TimePs now) {
  if (suspended_) return;
  if (busy_) {
    times_[idx(LpiState::kActive)] += std::max<TimePs>(0, now - activeSince_);
    activeSince_ = std::max(activeSince_, now);
    creditedUntil_ = activeSince_;
  } else {
    creditIdle(now);
  }
}

}  // namespace ebb::policies
