#include "fabric/in_band_reach.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace ebb::fabric {

InBandReach::InBandReach(const Topology& topo) : topo_(topo) {}

bool InBandReach::carries(const InBandView& v, LinkId l, LinkId failed) const {
  return l != failed && topo_.isSwitchLink(l) && v.faults->cableUsable(l) && v.states->isFullyOn(l);
}

const std::vector<char>& InBandReach::reachNow(const InBandView& v, LinkId without) {
  seen_.assign(topo_.numSwitches(), 0);
  stack_.clear();
  if (!v.root.valid() || v.faults->switchFailed(v.root)) return seen_;
  seen_[v.root.value()] = 1;
  stack_.push_back(v.root);
  while (!stack_.empty()) {
    const SwitchId s = stack_.back();
    stack_.pop_back();
    for (const Port& p : topo_.sw(s).ports) {
      if (p.role == PortRole::kUnused || !carries(v, p.link, without)) continue;
      const Link& L = topo_.link(p.link);
      const SwitchId peer = L.lower.sw == s ? L.upper.sw : L.lower.sw;
      if (seen_[peer.value()]) continue;
      seen_[peer.value()] = 1;
      stack_.push_back(peer);
    }
  }
  return seen_;
}

const LinkStates& InBandReach::recover(const InBandView& v, LinkId failed) {
  after_ = *v.states;
  seen_.assign(topo_.numSwitches(), 0);
  stack_.clear();
  left_.clear();
  if (v.root.valid() && !v.faults->switchFailed(v.root)) {
    seen_[v.root.value()] = 1;
    stack_.push_back(v.root);
  }
  while (!stack_.empty()) {
    const SwitchId s = stack_.back();
    stack_.pop_back();
    for (const Port& p : topo_.sw(s).ports) {
      if (p.role == PortRole::kUnused) continue;
      const LinkId l = p.link;
      if (l == failed || !topo_.isSwitchLink(l) || !v.faults->cableUsable(l)) continue;
      if (!after_.isFullyOn(l)) {
        // Gated: only its gate can bring it back. Reached from the other
        // end first, it waits until the gate's switch is popped.
        if ((*v.gate)[l.value()] != s || !controllable(v, s)) continue;
        after_.setLink(l, true);
      }
      const Link& L = topo_.link(l);
      const SwitchId peer = L.lower.sw == s ? L.upper.sw : L.lower.sw;
      if (seen_[peer.value()]) continue;
      seen_[peer.value()] = 1;
      stack_.push_back(peer);
    }
  }
  for (std::size_t i = 0; i < topo_.numLinks(); ++i) {
    const LinkId l(static_cast<LinkId::rep_type>(i));
    if (l != failed && topo_.isSwitchLink(l) && v.faults->cableUsable(l) && !after_.isFullyOn(l))
      left_.push_back(l);
  }
  return after_;
}

// Tarjan's bridges, iteratively, over the switch links that carry Sets, from
// the root. Parallel cables are distinct edges: only the edge arrived by is
// skipped, so a doubled cable is never a bridge.
std::vector<LinkId> InBandReach::bridges(const InBandView& v) {
  std::vector<LinkId> out;
  const std::size_t n = topo_.numSwitches();
  disc_.assign(n, 0);
  low_.assign(n, 0);
  if (!v.root.valid() || v.faults->switchFailed(v.root)) return out;
  struct Frame {
    SwitchId s;
    LinkId via;
    std::size_t next = 0;
  };
  std::vector<Frame> frames{{v.root, LinkId{}, 0}};
  std::uint32_t clock = 1;
  disc_[v.root.value()] = low_[v.root.value()] = clock++;
  while (!frames.empty()) {
    Frame& f = frames.back();
    const auto& ports = topo_.sw(f.s).ports;
    if (f.next < ports.size()) {
      const Port& p = ports[f.next++];
      if (p.role == PortRole::kUnused || p.link == f.via || !carries(v, p.link, LinkId{})) continue;
      const Link& L = topo_.link(p.link);
      const SwitchId peer = L.lower.sw == f.s ? L.upper.sw : L.lower.sw;
      if (disc_[peer.value()] != 0) {
        low_[f.s.value()] = std::min(low_[f.s.value()], disc_[peer.value()]);
        continue;
      }
      disc_[peer.value()] = low_[peer.value()] = clock++;
      frames.push_back({peer, p.link, 0});
      continue;
    }
    const Frame done = f;
    frames.pop_back();
    if (frames.empty()) break;
    const SwitchId parent = frames.back().s;
    low_[parent.value()] = std::min(low_[parent.value()], low_[done.s.value()]);
    if (low_[done.s.value()] > disc_[parent.value()]) out.push_back(done.via);
  }
  return out;
}

std::uint64_t InBandReach::strandedPairs(const InBandView& v, LinkId failed, Connectivity& conn) {
  FaultSet faults = *v.faults;
  if (failed.valid()) faults.failLink(failed);
  return conn.countDisconnectedPairs(recover(v, failed), faults);
}

std::optional<std::string> InBandReach::gapAfter(const InBandView& v, const InBandView* baseline,
                                                 LinkId failed, Connectivity& conn) {
  recover(v, failed);
  const bool allReached = std::all_of(seen_.begin(), seen_.end(), [](char c) { return c != 0; });
  if (allReached && left_.empty()) return std::nullopt;  // every cable can be on again
  if (!failed.valid()) {
    // No failure: nothing ebb gated may become impossible to bring back
    // (the restore on exit needs every one of them).
    std::vector<LinkId> left = left_;
    if (baseline) {
      recover(*baseline, failed);
      std::erase_if(
          left, [&](LinkId l) { return std::find(left_.begin(), left_.end(), l) != left_.end(); });
    }
    for (LinkId l : left) {
      if (!(*v.gate)[l.value()].valid()) continue;  // not gated by ebb
      return fmt::format("{} could not be re-enabled: its disabled end {} would be out of reach",
                         topo_.describeLink(l), topo_.sw((*v.gate)[l.value()]).name);
    }
    return std::nullopt;
  }
  const std::uint64_t stranded = strandedPairs(v, failed, conn);
  if (stranded == 0) return std::nullopt;
  if (baseline && stranded <= strandedPairs(*baseline, failed, conn)) return std::nullopt;
  FaultSet faults = *v.faults;
  faults.failLink(failed);
  const auto pair = conn.findDisconnectedPair(recover(v, failed), faults);
  return fmt::format("if {} fails, recovery in-band leaves {}", topo_.describeLink(failed),
                     pair ? conn.describe(*pair) : fmt::format("{} pairs apart", stranded));
}

std::vector<LinkId> InBandReach::linksForSingleFailure(const InBandView& v, Connectivity& conn) {
  LinkStates states = *v.states;
  std::vector<SwitchId> gates = *v.gate;
  InBandView w = v;
  w.states = &states;
  w.gate = &gates;
  const std::vector<char> reachable = reachNow(w);
  std::vector<LinkId> out;
  // Lifts one gate a recovery after `failed` leaves that ebb can lift now
  // (its own, where a Set reaches): first one whose other end that recovery
  // reaches, so the recovery crosses it into what it could not reach; false
  // if there is none. One at a time: a recovery usually needs one way in.
  const auto liftOne = [&](LinkId failed) {
    recover(w, failed);
    std::optional<LinkId> pick;
    for (LinkId l : left_) {
      const SwitchId gate = gates[l.value()];
      if (!gate.valid() || !controllable(w, gate) || !reachable[gate.value()]) continue;
      const Link& L = topo_.link(l);
      const SwitchId other = L.lower.sw == gate ? L.upper.sw : L.lower.sw;
      if (seen_[other.value()]) {
        pick = l;
        break;
      }
      if (!pick) pick = l;
    }
    if (!pick) return false;
    states.setLink(*pick, true);
    gates[pick->value()] = SwitchId{};
    out.push_back(*pick);
    return true;
  };
  // A shortfall nothing can lift now (a gate on a switch out of reach) must
  // not hide one behind it that something can: every failure is looked at.
  for (std::size_t round = 0; round <= topo_.numLinks(); ++round) {
    bool lifted = gapAfter(w, nullptr, LinkId{}, conn) && liftOne(LinkId{});
    if (!lifted) {
      for (LinkId f : bridges(w)) {
        if (gapAfter(w, nullptr, f, conn) && liftOne(f)) {
          lifted = true;
          break;
        }
      }
    }
    if (!lifted) break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> InBandReach::singleFailureGap(const InBandView& v,
                                                         const InBandView* baseline,
                                                         Connectivity& conn) {
  if (auto gap = gapAfter(v, baseline, LinkId{}, conn)) return gap;
  // A link that is not a bridge leaves every switch reached as before, so
  // recovery is the same as with no failure (just proven): only bridges count.
  for (LinkId f : bridges(v)) {
    if (auto gap = gapAfter(v, baseline, f, conn)) return gap;
  }
  return std::nullopt;
}

}  // namespace ebb::fabric
