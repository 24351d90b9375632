#include "fabric/topology_builder.h"

#include <gtest/gtest.h>

#include "fabric/minimal_tree.h"
#include "tests/fabric/hostless_leaf.h"

namespace ebb::fabric {
namespace {

// Two leaves under one spine, two hosts each.
TopologyBuilder smallTree(SwitchId* spineOut = nullptr) {
  TopologyBuilder b;
  SwitchId spine = b.addSwitch("spine", 0x10, 4);
  SwitchId l0 = b.addSwitch("leaf0", 0x11, 4);
  SwitchId l1 = b.addSwitch("leaf1", 0x12, 4);
  EXPECT_TRUE(b.connectSwitches({l0, 2}, {spine, 0}).isOk());
  EXPECT_TRUE(b.connectSwitches({l1, 2}, {spine, 1}).isOk());
  for (int h = 0; h < 4; ++h) {
    HostId id = b.addHost("h" + std::to_string(h), 0x100u + static_cast<unsigned>(h));
    EXPECT_TRUE(b.connectHost(id, 0, {h < 2 ? l0 : l1, static_cast<std::uint16_t>(h % 2)}).isOk());
  }
  if (spineOut) *spineOut = spine;
  return b;
}

TEST(TopologyBuilder, AssignsLevelsFromTheHostsUp) {
  SwitchId spine;
  TopologyBuilder b = smallTree(&spine);
  const Topology t = b.build().value();
  EXPECT_EQ(t.depth(), 2);
  EXPECT_EQ(t.sw(spine).level, 0);
  EXPECT_EQ(t.sw(t.findSwitch("leaf0").value()).level, 1);
  const Switch& leaf0 = t.sw(t.findSwitch("leaf0").value());
  EXPECT_EQ(leaf0.upPorts, std::vector<std::uint16_t>{2});
  EXPECT_EQ((leaf0.downPorts), (std::vector<std::uint16_t>{0, 1}));
  EXPECT_EQ(t.sw(spine).ports[0].role, PortRole::kDown);
  EXPECT_EQ(t.sw(spine).ports[3].role, PortRole::kUnused);
  EXPECT_TRUE(MinimalTree::build(t));
}

TEST(TopologyBuilder, ALeafWithoutHostsIsTakenForTheRootUnlessRootsAreGiven) {
  // From the hosts up, leaf2 is two hops above them: the one root.
  const Topology guessed = treeWithHostlessLeaf().build().value();
  EXPECT_EQ(guessed.depth(), 3);
  EXPECT_EQ(guessed.sw(guessed.findSwitch("leaf2").value()).level, 0);
  // Named roots: levels count down from them; leaf2 is a leaf.
  for (const std::vector<std::string>& roots :
       {std::vector<std::string>{"spine0", "spine1"}, std::vector<std::string>{"0x10", "0X11"}}) {
    TopologyBuilder b = treeWithHostlessLeaf();
    ASSERT_TRUE(b.setRoots(roots, "roots").isOk());
    const Topology t = b.build().value();
    EXPECT_EQ(t.depth(), 2);
    EXPECT_EQ(t.sw(t.findSwitch("spine1").value()).level, 0);
    EXPECT_EQ(t.sw(t.findSwitch("leaf2").value()).level, 1);
    EXPECT_EQ(t.sw(t.findSwitch("leaf2").value()).upPorts, (std::vector<std::uint16_t>{2, 3}));
    EXPECT_TRUE(MinimalTree::build(t));
  }
}

// GUID 0 is "no GUID": "0x0" names no switch, not the first without one.
TEST(TopologyBuilder, RootZeroNamesNoSwitchWithoutAGuid) {
  TopologyBuilder b;
  const SwitchId spine = b.addSwitch("spine", 0, 2);
  const SwitchId leaf = b.addSwitch("leaf", 0, 2);
  ASSERT_TRUE(b.connectSwitches({leaf, 1}, {spine, 0}).isOk());
  ASSERT_TRUE(b.connectHost(b.addHost("h", 0), 0, {leaf, 0}).isOk());
  const Status s = b.setRoots({"0x0"}, "f");
  EXPECT_NE(s.message().find("f: \"0x0\" names no switch of the fabric"), std::string::npos)
      << s.toString();
}

TEST(TopologyBuilder, BadRootsAreNamed) {
  const struct {
    std::vector<std::string> roots;
    ErrorCode code;
    const char* says;
  } cases[] = {
      {{"spine9"}, ErrorCode::kInvalidArgument, "f: \"spine9\" names no switch of the fabric"},
      {{"h0"}, ErrorCode::kInvalidArgument, "f: \"h0\" is a host, not a switch"},
      {{"spine0", "0x10"}, ErrorCode::kInvalidArgument, "f: switch spine0 is given twice"},
      {{"spine0", ""}, ErrorCode::kInvalidArgument, "f: an empty switch name"},
      {{"leaf0"},
       ErrorCode::kNotFatTree,
       "switch leaf0 has hosts at level 0 (level 0: the given roots), but switch leaf1 is at "
       "level 2: hosts hang off the lowest level only (are the roots the top switches?)"},
      {{"spine0", "leaf0"},
       ErrorCode::kNotFatTree,
       "cable leaf0[3] - spine0[1] joins two switches of level 0 (level 0: the given roots)"},
  };
  for (const auto& c : cases) {
    TopologyBuilder b = treeWithHostlessLeaf();
    Status s = b.setRoots(c.roots, "f");
    if (s.isOk()) s = b.build().status();
    EXPECT_EQ(s.code(), c.code) << s.toString();
    EXPECT_NE(s.message().find(c.says), std::string::npos) << s.message();
  }
}

TEST(TopologyBuilder, RejectsCablingErrors) {
  TopologyBuilder b;
  SwitchId a = b.addSwitch("a", 1, 2);
  SwitchId c = b.addSwitch("c", 2, 2);
  Status s = b.connectSwitches({a, 5}, {c, 0});
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("port 6 is out of range"), std::string::npos);
  EXPECT_TRUE(b.connectSwitches({a, 0}, {c, 0}).isOk());
  s = b.connectSwitches({a, 0}, {c, 1});
  EXPECT_NE(s.message().find("a[1] is cabled twice"), std::string::npos);
  s = b.connectSwitches({a, 1}, {a, 1});
  EXPECT_FALSE(s.isOk());
}

TEST(TopologyBuilder, RejectsNoHosts) {
  TopologyBuilder b;
  b.addSwitch("lonely", 1, 4);
  auto r = b.build();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFatTree);
}

TEST(TopologyBuilder, RejectsUncabledHost) {
  TopologyBuilder b = smallTree();
  b.addHost("floating", 0x999);
  auto r = b.build();
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("host floating is not cabled"), std::string::npos);
}

TEST(TopologyBuilder, RejectsCycleWithinALevel) {
  TopologyBuilder b;
  SwitchId spine0 = b.addSwitch("spine0", 1, 4);
  SwitchId spine1 = b.addSwitch("spine1", 2, 4);
  SwitchId leaf = b.addSwitch("leaf", 3, 4);
  ASSERT_TRUE(b.connectSwitches({leaf, 2}, {spine0, 0}).isOk());
  ASSERT_TRUE(b.connectSwitches({leaf, 3}, {spine1, 0}).isOk());
  ASSERT_TRUE(b.connectSwitches({spine0, 1}, {spine1, 1}).isOk());
  ASSERT_TRUE(b.connectHost(b.addHost("h", 9), 0, {leaf, 0}).isOk());
  auto r = b.build();
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("spine0[2] - spine1[2]"), std::string::npos);
  EXPECT_NE(r.status().message().find("same level"), std::string::npos);
}

TEST(TopologyBuilder, RejectsHostsAtDifferentDepths) {
  TopologyBuilder b = smallTree();
  // A host directly on the spine puts hosts at two depths.
  SwitchId spine = b.build().value().findSwitch("spine").value();
  TopologyBuilder b2 = smallTree();
  ASSERT_TRUE(b2.connectHost(b2.addHost("deep", 0x777), 0, {spine, 2}).isOk());
  auto r = b2.build();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFatTree);
  EXPECT_NE(r.status().message().find("hosts at different depths"), std::string::npos);
}

TEST(TopologyBuilder, RejectsSwitchWithoutPathUp) {
  // leaf0 - spine - leaf1, plus leaf2 - mid where mid has no up link but the
  // tallest branch is two levels: mid sits below the root level with no way up.
  TopologyBuilder b;
  SwitchId top = b.addSwitch("top", 1, 4);
  SwitchId midA = b.addSwitch("midA", 2, 4);
  SwitchId midB = b.addSwitch("midB", 3, 4);
  SwitchId leafA = b.addSwitch("leafA", 4, 4);
  SwitchId leafB = b.addSwitch("leafB", 5, 4);
  SwitchId leafC = b.addSwitch("leafC", 6, 4);
  ASSERT_TRUE(b.connectSwitches({leafA, 2}, {midA, 0}).isOk());
  ASSERT_TRUE(b.connectSwitches({midA, 2}, {top, 0}).isOk());
  ASSERT_TRUE(b.connectSwitches({leafB, 2}, {midA, 1}).isOk());
  ASSERT_TRUE(b.connectSwitches({leafB, 3}, {midB, 0}).isOk());
  ASSERT_TRUE(b.connectSwitches({leafC, 2}, {midB, 1}).isOk());
  for (SwitchId l : {leafA, leafB, leafC}) {
    ASSERT_TRUE(
        b.connectHost(b.addHost("h" + std::to_string(l.value()), 100 + l.value()), 0, {l, 0})
            .isOk());
  }
  auto r = b.build();
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("switch midB has no path up"), std::string::npos);
}

TEST(TopologyBuilder, RejectsDisconnectedFabric) {
  TopologyBuilder b = smallTree();
  SwitchId island = b.addSwitch("island", 0x50, 4);
  ASSERT_TRUE(b.connectHost(b.addHost("h9", 0x509), 0, {island, 0}).isOk());
  auto r = b.build();
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("not connected"), std::string::npos);
}

TEST(TopologyBuilder, RejectsMultiHomedHost) {
  TopologyBuilder b;
  SwitchId s = b.addSwitch("s", 1, 4);
  HostId h = b.addHost("h", 2);
  ASSERT_TRUE(b.connectHost(h, 0, {s, 0}).isOk());
  ASSERT_TRUE(b.connectHost(h, 1, {s, 1}).isOk());
  auto r = b.build();
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("single-homed"), std::string::npos);
}

}  // namespace
}  // namespace ebb::fabric
