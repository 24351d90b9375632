#pragma once

// Brute-force references for the fault-aware fabric logic: valley-free
// reachability by explicit search over (switch, phase) states, written
// independently of LeafReach, and small topologies to test on.

#include <functional>
#include <vector>

#include "fabric/faults.h"
#include "fabric/link_states.h"
#include "fabric/topology.h"
#include "fabric/topology_builder.h"

namespace ebb::fabric::testing {

using UsableFn = std::function<bool(LinkId, Direction)>;

// reach[a][b]: host a has an up*/down* path to host b over the directions
// `usable` allows (a == b always true).
inline std::vector<std::vector<bool>> bruteHostReach(const Topology& t, const UsableFn& usable) {
  const std::size_t nh = t.numHosts();
  std::vector<std::vector<bool>> reach(nh, std::vector<bool>(nh, false));
  for (std::size_t a = 0; a < nh; ++a) {
    reach[a][a] = true;
    const LinkId al = t.host(HostId(static_cast<std::uint32_t>(a))).link;
    if (!usable(al, Direction::kUp)) continue;
    // Phase 0: still ascending; phase 1: descending (may never go up again).
    std::vector<std::vector<bool>> seen(2, std::vector<bool>(t.numSwitches(), false));
    std::vector<std::pair<SwitchId, int>> stack{{t.link(al).upper.sw, 0}};
    seen[0][t.link(al).upper.sw.value()] = true;
    while (!stack.empty()) {
      const auto [s, phase] = stack.back();
      stack.pop_back();
      const auto visit = [&](SwitchId next, int ph) {
        if (!seen[static_cast<std::size_t>(ph)][next.value()]) {
          seen[static_cast<std::size_t>(ph)][next.value()] = true;
          stack.emplace_back(next, ph);
        }
      };
      for (const Port& p : t.sw(s).ports) {
        if (p.role == PortRole::kUp && phase == 0 && usable(p.link, Direction::kUp)) {
          visit(t.link(p.link).upper.sw, 0);
        } else if (p.role == PortRole::kDown && usable(p.link, Direction::kDown)) {
          const Link& l = t.link(p.link);
          if (l.lowerIsHost) {
            reach[a][l.host.value()] = true;
          } else {
            visit(l.lower.sw, 1);
          }
        }
      }
    }
  }
  return reach;
}

inline UsableFn survivingFn(const FaultSet& f) {
  return [&f](LinkId l, Direction d) { return f.usable(l, d); };
}
inline UsableFn onAndSurvivingFn(const LinkStates& st, const FaultSet& f) {
  return [&st, &f](LinkId l, Direction d) { return st.isOn(l, d) && f.usable(l, d); };
}

// A 2-level fat tree that is not a k-ary n-tree: 3 spines, 4 leaves with 3, 1,
// 2 and 2 hosts, every leaf cabled to a different subset of the spines, and
// GUIDs that do not follow the ids (spine "sp1" has the lowest GUID but does
// not reach leaf "l2", so the root is "sp2").
inline Topology irregularTwoLevel() {
  TopologyBuilder b;
  const SwitchId sp0 = b.addSwitch("sp0", 30, 8);
  const SwitchId sp1 = b.addSwitch("sp1", 10, 8);
  const SwitchId sp2 = b.addSwitch("sp2", 20, 8);
  const std::vector<int> hostsOn{3, 1, 2, 2};
  const std::vector<std::vector<SwitchId>> spinesOf{
      {sp0, sp1, sp2}, {sp1, sp2}, {sp0, sp2}, {sp2, sp1}};
  std::vector<std::uint16_t> nextSpinePort(3, 0);
  std::uint64_t guid = 100;
  for (std::size_t i = 0; i < hostsOn.size(); ++i) {
    const SwitchId leaf = b.addSwitch("l" + std::to_string(i), 50 + i, 8);
    std::uint16_t port = 0;
    for (int h = 0; h < hostsOn[i]; ++h) {
      const HostId host = b.addHost("h" + std::to_string(i) + "_" + std::to_string(h), guid++);
      (void)b.connectHost(host, 0, {leaf, port++});
    }
    for (SwitchId spine : spinesOf[i]) {
      (void)b.connectSwitches({leaf, port++}, {spine, nextSpinePort[spine.value()]++});
    }
  }
  return b.build().value();
}

// 2-level, 3 spines ("a" lowest GUID), 4 leaves of one host each, every leaf
// cabled to every spine (spine port = leaf index, leaf port 1 + spine index).
inline Topology fullTwoLevel() {
  TopologyBuilder b;
  std::vector<SwitchId> spines;
  for (int s = 0; s < 3; ++s)
    spines.push_back(b.addSwitch(std::string(1, static_cast<char>('a' + s)),
                                 static_cast<std::uint64_t>(10 + s), 4));
  for (std::uint16_t i = 0; i < 4; ++i) {
    const SwitchId leaf = b.addSwitch("L" + std::to_string(i), 20u + i, 4);
    (void)b.connectHost(b.addHost("h" + std::to_string(i), 40u + i), 0, {leaf, 0});
    for (std::uint16_t s = 0; s < 3; ++s)
      (void)b.connectSwitches({leaf, static_cast<std::uint16_t>(1 + s)}, {spines[s], i});
  }
  return b.build().value();
}

// The link between a leaf and a spine, by name.
inline LinkId cableBetween(const Topology& t, const std::string& lower, const std::string& upper) {
  const SwitchId lo = t.findSwitch(lower).value();
  for (std::uint16_t p : t.sw(lo).upPorts) {
    const LinkId l = t.sw(lo).ports[p].link;
    if (t.sw(t.link(l).upper.sw).name == upper) return l;
  }
  return LinkId{};
}

}  // namespace ebb::fabric::testing
