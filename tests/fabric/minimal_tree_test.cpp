#include "fabric/minimal_tree.h"

#include <gtest/gtest.h>

#include "fabric/connectivity.h"
#include "fabric/kary_tree.h"

namespace ebb::fabric {
namespace {

// The paper's definition, written independently of MinimalTree::build.
bool paperMtSwitch(const KAryNTree& tree, SwitchId s) {
  const KAryLabel lab = tree.label(s);
  if (lab.level == tree.n() - 1) return true;
  for (int i = lab.level; i <= tree.n() - 2; ++i) {
    if (lab.w[static_cast<std::size_t>(i)] != 0) return false;
  }
  return true;
}

bool paperMtLink(const KAryNTree& tree, const Topology& t, LinkId id) {
  const Link& l = t.link(id);
  // All down links of MT switches, and the up link with index k of MT switches.
  if (paperMtSwitch(tree, l.upper.sw)) return true;
  return !l.lowerIsHost && paperMtSwitch(tree, l.lower.sw) && l.lower.index == tree.k();
}

TEST(MinimalTree, PaperCounts4Ary3Tree) {
  const Topology t = KAryNTree::make(4, 3).value().build();
  const MinimalTree mt = MinimalTree::build(t).value();
  EXPECT_EQ(mt.numSwitches(), 21u);
  EXPECT_EQ(mt.numSwitchLinks(), 20u);
  EXPECT_EQ(t.numLinks() - t.numHosts(), 128u);
  EXPECT_EQ(mt.root(), SwitchId(0));
}

TEST(MinimalTree, PaperCounts4Ary4Tree) {
  const Topology t = KAryNTree::make(4, 4).value().build();
  const MinimalTree mt = MinimalTree::build(t).value();
  EXPECT_EQ(t.numHosts(), 256u);
  EXPECT_EQ(t.numSwitches(), 256u);
  EXPECT_EQ(mt.numSwitches(), 85u);
  EXPECT_EQ(mt.numSwitchLinks(), 84u);
  EXPECT_EQ(t.numLinks() - t.numHosts(), 768u);
}

class MtShapes : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(MtShapes, MatchesThePaperDefinitionAndSpansTheHosts) {
  const auto [k, n] = GetParam();
  const KAryNTree tree = KAryNTree::make(k, n).value();
  const Topology t = tree.build();
  const MinimalTree mt = MinimalTree::build(t).value();
  std::size_t expectedSwitches = 0;
  for (SwitchId::rep_type s = 0; s < t.numSwitches(); ++s) {
    EXPECT_EQ(mt.containsSwitch(SwitchId(s)), paperMtSwitch(tree, SwitchId(s)))
        << t.sw(SwitchId(s)).name;
    expectedSwitches += paperMtSwitch(tree, SwitchId(s));
    if (mt.containsSwitch(SwitchId(s)) && t.sw(SwitchId(s)).level > 0) {
      EXPECT_EQ(mt.upPort(SwitchId(s)),
                std::optional<std::uint16_t>(static_cast<std::uint16_t>(k)));
    }
  }
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l) {
    EXPECT_EQ(mt.containsLink(LinkId(l)), paperMtLink(tree, t, LinkId(l)))
        << t.describeLink(LinkId(l));
  }
  // (k^n - 1) / (k - 1) switches; a tree over them has one link fewer.
  std::uint64_t kn = 1;
  for (int i = 0; i < n; ++i)
    kn *= static_cast<std::uint64_t>(k);
  EXPECT_EQ(mt.numSwitches(), (kn - 1) / static_cast<std::uint64_t>(k - 1));
  EXPECT_EQ(expectedSwitches, mt.numSwitches());
  EXPECT_EQ(mt.numSwitchLinks() + 1, mt.numSwitches());
  EXPECT_EQ(mt.numLinks(), mt.numSwitchLinks() + t.numHosts());

  // Spanning: with only MT links on, every pair is connected.
  Connectivity conn(t);
  const LinkStates onlyMt = LinkStates::onlyMinimalTree(t, mt);
  EXPECT_FALSE(conn.findDisconnectedPair(onlyMt).has_value());
  // Minimal: removing any MT switch link (either direction) disconnects a named pair.
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l) {
    const LinkId id(l);
    if (!mt.containsLink(id) || !t.isSwitchLink(id)) continue;
    for (Direction d : {Direction::kUp, Direction::kDown}) {
      LinkStates st = onlyMt;
      st.set(id, d, false);
      const auto pair = conn.findDisconnectedPair(st);
      ASSERT_TRUE(pair.has_value()) << t.describeLink(id);
      EXPECT_NE(pair->src, pair->dst);
    }
  }
}

std::vector<std::pair<int, int>> mtShapes() {
  std::vector<std::pair<int, int>> v;
  for (int k = 2; k <= 8; ++k)
    for (int n = 1; n <= 4; ++n)
      v.emplace_back(k, n);
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, MtShapes, ::testing::ValuesIn(mtShapes()), [](const auto& tpi) {
  return "k" + std::to_string(tpi.param.first) + "n" + std::to_string(tpi.param.second);
});

}  // namespace
}  // namespace ebb::fabric
