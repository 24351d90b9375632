#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabric/connectivity.h"
#include "fabric/faults.h"
#include "fabric/link_states.h"
#include "fabric/topology.h"

namespace ebb::fabric {

// A fabric controlled in-band from one management port (InfiniBand,
// docs/ib_agent.md "Single-failure resilience"). The port attaches at switch
// `root`; a Set reaches a switch only over switch links that are on both ways.
// A link is gated by disabling the port at one of its ends, its *gate*; only
// that end can bring it back, so only once the gate's switch is reached (and
// only where ebb may Set). Re-enabling a link puts its far end in reach too:
// recovery in-band is the closure of those two steps.
struct InBandView {
  const LinkStates* states = nullptr;  // which link directions are on
  const FaultSet* faults = nullptr;    // failed cables and switches
  // Per link: the switch holding the disabled port of a gated link; invalid
  // when unknown (such a link cannot be brought back in-band).
  const std::vector<SwitchId>* gate = nullptr;
  const std::vector<char>* controllable = nullptr;  // per switch; empty: every switch
  SwitchId root;
};

class InBandReach {
 public:
  explicit InBandReach(const Topology& topo);

  // Switches a Set reaches now: over links on both ways and usable, never `without`.
  const std::vector<char>& reachNow(const InBandView& v, LinkId without = {});

  // What recovery in-band can bring back if `failed` (a switch link, or
  // invalid for none) fails too: every gated link whose gate the closure
  // reaches is re-enabled. Returns the link states after that recovery.
  const LinkStates& recover(const InBandView& v, LinkId failed = {});
  // Of the last recover(): switches reached, and the gated usable links left
  // disabled (their gate out of reach, unknown or not controllable).
  const std::vector<char>& recovered() const { return seen_; }
  const std::vector<LinkId>& leftDisabled() const { return left_; }

  // The single-failure rule: nullopt when, for every switch link that is on
  // (and for no failure at all), recovery in-band reconnects every host pair
  // the surviving cables connect; else why not ("if S1_0_0[5] - S2_0_1[1]
  // fails, no up*/down* path from H3 to H60"). `baseline` (the same view
  // before the change being proven, or null) excuses what it already lacks: a
  // state degraded by earlier faults does not block every further change.
  std::optional<std::string> singleFailureGap(const InBandView& v, const InBandView* baseline,
                                              Connectivity& conn);

  // The links ebb gated to re-enable so that singleFailureGap(v, nullptr)
  // holds again (a fault can leave the gates where a further failure could
  // not be recovered from): for the first failure (none, then each bridge)
  // whose recovery falls short, one link ebb gated that the recovery leaves
  // disabled and whose gate a Set reaches now (one whose other end the
  // recovery reaches, if any); again until none falls short or nothing more
  // can be done. Works on copies of v's states and gates. Ascending.
  std::vector<LinkId> linksForSingleFailure(const InBandView& v, Connectivity& conn);

  // Switch links that are on, usable and reached from the root, whose loss
  // alone splits the switches reached over such links (bridges).
  std::vector<LinkId> bridges(const InBandView& v);

 private:
  bool controllable(const InBandView& v, SwitchId s) const {
    return v.controllable->empty() || (*v.controllable)[s.value()] != 0;
  }
  bool carries(const InBandView& v, LinkId l, LinkId failed) const;
  // Ordered pairs a recovery after `failed` leaves disconnected that the
  // surviving cables connect.
  std::uint64_t strandedPairs(const InBandView& v, LinkId failed, Connectivity& conn);
  std::optional<std::string> gapAfter(const InBandView& v, const InBandView* baseline,
                                      LinkId failed, Connectivity& conn);

  const Topology& topo_;
  std::vector<char> seen_;
  std::vector<SwitchId> stack_;
  std::vector<LinkId> left_;
  LinkStates after_;
  std::vector<std::uint32_t> disc_, low_;  // bridges(): discovery order, low link
};

}  // namespace ebb::fabric
