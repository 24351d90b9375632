#pragma once

// A deliberately naive all-pairs reference for up*/down* reachability, used
// only to cross-check fabric::Connectivity on small trees.

#include <vector>

#include "fabric/link_states.h"
#include "fabric/topology.h"

namespace ebb::fabric::testing {

inline bool naivePath(const Topology& t, const LinkStates& st, HostId src, HostId dst) {
  if (src == dst) return true;
  const LinkId sl = t.host(src).link;
  const LinkId dl = t.host(dst).link;
  if (!st.isOn(sl, Direction::kUp) || !st.isOn(dl, Direction::kDown)) return false;
  // Switches reachable ascending from src's leaf.
  std::vector<bool> up(t.numSwitches(), false);
  std::vector<SwitchId> stack{t.leafOf(src)};
  up[t.leafOf(src).value()] = true;
  while (!stack.empty()) {
    SwitchId s = stack.back();
    stack.pop_back();
    for (auto p : t.sw(s).upPorts) {
      LinkId l = t.sw(s).ports[p].link;
      SwitchId parent = t.link(l).upper.sw;
      if (st.isOn(l, Direction::kUp) && !up[parent.value()]) {
        up[parent.value()] = true;
        stack.push_back(parent);
      }
    }
  }
  // Walk from dst's leaf upward along links whose DOWN direction is on: any
  // switch found that is also in `up` is a turning point.
  std::vector<bool> seen(t.numSwitches(), false);
  stack = {t.leafOf(dst)};
  seen[t.leafOf(dst).value()] = true;
  while (!stack.empty()) {
    SwitchId s = stack.back();
    stack.pop_back();
    if (up[s.value()]) return true;
    for (auto p : t.sw(s).upPorts) {
      LinkId l = t.sw(s).ports[p].link;
      SwitchId parent = t.link(l).upper.sw;
      if (st.isOn(l, Direction::kDown) && !seen[parent.value()]) {
        seen[parent.value()] = true;
        stack.push_back(parent);
      }
    }
  }
  return false;
}

inline bool naiveAllConnected(const Topology& t, const LinkStates& st) {
  for (HostId::rep_type a = 0; a < t.numHosts(); ++a)
    for (HostId::rep_type b = 0; b < t.numHosts(); ++b)
      if (!naivePath(t, st, HostId(a), HostId(b))) return false;
  return true;
}

}  // namespace ebb::fabric::testing
