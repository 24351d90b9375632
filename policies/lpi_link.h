#pragma once

#include <array>
#include <cstdint>

#include "common/time.h"
#include "policies/lpi_params.h"

namespace ebb::policies {

// Where a link direction's time goes under low-power idle.
enum class LpiState : std::uint8_t {
  kActive,       // transmitting (full power)
  kHold,         // idle at full power, ready (T_h; forever with LPI off)
  kFastWake,     // P_FW, a packet pays T_w,FW
  kSleepSignal,  // full power, a packet pays T_w,DS
  kQuiet,        // P_DS, a packet pays T_w,DS
  kRefresh,      // full power, a packet pays T_w,DS
  kWaking,       // full power, the wake-up delay in progress
};
inline constexpr std::size_t kLpiStates = 7;
const char* toString(LpiState s);

using LpiTimes = std::array<TimePs, kLpiStates>;

// What drives a transmitter: a packet is ready to send (and the transmitter is
// free), the transmission in progress ended, or the timer it asked for fired.
enum class LpiEvent : std::uint8_t { kPacketReady, kTransmissionEnded, kTimer };
const char* toString(LpiEvent e);

// The answer to an event.
struct LpiStep {
  TimePs delay = 0;                  // kPacketReady: wait this long before transmitting
  LpiState state = LpiState::kHold;  // the state from `now` on
  TimePs nextTimer = -1;  // when the state changes next unless an event comes (-1: never)
};

// What low-power idle cost a transmitter's packets, and its hold.
struct LpiCounters {
  std::uint64_t packets = 0;  // packets that found the transmitter free
  std::uint64_t wakeups = 0;  // of which found it in low power
  TimePs wakeDelay = 0;       // the wake-up delay they paid
  // Adaptive hold: idle periods that began in debt (held for max_hold), and
  // the wake-ups after idle periods of max_hold or more (not charged).
  std::uint64_t overBudgetIdles = 0;
  std::uint64_t longIdleWakeups = 0;
  TimePs longIdleWakeDelay = 0;
  // Adaptive hold: the most the charged wake-up delay (wakeDelay less
  // longIdleWakeDelay) exceeded budget x packets, after any packet of the run.
  TimePs maxOverdraw = 0;
  TimePs hold = 0;  // the hold now (adaptive: as adapted)
};

// One transmitter under low-power idle (Tables II-IV of seed 004). After the
// last packet: hold; then deep-sleep (sleep signalling, then quiet periods
// interleaved with refresh), fast-wake, or hybrid (fast-wake for T_h,DS, then
// deep-sleep). The idle timeline is a pure function of the time the link went
// idle, so it is evaluated when an event arrives; nextTransition() gives the
// timer at which the state would change next. Time is credited per state.
// Intervals are half-open: a packet ready exactly when the hold ends finds the
// next state (sleep signalling in deep-sleep, fast-wake in fast-wake and
// hybrid); only a packet ready the instant the link went idle goes out back to
// back. Time is credited up to the last event or finish(), never ahead.
class LpiLink {
 public:
  // The link starts idle at `start` (in hold).
  explicit LpiLink(const LpiParams& params, TimePs start = 0, LpiTimes carried = {});

  // Handles one event at `now` (non-decreasing across calls).
  LpiStep onEvent(LpiEvent e, TimePs now);

  // A packet is ready at `now` and the transmitter is free: returns the delay
  // before it can start (0 when active or in hold) and credits the idle time up
  // to `now`; the link is waking (full power) until now + delay, then active.
  TimePs packetReady(TimePs now);
  // Another packet starts on a transmitter that is already busy (the
  // input-queued model interleaves packets of several VCs on one link): it is
  // counted among the packets, with no wake-up of its own, so the counters
  // mean the same (one per packet sent) on both switch models.
  void packetJoined() { ++counters_.packets; }
  // The transmission that started after packetReady ended at `now`.
  void transmissionEnded(TimePs now);
  // The transmitter has a packet to send but no credits at `now`: it is not
  // idle, so if still in hold it stays there (no low-power entry) until the
  // next packetReady(). A link already asleep stays asleep.
  void pin(TimePs now);
  // Credits time up to `now` (end of a run).
  void finish(TimePs now);
  // Gating switched the direction off at `now` (transmitter idle): time stops
  // being credited until resume(); the link resumes in hold.
  void suspend(TimePs now);
  void resume(TimePs now);
  bool suspended() const { return suspended_; }

  LpiState stateAt(TimePs now) const;
  // When the state changes next if no packet comes (-1: never).
  TimePs nextTransition(TimePs now) const;
  // Time per state (index: LpiState) credited so far.
  const LpiTimes& times() const { return times_; }
  const LpiParams& params() const { return p_; }
  LpiCounters counters() const;
  // Adaptive hold: the delay account (budget earned minus wake-ups paid).
  TimePs delayBalance() const { return balance_; }
  bool busy() const { return busy_; }

 private:
  struct Phase {
    LpiState state;
    TimePs end;  // absolute end of this phase (-1: open ended)
  };
  // The idle phase containing `now` (idle since idleSince_).
  Phase idlePhase(TimePs now) const;
  TimePs wakeDelay(LpiState s) const;
  void creditIdle(TimePs until);
  void creditBusy(TimePs until);
  // Start of deep-sleep cycling (quiet/refresh), relative to going idle; -1 if none.
  TimePs cyclesStart() const;
  // Adaptive hold: settles the account for a packet that waited `delay` after
  // `idle` of idle time, and moves the hold.
  void adapt(TimePs idle, TimePs delay);
  // An idle period begins (after a transmission or a resume).
  void startIdle();
  // Adaptive hold: the account is in debt, so an idle period starting now
  // holds for max_hold.
  bool overBudget() const { return p_.adaptive.enabled && balance_ < 0; }

  LpiParams p_;
  TimePs hold_ = 0;      // the hold (p_.hold unless adaptive)
  TimePs idleHold_ = 0;  // this idle period's: hold_, or max_hold when over budget
  bool overBudgetIdle_ = false;
  TimePs balance_ = 0;
  LpiCounters counters_;
  LpiTimes times_{};
  TimePs idleSince_ = 0;
  TimePs creditedUntil_ = 0;
  TimePs wakeSince_ = 0;
  TimePs activeSince_ = 0;
  bool busy_ = false;
  bool suspended_ = false;
  bool pinned_ = false;
};

}  // namespace ebb::policies
