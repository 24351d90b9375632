// Re-homing the minimal tree over the surviving cables (docs/mechanisms.md §3.1).
#include <gtest/gtest.h>

#include "fabric/connectivity.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "fabric/recovery.h"
#include "tests/fabric/fault_reference.h"

namespace ebb::fabric {
namespace {

std::vector<HostId> hostsOf(const Topology& t, SwitchId leaf) {
  std::vector<HostId> v;
  for (HostId::rep_type h = 0; h < t.numHosts(); ++h)
    if (t.leafOf(HostId(h)) == leaf) v.push_back(HostId(h));
  return v;
}

// States after applying linksToRestore to `before`.
LinkStates restored(const Topology& t, LinkStates before, const FaultSet& f,
                    const MinimalTree& mt) {
  for (LinkId l : linksToRestore(t, before, f, mt))
    before.setLink(l, true);
  return before;
}

void expectIntactEqualsToday(const Topology& t) {
  const MinimalTree today = MinimalTree::build(t).value();
  const Rehomed r = MinimalTree::build(t, FaultSet(t));
  EXPECT_TRUE(r.tree == today);
  EXPECT_EQ(r.tree.root(), today.root());
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l)
    EXPECT_EQ(r.tree.containsLink(LinkId(l)), today.containsLink(LinkId(l)));
  EXPECT_TRUE(r.outside.empty());
  EXPECT_TRUE(r.cutOff.empty());
  EXPECT_TRUE(
      linksToRestore(t, LinkStates::onlyMinimalTree(t, today), FaultSet(t), r.tree).empty());
}

class IntactKAry : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(IntactKAry, RehomingWithoutFaultsIsTodaysTree) {
  const auto [k, n] = GetParam();
  expectIntactEqualsToday(KAryNTree::make(k, n).value().build());
}

INSTANTIATE_TEST_SUITE_P(Shapes, IntactKAry,
                         ::testing::Values(std::pair{2, 3}, std::pair{4, 3}, std::pair{4, 4},
                                           std::pair{8, 2}, std::pair{3, 1}),
                         [](const auto& tpi) {
                           return "k" + std::to_string(tpi.param.first) + "n" +
                                  std::to_string(tpi.param.second);
                         });

TEST(Rehome, IntactIrregularTreeIsTodaysTree) {
  const Topology t = testing::irregularTwoLevel();
  EXPECT_EQ(t.sw(MinimalTree::build(t).value().root()).name, "sp2");
  expectIntactEqualsToday(t);
}

TEST(Rehome, ALeafMtUpLinkFailsAndAnotherUpLinkTakesOver) {
  const Topology t = KAryNTree::make(4, 3).value().build();
  const MinimalTree before = MinimalTree::build(t).value();
  const SwitchId leaf = t.findSwitch("S2_1_2").value();
  const LinkId dead = t.sw(leaf).ports[*before.upPort(leaf)].link;
  FaultSet f(t);
  f.failLink(dead);
  const Rehomed r = MinimalTree::build(t, f);
  // A k-ary n-tree is a delta network: S0_0_0 had one path to the leaf and
  // lost it, so the root moves to the first root that still reaches all hosts.
  EXPECT_EQ(t.sw(r.tree.root()).name, "S0_0_1");
  EXPECT_FALSE(r.tree.containsLink(dead));
  ASSERT_TRUE(r.tree.upPort(leaf).has_value());
  EXPECT_NE(*r.tree.upPort(leaf), *before.upPort(leaf));
  EXPECT_TRUE(r.outside.empty());
  EXPECT_TRUE(r.cutOff.empty());
  EXPECT_EQ(r.tree.numSwitchLinks() + 1, r.tree.numSwitches());
  Connectivity conn(t);
  EXPECT_FALSE(conn.findDisconnectedPair(LinkStates::onlyMinimalTree(t, r.tree), f));
  // From the old MT-only state, restoring exactly the new tree's missing links suffices.
  const LinkStates old = LinkStates::onlyMinimalTree(t, before);
  const auto restore = linksToRestore(t, old, f, r.tree);
  for (LinkId l : restore)
    EXPECT_TRUE(r.tree.containsLink(l)) << t.describeLink(l);
  EXPECT_FALSE(restore.empty());
  EXPECT_FALSE(conn.findDisconnectedPair(restored(t, old, f, r.tree), f));
}

TEST(Rehome, OneDirectionFailedKeepsTheCableOutOfTheTree) {
  const Topology t = KAryNTree::make(4, 3).value().build();
  const MinimalTree before = MinimalTree::build(t).value();
  const SwitchId leaf = t.findSwitch("S2_3_0").value();
  const LinkId half = t.sw(leaf).ports[*before.upPort(leaf)].link;
  FaultSet f(t);
  f.failLink(half, Direction::kDown);
  const Rehomed r = MinimalTree::build(t, f);
  EXPECT_FALSE(r.tree.containsLink(half));
  EXPECT_TRUE(r.outside.empty());
  Connectivity conn(t);
  EXPECT_FALSE(conn.findDisconnectedPair(LinkStates::onlyMinimalTree(t, r.tree), f));
}

TEST(Rehome, TheRootFailsAndTheNextRootTakesOver) {
  const Topology t = KAryNTree::make(4, 3).value().build();
  const MinimalTree before = MinimalTree::build(t).value();
  FaultSet f(t);
  f.failSwitch(t, before.root());
  const Rehomed r = MinimalTree::build(t, f);
  // Every root still reaches every host: the lowest (GUID, name, id) wins.
  EXPECT_EQ(t.sw(r.tree.root()).name, "S0_0_1");
  EXPECT_TRUE(r.outside.empty());
  Connectivity conn(t);
  EXPECT_EQ(conn.countCutPairs(f), 0u);
  const LinkStates old = LinkStates::onlyMinimalTree(t, before);
  EXPECT_TRUE(conn.findDisconnectedPair(old, f).has_value());
  EXPECT_FALSE(conn.findDisconnectedPair(restored(t, old, f, r.tree), f));
}

TEST(Rehome, TheRootLosesLeavesAndARootReachingMoreHostsWins) {
  // 2-level 4-ary: fail the MT root's cables to leaves 0 and 1; every other
  // root still reaches all 16 hosts, so the root moves rather than shrinking.
  const Topology t = KAryNTree::make(4, 2).value().build();
  const MinimalTree before = MinimalTree::build(t).value();
  FaultSet f(t);
  for (const char* leaf : {"S1_0", "S1_1"})
    f.failLink(testing::cableBetween(t, leaf, t.sw(before.root()).name));
  const Rehomed r = MinimalTree::build(t, f);
  EXPECT_EQ(t.sw(r.tree.root()).name, "S0_1");
  EXPECT_TRUE(r.outside.empty());
}

TEST(Rehome, ALeafLosesEveryUpCableAndOnlyItsHostsAreCutOff) {
  const Topology t = KAryNTree::make(4, 3).value().build();
  const MinimalTree before = MinimalTree::build(t).value();
  const SwitchId leaf = t.findSwitch("S2_0_0").value();  // on the MT root's chain
  FaultSet f(t);
  for (std::uint16_t p : t.sw(leaf).upPorts)
    f.failLink(t.sw(leaf).ports[p].link);
  const Rehomed r = MinimalTree::build(t, f);
  const std::vector<HostId> lost = hostsOf(t, leaf);
  EXPECT_EQ(r.outside, lost);
  EXPECT_EQ(r.cutOff, lost);
  EXPECT_EQ(r.tree.root(), before.root());
  EXPECT_FALSE(r.tree.containsSwitch(leaf));
  Connectivity conn(t);
  const std::uint64_t n = t.numHosts();
  const std::uint64_t c = lost.size();
  // Pairs among the leaf's own hosts still work (through the leaf).
  EXPECT_EQ(conn.countCutPairs(f), 2 * c * (n - c));
  EXPECT_TRUE(conn.connectable(lost[0], lost[1], f));
  const LinkStates after = restored(t, LinkStates::onlyMinimalTree(t, before), f, r.tree);
  EXPECT_FALSE(conn.findDisconnectedPair(after, f));
}

// Every root of a 2-ary 3-tree fails: two pods of four hosts, equal. The
// tie-break picks the first pod's top switch (canonical order) as the root
// of the main part; the other pod's hosts are the ones cut off, and the
// pairs within each pod still connect.
TEST(Rehome, AnEvenSplitCutsOffThePartTheTieBreakDidNotPick) {
  const Topology t = KAryNTree::make(2, 3).value().build();
  FaultSet f(t);
  for (const char* root : {"S0_0_0", "S0_0_1", "S0_1_0", "S0_1_1"})
    f.failSwitch(t, t.findSwitch(root).value());
  const Rehomed r = MinimalTree::build(t, f);
  ASSERT_TRUE(r.tree.root().valid());
  EXPECT_EQ(t.sw(r.tree.root()).level, 1);
  std::vector<HostId> secondPod;
  for (HostId::rep_type h = 4; h < 8; ++h)
    secondPod.push_back(HostId(h));
  EXPECT_EQ(r.cutOff, secondPod);
  EXPECT_EQ(r.outside, secondPod);
  Connectivity conn(t);
  EXPECT_EQ(conn.countCutPairs(f), 2u * 4 * 4);
  EXPECT_TRUE(conn.connectable(HostId(4), HostId(7), f));
  EXPECT_FALSE(conn.connectable(HostId(0), HostId(4), f));
}

TEST(Rehome, AHostLinkFailsAndThatHostIsCutOff) {
  const Topology t = KAryNTree::make(4, 3).value().build();
  FaultSet f(t);
  const HostId h(37);
  f.failLink(t.host(h).link);
  const Rehomed r = MinimalTree::build(t, f);
  EXPECT_EQ(r.outside, std::vector<HostId>{h});
  EXPECT_EQ(r.cutOff, std::vector<HostId>{h});
  EXPECT_EQ(r.tree.numLinks(), MinimalTree::build(t).value().numLinks() - 1);
  Connectivity conn(t);
  EXPECT_EQ(conn.countCutPairs(f), 2u * (t.numHosts() - 1));
}

TEST(Rehome, HostsOutsideTheTreeButStillReachableAreNotCutOff) {
  // After the faults: a serves L0 L1 L2, b serves L0 L1 L3, c serves L2 L3.
  // a keeps the tree (intact root, as many hosts as b); L3's host is outside
  // it but reaches L0 and L1 through b and L2 through c.
  const Topology t = testing::fullTwoLevel();
  FaultSet f(t);
  for (const auto& [leaf, spine] : std::vector<std::pair<std::string, std::string>>{
           {"L3", "a"}, {"L2", "b"}, {"L0", "c"}, {"L1", "c"}})
    f.failLink(testing::cableBetween(t, leaf, spine));
  const Rehomed r = MinimalTree::build(t, f);
  EXPECT_EQ(t.sw(r.tree.root()).name, "a");
  const HostId h3 = t.findHost("h3").value();
  EXPECT_EQ(r.outside, std::vector<HostId>{h3});
  EXPECT_TRUE(r.cutOff.empty());
  Connectivity conn(t);
  EXPECT_EQ(conn.countCutPairs(f), 0u);
  const LinkStates mtOnly = LinkStates::onlyMinimalTree(t, r.tree);
  EXPECT_TRUE(conn.findDisconnectedPair(mtOnly, f).has_value());
  // The rule adds h3's link and paths to b and c beyond the tree.
  const auto restore = linksToRestore(t, mtOnly, f, r.tree);
  EXPECT_FALSE(restore.empty());
  const LinkStates after = restored(t, mtOnly, f, r.tree);
  EXPECT_FALSE(conn.findDisconnectedPair(after, f));
  const auto want = testing::bruteHostReach(t, testing::survivingFn(f));
  const auto got = testing::bruteHostReach(t, testing::onAndSurvivingFn(after, f));
  EXPECT_EQ(want, got);
}

TEST(Rehome, ASeparatedPartIsCutOffFromTheMainPartButStillConnectedWithin) {
  // L0, L1 only on a and b; L2, L3 only on c. a, b and c each reach two
  // hosts; the tie goes to the intact root a, and h2, h3 are cut off from it.
  const Topology t = testing::fullTwoLevel();
  FaultSet f(t);
  for (const auto& [leaf, spine] : std::vector<std::pair<std::string, std::string>>{
           {"L0", "c"}, {"L1", "c"}, {"L2", "a"}, {"L2", "b"}, {"L3", "a"}, {"L3", "b"}})
    f.failLink(testing::cableBetween(t, leaf, spine));
  const Rehomed r = MinimalTree::build(t, f);
  EXPECT_EQ(t.sw(r.tree.root()).name, "a");
  const std::vector<HostId> part{t.findHost("h2").value(), t.findHost("h3").value()};
  EXPECT_EQ(r.cutOff, part);
  Connectivity conn(t);
  EXPECT_EQ(conn.countCutPairs(f), 8u);
  const LinkStates after = restored(t, LinkStates::onlyMinimalTree(t, r.tree), f, r.tree);
  EXPECT_FALSE(conn.findDisconnectedPair(after, f));
  EXPECT_TRUE(testing::bruteHostReach(t, testing::onAndSurvivingFn(after, f))[2][3]);
}

TEST(Rehome, NothingSurvivesGivesAnEmptyTree) {
  const Topology t = KAryNTree::make(2, 2).value().build();
  FaultSet f(t);
  for (HostId::rep_type h = 0; h < t.numHosts(); ++h)
    f.failLink(t.host(HostId(h)).link);
  const Rehomed r = MinimalTree::build(t, f);
  EXPECT_FALSE(r.tree.root().valid());
  EXPECT_EQ(r.tree.numLinks(), 0u);
  EXPECT_EQ(r.cutOff.size(), t.numHosts());
  EXPECT_TRUE(linksToRestore(t, LinkStates(t.numLinks(), false), f, r.tree).empty());
}

}  // namespace
}  // namespace ebb::fabric
