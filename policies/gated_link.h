#pragma once

#include <array>

#include "common/status.h"
#include "common/time.h"
#include "policies/link_power_state.h"

namespace ebb::policies {

// Time per LinkPowerState (index: the enum value).
using GatingTimes = std::array<TimePs, 4>;

// The gating state machine of one link direction with T_on / T_off, and the
// time it spends in each state. Evaluated lazily: state(now) completes any
// transition that is due.
class GatedLink {
 public:
  GatedLink(TimePs tOn, TimePs tOff, LinkPowerState initial = LinkPowerState::kOn,
            TimePs start = 0);

  // T_on, T_off >= 0 and a check period longer than both, so that every
  // decision sees the previous one completed (paper: 1000 and 2000 cycles).
  // E_INVALID names the rule and the values.
  static Status validateTiming(TimePs tOn, TimePs tOff, TimePs checkPeriod);

  // Requests on or off at `now`; returns when the request completes (when the
  // link becomes usable, or unpowered). Repeating the current request is a no-op.
  TimePs request(bool on, TimePs now);
  LinkPowerState state(TimePs now);
  // When the pending transition completes (-1: none).
  TimePs transitionEnd() const { return pending_ ? until_ : -1; }
  // Time per state up to `now`, indexed by LinkPowerState.
  const GatingTimes& times(TimePs now);

 private:
  void advance(TimePs now);
  TimePs tOn_;
  TimePs tOff_;
  LinkPowerState state_;
  bool pending_ = false;
  TimePs until_ = 0;
  TimePs since_;  // time credited up to here
  GatingTimes times_{};
};

}  // namespace ebb::policies
