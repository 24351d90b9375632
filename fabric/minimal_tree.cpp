#include "fabric/minimal_tree.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "fabric/leaf_reach.h"

namespace ebb::fabric {

namespace {

// reaches[s] = 1 iff switch s can reach `root` by ascending usable cables.
template <class Usable>
std::vector<std::uint8_t> reachesUpward(const Topology& t, SwitchId root, const Usable& usable) {
  std::vector<std::uint8_t> reaches(t.numSwitches(), 0);
  reaches[root.value()] = 1;
  for (int level = t.sw(root).level + 1; level < t.depth(); ++level) {
    for (SwitchId s : t.switchesAtLevel(level)) {
      for (std::uint16_t p : t.sw(s).upPorts) {
        if (usable(t.sw(s).ports[p].link) && reaches[t.peerOf({s, p}).sw.value()]) {
          reaches[s.value()] = 1;
          break;
        }
      }
    }
  }
  return reaches;
}

bool anyCable(LinkId) {
  return true;
}

// Root switches in a canonical order (GUID, then name), so the tree does not
// depend on the order in which a discovery listed the switches.
bool canonicalLess(const Topology& t, SwitchId a, SwitchId b) {
  const Switch& x = t.sw(a);
  const Switch& y = t.sw(b);
  return std::tie(x.guid, x.name, a) < std::tie(y.guid, y.name, b);
}

// Today's rule: the first root in canonical order that every leaf reaches upward.
SwitchId intactRoot(const Topology& t) {
  std::vector<SwitchId> roots = t.switchesAtLevel(0);
  std::sort(roots.begin(), roots.end(),
            [&](SwitchId a, SwitchId b) { return canonicalLess(t, a, b); });
  for (SwitchId candidate : roots) {
    const auto reaches = reachesUpward(t, candidate, anyCable);
    bool all = true;
    for (SwitchId leaf : t.switchesAtLevel(t.depth() - 1))
      all = all && reaches[leaf.value()];
    if (all) return candidate;
  }
  return SwitchId{};
}

}  // namespace

// The tree for a chosen root: each switch that reaches the root designates its
// lowest-numbered usable up port whose parent reaches the root; the tree is
// the designated chains from every leaf that reaches the root and keeps a
// host, plus the kept hosts' links.
template <class Usable, class Keep>
MinimalTree MinimalTree::assemble(const Topology& t, SwitchId root, const Usable& usable,
                                  const Keep& keepHost) {
  const auto reaches = reachesUpward(t, root, usable);
  MinimalTree mt;
  mt.root_ = root;
  mt.switchIn_.assign(t.numSwitches(), 0);
  mt.linkIn_.assign(t.numLinks(), 0);
  mt.upPort_.assign(t.numSwitches(), kNone);
  for (std::size_t s = 0; s < t.numSwitches(); ++s) {
    const SwitchId id(static_cast<std::uint32_t>(s));
    if (!reaches[s] || id == root) continue;
    for (std::uint16_t p : t.switches()[s].upPorts) {
      if (usable(t.sw(id).ports[p].link) && reaches[t.peerOf({id, p}).sw.value()]) {
        mt.upPort_[s] = p;
        break;
      }
    }
  }
  std::vector<std::uint8_t> leafKeeps(t.numSwitches(), 0);
  for (std::size_t h = 0; h < t.numHosts(); ++h) {
    const HostId id(static_cast<std::uint32_t>(h));
    if (keepHost(id) && reaches[t.leafOf(id).value()]) {
      leafKeeps[t.leafOf(id).value()] = 1;
      mt.linkIn_[t.host(id).link.value()] = 1;
      ++mt.numLinks_;
    }
  }
  // Walk the designated chains from every kept leaf up to the root.
  for (SwitchId leaf : t.switchesAtLevel(t.depth() - 1)) {
    if (!leafKeeps[leaf.value()]) continue;
    SwitchId s = leaf;
    while (!mt.switchIn_[s.value()]) {
      mt.switchIn_[s.value()] = 1;
      ++mt.numSwitches_;
      if (s == root) break;
      const std::uint16_t p = mt.upPort_[s.value()];
      const LinkId l = t.sw(s).ports[p].link;
      mt.linkIn_[l.value()] = 1;
      ++mt.numSwitchLinks_;
      s = t.peerOf({s, p}).sw;
    }
  }
  // Designated links of switches outside the MT are not MT links.
  for (std::size_t s = 0; s < t.numSwitches(); ++s) {
    if (!mt.switchIn_[s]) mt.upPort_[s] = kNone;
  }
  mt.numLinks_ += mt.numSwitchLinks_;
  return mt;
}

Result<MinimalTree> MinimalTree::build(const Topology& t) {
  const SwitchId root = intactRoot(t);
  if (!root.valid()) {
    return {ErrorCode::kNotFatTree,
            "no minimal tree: no root switch can be reached upward from every leaf switch"};
  }
  return assemble(t, root, anyCable, [](HostId) { return true; });
}

// Root rule (docs/mechanisms.md §3.1): among the switches that did not fail,
// the one whose surviving cables reach the most hosts descending (hosts whose
// own cable survives); ties go to the intact fabric's root, then to the
// highest level (lowest level number), then to the canonical order.
Rehomed MinimalTree::build(const Topology& t, const FaultSet& faults) {
  const auto cable = [&](LinkId l) { return faults.cableUsable(l); };
  const auto hostKept = [&](HostId h) { return faults.cableUsable(t.host(h).link); };

  LeafReach cables(t);
  cables.compute([&](LinkId l, Direction) { return cable(l); });
  std::vector<std::uint64_t> hostsOnLeaf(cables.numLeaves(), 0);
  for (std::size_t h = 0; h < t.numHosts(); ++h) {
    const HostId id(static_cast<std::uint32_t>(h));
    if (hostKept(id)) ++hostsOnLeaf[cables.leafIndex(t.leafOf(id))];
  }
  const SwitchId preferred = intactRoot(t);
  SwitchId root;
  std::uint64_t best = 0;
  for (std::size_t s = 0; s < t.numSwitches(); ++s) {
    const SwitchId id(static_cast<std::uint32_t>(s));
    if (faults.switchFailed(id)) continue;
    std::uint64_t hosts = 0;
    const LeafReach::Word* d = cables.down(id);
    for (std::size_t w = 0; w < cables.words(); ++w) {
      for (LeafReach::Word bits = d[w]; bits != 0; bits &= bits - 1)
        hosts += hostsOnLeaf[w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))];
    }
    if (hosts == 0 || hosts < best) continue;
    const bool better =
        !root.valid() || hosts > best || (id == preferred) ||
        (root != preferred && (t.sw(id).level < t.sw(root).level ||
                               (t.sw(id).level == t.sw(root).level && canonicalLess(t, id, root))));
    if (better) {
      root = id;
      best = hosts;
    }
  }

  Rehomed out;
  if (root.valid()) {
    out.tree = assemble(t, root, cable, hostKept);
  } else {
    out.tree.switchIn_.assign(t.numSwitches(), 0);
    out.tree.linkIn_.assign(t.numLinks(), 0);
    out.tree.upPort_.assign(t.numSwitches(), kNone);
  }

  // Cut off: outside the tree, and no up*/down* path over usable directions
  // to (sending) or from (receiving) any leaf with a spanned host.
  LeafReach usable(t);
  usable.compute([&](LinkId l, Direction d) { return faults.usable(l, d); });
  std::vector<LeafReach::Word> treeLeaves(usable.words(), 0);
  std::vector<LeafReach::Word> reachesTree(usable.words(), 0);  // leaves some tree leaf reaches
  for (std::size_t h = 0; h < t.numHosts(); ++h) {
    const HostId id(static_cast<std::uint32_t>(h));
    if (out.tree.containsLink(t.host(id).link))
      LeafReach::setBit(treeLeaves.data(), usable.leafIndex(t.leafOf(id)));
  }
  for (std::size_t i = 0; i < usable.numLeaves(); ++i) {
    if (!LeafReach::test(treeLeaves.data(), i)) continue;
    const LeafReach::Word* r = usable.reach(usable.leaf(i));
    for (std::size_t w = 0; w < usable.words(); ++w)
      reachesTree[w] |= r[w];
  }
  for (std::size_t h = 0; h < t.numHosts(); ++h) {
    const HostId id(static_cast<std::uint32_t>(h));
    const LinkId l = t.host(id).link;
    if (out.tree.containsLink(l)) continue;
    out.outside.push_back(id);
    const std::size_t i = usable.leafIndex(t.leafOf(id));
    bool sends = false;
    if (faults.usable(l, Direction::kUp)) {
      const LeafReach::Word* r = usable.reach(usable.leaf(i));
      for (std::size_t w = 0; w < usable.words() && !sends; ++w)
        sends = (r[w] & treeLeaves[w]) != 0;
    }
    const bool receives =
        faults.usable(l, Direction::kDown) && LeafReach::test(reachesTree.data(), i);
    if (!sends && !receives) out.cutOff.push_back(id);
    if (sends != receives) out.oneWay.push_back(id);
  }
  return out;
}

std::optional<std::uint16_t> MinimalTree::upPort(SwitchId s) const {
  const std::uint16_t p = upPort_[s.value()];
  if (p == kNone) return std::nullopt;
  return p;
}

}  // namespace ebb::fabric
