#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "fabric/ids.h"

namespace ebb::agent {

// Anti-flap (docs/ib_agent.md, "Flapping"): a link turned off more than
// `limit` times within `windowPs` is held on, for `holdPs` the first time and
// twice as long at each hold that follows within `windowPs` of the last one
// (capped at 2^10 x holdPs); a quiet window resets the growth. Route-flap
// damping in BGP and SONiC's fabric-port isolation after repeated flaps are
// the same idea: every turn-off of an InfiniBand link makes OpenSM re-sweep.
struct FlapLimits {
  int limit = 0;  // 0: no damping
  TimePs windowPs = 0;
  TimePs holdPs = 0;  // first hold; 0: windowPs
  Status validate() const;
};

class FlapDamper {
 public:
  void setLimits(FlapLimits limits) { limits_ = limits; }
  const FlapLimits& limits() const { return limits_; }
  // OK, or why `link` must stay on now. May start a hold (counted in holds()).
  Status check(fabric::LinkId link, TimePs now, const std::string& linkName);
  // `link` was turned off at `now`.
  void noteOff(fabric::LinkId link, TimePs now);
  std::uint64_t holds() const { return holds_; }
  // Links held on at `now`.
  std::size_t heldAt(TimePs now) const;
  // Links whose hold has ended by `now`, each once per hold (the daemon says
  // so once, as it said the hold once when it started).
  std::vector<fabric::LinkId> holdsEnded(TimePs now);

 private:
  struct History {
    std::deque<TimePs> offs;  // within the window
    TimePs holdUntil = -1;
    int streak = 0;           // holds in a row, for the exponential growth
    bool endPending = false;  // a hold started whose end holdsEnded() has not told
  };
  History& of(fabric::LinkId link);
  FlapLimits limits_;
  std::vector<History> links_;
  std::uint64_t holds_ = 0;
};

}  // namespace ebb::agent
