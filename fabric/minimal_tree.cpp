#include "fabric/minimal_tree.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

namespace ebb::fabric {

namespace {

// reaches[s] = 1 iff switch s can reach `root` by ascending links only.
std::vector<std::uint8_t> reachesUpward(const Topology& t, SwitchId root) {
  std::vector<std::uint8_t> reaches(t.numSwitches(), 0);
  reaches[root.value()] = 1;
  for (int level = 1; level < t.depth(); ++level) {
    for (SwitchId s : t.switchesAtLevel(level)) {
      for (std::uint16_t p : t.sw(s).upPorts) {
        if (reaches[t.peerOf({s, p}).sw.value()]) {
          reaches[s.value()] = 1;
          break;
        }
      }
    }
  }
  return reaches;
}

}  // namespace

Result<MinimalTree> MinimalTree::build(const Topology& t) {
  const auto& leaves = t.switchesAtLevel(t.depth() - 1);
  std::vector<std::uint8_t> reaches;
  SwitchId root;
  // Candidates in a canonical order (GUID, then name), so the tree does not
  // depend on the order in which a discovery listed the switches.
  std::vector<SwitchId> roots = t.switchesAtLevel(0);
  std::sort(roots.begin(), roots.end(), [&](SwitchId a, SwitchId b) {
    const Switch& x = t.sw(a);
    const Switch& y = t.sw(b);
    return std::tie(x.guid, x.name, a) < std::tie(y.guid, y.name, b);
  });
  for (SwitchId candidate : roots) {
    reaches = reachesUpward(t, candidate);
    bool all = true;
    for (SwitchId leaf : leaves)
      all = all && reaches[leaf.value()];
    if (all) {
      root = candidate;
      break;
    }
  }
  if (!root.valid()) {
    return {ErrorCode::kNotFatTree,
            "no minimal tree: no root switch can be reached upward from every leaf switch"};
  }
  MinimalTree mt;
  mt.root_ = root;
  mt.switchIn_.assign(t.numSwitches(), 0);
  mt.linkIn_.assign(t.numLinks(), 0);
  mt.upPort_.assign(t.numSwitches(), kNone);
  for (std::size_t s = 0; s < t.numSwitches(); ++s) {
    if (!reaches[s] || SwitchId(static_cast<std::uint32_t>(s)) == root) continue;
    for (std::uint16_t p : t.switches()[s].upPorts) {
      if (reaches[t.peerOf({SwitchId(static_cast<std::uint32_t>(s)), p}).sw.value()]) {
        mt.upPort_[s] = p;
        break;
      }
    }
  }
  // Walk the designated chains from every leaf up to the root.
  for (SwitchId leaf : leaves) {
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
  for (const Host& h : t.hosts())
    mt.linkIn_[h.link.value()] = 1;
  mt.numLinks_ = mt.numSwitchLinks_ + t.numHosts();
  return mt;
}

std::optional<std::uint16_t> MinimalTree::upPort(SwitchId s) const {
  const std::uint16_t p = upPort_[s.value()];
  if (p == kNone) return std::nullopt;
  return p;
}

}  // namespace ebb::fabric
