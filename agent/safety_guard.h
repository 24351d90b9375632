#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent/flap_damper.h"
#include "agent/in_band.h"
#include "common/status.h"
#include "common/time.h"
#include "fabric/connectivity.h"
#include "fabric/in_band_reach.h"
#include "fabric/link_states.h"
#include "fabric/minimal_tree.h"

namespace ebb::agent {

// Turn-off rate limits (for real fabrics, where every change makes the subnet
// manager re-sweep). Turning on is never limited: it is the safe direction.
struct RateLimits {
  int maxOffPerWindow = 0;  // 0 = unlimited
  TimePs windowPs = 0;      // the window of maxOffPerWindow
  TimePs minDwellPs = 0;    // a link stays on at least this long before it may go off again
  FlapLimits flap;          // a link that flaps is held on (anti-flap)
  Status validate() const;
};

// The last line of defence (docs/design.md §4, safety invariants 1 and 2): it keeps the
// process-wide view of which link directions are on and refuses any turn-off
// of a minimal-tree link, or one after which some host pair has no path.
class SafetyGuard {
 public:
  // `mt` is read at every check: its owner may change it in place (re-homing).
  SafetyGuard(const fabric::Topology& topo, const fabric::MinimalTree& mt,
              fabric::LinkStates initial);

  // Failed parts: proofs then ask only for the pairs the surviving cables can
  // connect (Connectivity::findDisconnectedPair(states, faults)).
  void setFaults(const fabric::FaultSet& faults) { faults_ = faults; }
  const fabric::FaultSet& faults() const { return faults_; }

  // OK, or E_INVALID saying why the direction must stay on. Does not change state.
  Status checkTurnOff(fabric::LinkId link, fabric::Direction dir);
  // The same for both directions at once (whole-link gating on InfiniBand).
  Status checkTurnOffLink(fabric::LinkId link);
  // On a fabric managed in-band (InfiniBand): checkTurnOffLink() then also
  // refuses a link whose loss would leave a switch that still has links on
  // out of reach of management, chooses the end to disable (gateEnd) and,
  // with Resilience::kSingleLink, proves that after any one link failure
  // recovery in-band reconnects every pair the surviving cables connect.
  void setInBand(InBandControl control);
  // In-band with Resilience::kSingleLink: the links ebb gated to turn on
  // again, besides `turningOn` (a re-homing's), so that a further single
  // failure can still be recovered from in-band (InBandReach::
  // linksForSingleFailure). Empty otherwise.
  std::vector<fabric::LinkId> linksForResilience(const std::vector<fabric::LinkId>& turningOn);
  // The end chosen for `link` by the last checkTurnOffLink() that passed (or
  // told by setGate): the port to disable, and the only one that can bring
  // the link back. nullopt when not in-band or not known.
  std::optional<fabric::PortId> gateEnd(fabric::LinkId link) const;
  // A link found disabled at start: which switch holds the disabled port.
  void setGate(fabric::LinkId link, fabric::SwitchId sw) { gate_.at(link.value()) = sw; }
  // Rate limits, checked by checkRate(); noteOff/noteOn keep the history it
  // reads (recordOff/recordOn only change the link-state view).
  void setRateLimits(RateLimits limits) {
    limits_ = limits;
    flap_.setLimits(limits.flap);
  }
  Status checkRate(fabric::LinkId link, TimePs now);
  void noteOff(fabric::LinkId link, TimePs now);
  // Turn-offs refused because a link flapped (holds started), and links held now.
  std::uint64_t flapHolds() const { return flap_.holds(); }
  std::size_t linksHeldOn(TimePs now) const { return flap_.heldAt(now); }
  // Links whose flap hold ended by `now`, each once per hold.
  std::vector<fabric::LinkId> flapHoldsEnded(TimePs now) { return flap_.holdsEnded(now); }
  void noteOn(fabric::LinkId link, TimePs now);
  void recordOn(fabric::LinkId link, fabric::Direction dir) {
    states_.set(link, dir, true);
    if (states_.isFullyOn(link)) gate_[link.value()] = {};  // nothing disabled any more
  }
  void recordOff(fabric::LinkId link, fabric::Direction dir) { states_.set(link, dir, false); }
  // A condition every turn-off needs beyond the proofs (the daemon's: a
  // master subnet manager, no re-enable pending): not OK refuses it, with
  // that status's message. Unset: none. Turn-ons are never gated.
  using TurnOffGate = std::function<Status()>;
  void setTurnOffGate(TurnOffGate gate) { gate_fn_ = std::move(gate); }
  // Proves the current view connected (tests call this after every change).
  Status checkAll();
  const fabric::LinkStates& states() const { return states_; }
  std::uint64_t refused() const { return refused_; }
  std::uint64_t checks() const { return checks_; }

 private:
  const fabric::Topology& topo_;
  const fabric::MinimalTree& mt_;
  fabric::LinkStates states_;
  fabric::Connectivity conn_;
  fabric::FaultSet faults_;
  fabric::FaultSet assumed_;
  std::optional<fabric::HostPair> disconnectedPair() {
    return faults_.empty() ? conn_.findDisconnectedPair(states_)
                           : conn_.findDisconnectedPair(states_, faults_);
  }
  Status refuse(Status s) {
    ++refused_;
    return s;
  }
  Status checkManagementReach(fabric::LinkId without);
  // In-band: picks the end of `link` to disable (gate_), or refuses.
  Status chooseGate(fabric::LinkId link);
  fabric::InBandView view(const fabric::LinkStates& states) const {
    return {&states, &faults_, &gate_, &inBand_->controllable, inBand_->root};
  }
  // The faults the single-failure proof assumes (assumed_): faults_, and
  // every switch that failures put out of reach (not reached over the links
  // on in `states`, with a failed link of its own). ebb cannot tell such a
  // switch from a dead one, so the proof counts on none of its gates.
  void assumeFaults(const fabric::LinkStates& states);
  fabric::InBandView assumedView(const fabric::LinkStates& states,
                                 const std::vector<fabric::SwitchId>& gates) const {
    return {&states, &assumed_, &gates, &inBand_->controllable, inBand_->root};
  }
  void forgetOffsBefore(TimePs now);
  std::optional<InBandControl> inBand_;
  fabric::InBandReach reach_;
  std::vector<fabric::SwitchId> gate_;  // per link: the switch holding its disabled port
  fabric::LinkStates trial_;            // states_ with the link being proven off
  RateLimits limits_;
  FlapDamper flap_;
  std::deque<TimePs> offTimes_;
  std::vector<TimePs> onSince_;  // per link: when it last came on (-1: never recorded)
  std::uint64_t refused_ = 0;
  std::uint64_t checks_ = 0;
  TurnOffGate gate_fn_;
};

}  // namespace ebb::agent
