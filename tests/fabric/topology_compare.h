#pragma once

// Compares two topologies by names: same switches (guid, level, every port's
// peer by name and port), same hosts, same minimal tree.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "fabric/minimal_tree.h"
#include "fabric/topology.h"

namespace ebb::fabric::testing {

inline std::string peerName(const Topology& t, PortId p) {
  const Port& port = t.sw(p.sw).ports[p.index];
  if (!port.link.valid()) return "-";
  const Link& l = t.link(port.link);
  if (l.lowerIsHost)
    return t.host(l.host).name + "[" + std::to_string(t.host(l.host).portIndex + 1) + "]";
  const PortId q = t.peerOf(p);
  return t.sw(q.sw).name + "[" + std::to_string(q.ibPortNumber()) + "]";
}

inline std::set<std::string> mtLinkNames(const Topology& t, const MinimalTree& mt) {
  std::set<std::string> out;
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l) {
    if (mt.containsLink(LinkId(l))) out.insert(t.describeLink(LinkId(l)));
  }
  return out;
}

inline void expectSameFabric(const Topology& a, const Topology& b) {
  ASSERT_EQ(a.numSwitches(), b.numSwitches());
  ASSERT_EQ(a.numHosts(), b.numHosts());
  ASSERT_EQ(a.numLinks(), b.numLinks());
  EXPECT_EQ(a.depth(), b.depth());
  for (const Switch& s : a.switches()) {
    const auto other = b.findSwitch(s.name);
    ASSERT_TRUE(other.has_value()) << s.name;
    const Switch& o = b.sw(*other);
    EXPECT_EQ(s.guid, o.guid) << s.name;
    EXPECT_EQ(s.level, o.level) << s.name;
    ASSERT_EQ(s.ports.size(), o.ports.size()) << s.name;
    const SwitchId sa = *a.findSwitch(s.name);
    for (std::uint16_t p = 0; p < s.ports.size(); ++p) {
      EXPECT_EQ(s.ports[p].role, o.ports[p].role) << s.name << " port " << p + 1;
      EXPECT_EQ(peerName(a, {sa, p}), peerName(b, {*other, p})) << s.name << " port " << p + 1;
    }
  }
  for (const Host& h : a.hosts()) {
    const auto other = b.findHost(h.name);
    ASSERT_TRUE(other.has_value()) << h.name;
    EXPECT_EQ(h.guid, b.host(*other).guid);
  }
  const MinimalTree ma = MinimalTree::build(a).value();
  const MinimalTree mb = MinimalTree::build(b).value();
  EXPECT_EQ(a.sw(ma.root()).name, b.sw(mb.root()).name);
  EXPECT_EQ(mtLinkNames(a, ma), mtLinkNames(b, mb));
}

}  // namespace ebb::fabric::testing
