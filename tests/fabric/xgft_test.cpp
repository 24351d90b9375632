// Extended generalised fat trees (docs/fabric.md, "Generalised fat trees"):
// counts for several shapes including tapered ones, the wiring rule, the
// minimal tree, a k-ary n-tree built as an XGFT against the native builder,
// and bad shapes.
#include "fabric/xgft.h"

#include <gtest/gtest.h>

#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "tests/fabric/topology_compare.h"

namespace ebb::fabric {
namespace {

struct XgftShape {
  std::vector<std::uint32_t> m, w;
  std::uint64_t hosts;
  std::vector<std::uint64_t> perLevel;  // switches, ebb level 0 (roots) first
  std::uint64_t switchLinks;
};

// Hand-counted: hosts = prod m; switches at XGFT level i = prod_{j>i} m_j x
// prod_{j<=i} w_j; links between levels i-1 and i = switches(i) x m_i.
std::vector<XgftShape> xgftShapes() {
  return {
      {{4, 4}, {1, 4}, 16, {4, 4}, 16},                // 4-ary 2-tree
      {{4, 4, 4}, {1, 4, 4}, 64, {16, 16, 16}, 128},   // 4-ary 3-tree
      {{8, 4}, {1, 2}, 32, {2, 4}, 8},                 // tapered 4:1 (8 down, 2 up per leaf)
      {{6, 3, 2}, {1, 2, 3}, 36, {6, 4, 6}, 12 + 12},  // mixed radices, tapered 3:1 at leaves
      {{3, 5}, {1, 1}, 15, {1, 5}, 5},                 // a tree (one root, no path diversity)
      {{5}, {1}, 5, {1}, 0},                           // one switch
  };
}

TEST(Xgft, CountsHostsSwitchesAndLinksPerLevel) {
  for (const XgftShape& s : xgftShapes()) {
    const Xgft x = Xgft::make(s.m, s.w).value();
    const Topology t = x.build();
    SCOPED_TRACE(x.describe());
    EXPECT_EQ(x.numHosts(), s.hosts);
    EXPECT_EQ(t.numHosts(), s.hosts);
    ASSERT_EQ(t.depth(), static_cast<int>(s.m.size()));
    std::uint64_t total = 0;
    for (int l = 0; l < t.depth(); ++l) {
      EXPECT_EQ(t.switchesAtLevel(l).size(), s.perLevel[static_cast<std::size_t>(l)]) << l;
      total += s.perLevel[static_cast<std::size_t>(l)];
    }
    EXPECT_EQ(x.numSwitches(), total);
    EXPECT_EQ(t.numLinks(), s.hosts + s.switchLinks);
    // Every switch of XGFT level i has m_i down and w_(i+1) up links.
    for (const Switch& sw : t.switches()) {
      const auto i = static_cast<std::size_t>(t.depth() - sw.level);  // XGFT level, 1 = leaves
      EXPECT_EQ(sw.downPorts.size(), s.m[i - 1]) << sw.name;
      EXPECT_EQ(sw.upPorts.size(), i < s.m.size() ? s.w[i] : 0u) << sw.name;
    }
    // The minimal tree reaches every host with one up link per tree switch.
    const MinimalTree mt = MinimalTree::build(t).value();
    std::size_t inTree = 0;
    for (LinkId::rep_type l = 0; l < t.numLinks(); ++l)
      inTree += mt.containsLink(LinkId(l)) ? 1u : 0u;
    std::uint64_t expectTree = s.hosts;  // host links, then one subtree per node below the root
    std::uint64_t subtrees = 1;
    for (std::size_t i = s.m.size(); i-- > 1;) {
      subtrees *= s.m[i];
      expectTree += subtrees;
    }
    EXPECT_EQ(inTree, expectTree);
  }
}

// Nodes of levels i - 1 and i are linked iff their labels differ at digit i
// only: on the mixed shape, each level-2 switch reaches m_2 = 3 leaves that
// share its digit 3, and the leaves' parents share the leaf's digit 3.
TEST(Xgft, WiringFollowsTheLabels) {
  const Topology t = Xgft::make({6, 3, 2}, {1, 2, 3}).value().build();
  // Names S<level>_<d3>_<d2>; level 1 (XGFT level 2) digit 3 over m_3 = 2,
  // digit 2 over w_2 = 2; leaves (level 2): digit 3 over 2, digit 2 over 3.
  const Switch& mid = t.sw(*t.findSwitch("S1_1_0"));
  ASSERT_EQ(mid.downPorts.size(), 3u);
  for (std::uint16_t p : mid.downPorts) {
    const std::string child = testing::peerName(t, {*t.findSwitch("S1_1_0"), p});
    EXPECT_EQ(child.rfind("S2_1_", 0), 0u) << child;
  }
  // A root (digit 3 over w_3 = 3, digit 2 over w_2 = 2) reaches one
  // level-1 switch per digit-3 value (m_3 = 2) with the same digit 2, at
  // that switch's up port m_2 + y = 3 + 2 (IB port 6).
  const SwitchId root = *t.findSwitch("S0_2_1");
  EXPECT_EQ(testing::peerName(t, {root, 0}), "S1_0_1[6]");
  EXPECT_EQ(testing::peerName(t, {root, 1}), "S1_1_1[6]");
}

// XGFT(n; k..k; 1, k..k) with 2k ports is KAryNTree(k, n), name for name and
// port for port, including its labels and minimal tree.
TEST(Xgft, AKAryNTreeBuiltAsAnXgftIsTheNativeOne) {
  for (auto [k, n] : {std::pair{2, 3}, std::pair{4, 3}, std::pair{3, 4}, std::pair{4, 1}}) {
    std::vector<std::uint32_t> m(static_cast<std::size_t>(n), static_cast<std::uint32_t>(k));
    std::vector<std::uint32_t> w(static_cast<std::size_t>(n), static_cast<std::uint32_t>(k));
    w[0] = 1;
    const Topology x = Xgft::make(m, w, 2 * static_cast<std::uint32_t>(k)).value().build();
    const Topology native = KAryNTree::make(k, n).value().build();
    SCOPED_TRACE(std::to_string(k) + "-ary " + std::to_string(n) + "-tree");
    testing::expectSameFabric(native, x);
    ASSERT_TRUE(x.isKAry());
    EXPECT_EQ(x.k(), k);
    EXPECT_EQ(x.n(), n);
    for (std::uint32_t s = 0; s < native.numSwitches(); ++s) {
      EXPECT_EQ(x.sw(SwitchId(s)).name, native.sw(SwitchId(s)).name);  // same ids too
      EXPECT_EQ(x.label(SwitchId(s)).w, native.label(SwitchId(s)).w);
    }
    for (LinkId::rep_type l = 0; l < native.numLinks(); ++l)
      EXPECT_EQ(x.describeLink(LinkId(l)), native.describeLink(LinkId(l)));
  }
  // With its own port count (2k is not the least) it is not marked k-ary.
  EXPECT_FALSE(Xgft::make({4, 4}, {1, 4}, 10).value().build().isKAry());
}

// Seed 004's Table V fabric as the closest XGFT: 4 608 hosts, 24 per leaf,
// 48-port switches, full bisection.
TEST(Xgft, TheTableVFatTree) {
  const Xgft x = Xgft::parse("3:24,24,8:1,24,24", 48).value();
  EXPECT_EQ(x.numHosts(), 4608u);
  EXPECT_EQ(x.switchesAt(1), 192u);
  EXPECT_EQ(x.switchesAt(2), 192u);
  EXPECT_EQ(x.switchesAt(3), 576u);
  EXPECT_EQ(x.describe(), "XGFT(3; 24,24,8; 1,24,24)");
  const Topology t = x.build();
  EXPECT_EQ(t.numHosts(), 4608u);
  EXPECT_EQ(t.sw(t.switchesAtLevel(2).front()).ports.size(), 48u);
}

TEST(Xgft, BadShapesNameTheRule) {
  const std::pair<const char*, const char*> cases[] = {
      {"3:4,4:1,4,4", "H = 3 but m has 2 entries"},
      {"2:4,4:2,4", "w_1 = 2"},
      {"2:4,0:1,4", "m_2 = 0"},
      {"2:4,x:1,4", "'x' is not a whole number"},
      {"0:4:1", "not a level count"},
      {"4,4:1,4", "the form is H:m1"},
      {"2:4096,8192:1,4", "exceeds the limit of 16777216 hosts"},
      {"1:1:1", "needs at least 2 hosts"},
      {"2:1,1:1,1", "needs at least 2 hosts"},
      {"2:40000,2:1,40000", "more than 65535"},
  };
  for (const auto& [spec, what] : cases) {
    const Result<Xgft> x = Xgft::parse(spec);
    ASSERT_FALSE(x) << spec;
    EXPECT_NE(x.status().message().find(what), std::string::npos)
        << spec << ": " << x.status().message();
  }
  const Result<Xgft> few = Xgft::make({4, 4}, {1, 4}, 6);
  ASSERT_FALSE(few);
  EXPECT_NE(few.status().message().find("at least 8"), std::string::npos) << few.status().message();
  const Result<Xgft> big = Xgft::make({4, 4, 4}, {1, 60000, 60000}, 0, 1000, "--max-switches");
  ASSERT_FALSE(big);
  EXPECT_NE(big.status().message().find("more than 1000 switches"), std::string::npos)
      << big.status().message();
  EXPECT_NE(big.status().message().find("--max-switches"), std::string::npos);
  // Levels: names and labels grow with them (20 000 levels took 1.6 GB for 2
  // hosts); 32 are built, 33 refused.
  std::vector<std::uint32_t> m(33, 1), w(33, 1);
  m[0] = 2;
  const Result<Xgft> deep = Xgft::make(m, w);
  ASSERT_FALSE(deep);
  EXPECT_NE(deep.status().message().find("h = 33 levels (entries of m), more than the 32"),
            std::string::npos)
      << deep.status().message();
  m.pop_back();
  w.pop_back();
  EXPECT_TRUE(Xgft::make(m, w)) << "32 levels";
  // Ids are 32-bit: a raised limit stops there.
  const Result<Xgft> ids = Xgft::make({2, 2, 2, 2}, {1, 2000, 2000, 2000}, 0, 10'000'000'000);
  ASSERT_FALSE(ids);
  EXPECT_NE(ids.status().message().find("more than 4294967295 switches"), std::string::npos)
      << ids.status().message();
}

}  // namespace
}  // namespace ebb::fabric
