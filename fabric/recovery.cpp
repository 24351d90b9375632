#include "fabric/recovery.h"

#include <algorithm>

namespace ebb::fabric {

namespace {

class Restorer {
 public:
  Restorer(Connectivity& conn, const Topology& t, const LinkStates& states, const FaultSet& faults)
      : conn_(conn), t_(t), faults_(faults), work_(states), chosen_(t.numLinks(), 0) {}

  void turnOn(LinkId l) {
    if (!chosen_[l.value()]) {
      chosen_[l.value()] = 1;
      out_.push_back(l);
    }
    work_.setLink(l, true);
  }

  // Step 2 until the proof passes.
  void closeGaps() {
    const LeafReach& phys = conn_.surviving(faults_);
    std::vector<std::uint8_t> receives(phys.numLeaves(), 0);
    for (const Host& h : t_.hosts()) {
      if (faults_.usable(h.link, Direction::kDown))
        receives[phys.leafIndex(t_.link(h.link).upper.sw)] = 1;
    }
    while (const auto pair = conn_.findDisconnectedPair(work_, faults_)) {
      const LinkId la = t_.host(pair->src).link;
      const LinkId lb = t_.host(pair->dst).link;
      const bool hostLinkOff = !work_.isOn(la, Direction::kUp) || !work_.isOn(lb, Direction::kDown);
      if (!work_.isOn(la, Direction::kUp)) turnOn(la);
      if (!work_.isOn(lb, Direction::kDown)) turnOn(lb);
      if (hostLinkOff) continue;
      // The pair came from the leaf stage, so lastReach() is the reach over
      // the links on now.
      const LeafReach& now = conn_.lastReach();
      const std::size_t i = phys.leafIndex(t_.leafOf(pair->src));
      for (std::size_t j = 0; j < phys.numLeaves(); ++j) {
        if (receives[j] && phys.leafReaches(i, j) && !now.leafReaches(i, j)) addPath(phys, i, j);
      }
    }
  }

  std::vector<LinkId> result() {
    std::sort(out_.begin(), out_.end());
    return std::move(out_);
  }

 private:
  // One hop: the lowest-numbered port of `ports` whose link is usable in `d`
  // and whose far end still leads to the target (farHas), preferring one
  // already on in `d`. One exists: the target is in the switch's R (or D).
  template <class FarSet>
  LinkId pickHop(SwitchId s, const std::vector<std::uint16_t>& ports, Direction d,
                 const FarSet& farHas) const {
    LinkId fallback;
    for (std::uint16_t p : ports) {
      const LinkId l = t_.sw(s).ports[p].link;
      if (!faults_.usable(l, d) || !farHas(l)) continue;
      if (work_.isOn(l, d)) return l;
      if (!fallback.valid()) fallback = l;
    }
    return fallback;
  }

  void addPath(const LeafReach& phys, std::size_t i, std::size_t j) {
    SwitchId s = phys.leaf(i);
    while (!LeafReach::test(phys.down(s), j)) {
      const LinkId l = pickHop(s, t_.sw(s).upPorts, Direction::kUp, [&](LinkId x) {
        return LeafReach::test(phys.reach(t_.link(x).upper.sw), j);
      });
      if (!work_.isOn(l, Direction::kUp)) turnOn(l);
      s = t_.link(l).upper.sw;
    }
    while (s != phys.leaf(j)) {
      const LinkId l = pickHop(s, t_.sw(s).downPorts, Direction::kDown, [&](LinkId x) {
        return LeafReach::test(phys.down(t_.link(x).lower.sw), j);
      });
      if (!work_.isOn(l, Direction::kDown)) turnOn(l);
      s = t_.link(l).lower.sw;
    }
  }

  Connectivity& conn_;
  const Topology& t_;
  const FaultSet& faults_;
  LinkStates work_;
  std::vector<std::uint8_t> chosen_;
  std::vector<LinkId> out_;
};

}  // namespace

std::vector<LinkId> linksToRestore(Connectivity& conn, const Topology& t, const LinkStates& states,
                                   const FaultSet& faults, const MinimalTree& rehomed) {
  Restorer r(conn, t, states, faults);
  for (std::size_t l = 0; l < t.numLinks(); ++l) {
    const LinkId id(static_cast<std::uint32_t>(l));
    if (rehomed.containsLink(id) && !states.isFullyOn(id)) r.turnOn(id);
  }
  r.closeGaps();
  return r.result();
}

std::vector<LinkId> linksToRestore(const Topology& t, const LinkStates& states,
                                   const FaultSet& faults, const MinimalTree& rehomed) {
  Connectivity conn(t);
  return linksToRestore(conn, t, states, faults, rehomed);
}

}  // namespace ebb::fabric
