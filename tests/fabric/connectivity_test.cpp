#include "fabric/connectivity.h"

#include <gtest/gtest.h>

#include <random>

#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "tests/fabric/hostless_leaf.h"
#include "tests/fabric/reference_paths.h"

namespace ebb::fabric {
namespace {

TEST(Connectivity, AllOnIsConnected) {
  const Topology t = KAryNTree::make(4, 3).value().build();
  Connectivity conn(t);
  EXPECT_TRUE(conn.allConnected(LinkStates::allOn(t)));
}

// A leaf switch without hosts (roots given) joins no host pair: cutting it off
// disconnects nothing, and a real break still names two real hosts.
TEST(Connectivity, ALeafWithoutHostsJoinsNoPair) {
  TopologyBuilder b = treeWithHostlessLeaf();
  ASSERT_TRUE(b.setRoots({"spine0", "spine1"}, "roots").isOk());
  const Topology t = b.build().value();
  Connectivity conn(t);
  LinkStates st = LinkStates::allOn(t);
  const Switch& hostless = t.sw(t.findSwitch("leaf2").value());
  for (std::uint16_t p : hostless.upPorts) {
    st.set(hostless.ports[p].link, Direction::kUp, false);
    st.set(hostless.ports[p].link, Direction::kDown, false);
  }
  EXPECT_TRUE(conn.allConnected(st));
  EXPECT_TRUE(conn.allConnected(st, FaultSet(t)));
  const Switch& leaf1 = t.sw(t.findSwitch("leaf1").value());
  for (std::uint16_t p : leaf1.upPorts)
    st.set(leaf1.ports[p].link, Direction::kUp, false);
  for (const auto& pair :
       {conn.findDisconnectedPair(st), conn.findDisconnectedPair(st, FaultSet(t))}) {
    ASSERT_TRUE(pair);
    EXPECT_EQ(conn.describe(*pair).rfind("no up*/down* path from h", 0), 0u)
        << conn.describe(*pair);
    EXPECT_EQ(t.leafOf(pair->src), t.findSwitch("leaf1").value());
  }
}

TEST(Connectivity, AHostLinkOffNamesThatHost) {
  const Topology t = KAryNTree::make(4, 2).value().build();
  Connectivity conn(t);
  LinkStates st = LinkStates::allOn(t);
  st.set(t.host(HostId(7)).link, Direction::kDown, false);
  auto pair = conn.findDisconnectedPair(st);
  ASSERT_TRUE(pair);
  EXPECT_EQ(pair->dst, HostId(7));
  EXPECT_EQ(conn.describe(*pair), "no up*/down* path from H0 to H7");
  st = LinkStates::allOn(t);
  st.set(t.host(HostId(3)).link, Direction::kUp, false);
  pair = conn.findDisconnectedPair(st);
  ASSERT_TRUE(pair);
  EXPECT_EQ(pair->src, HostId(3));
}

TEST(Connectivity, NamedPairReallyHasNoPath) {
  const Topology t = KAryNTree::make(3, 3).value().build();
  const MinimalTree mt = MinimalTree::build(t).value();
  Connectivity conn(t);
  LinkStates st = LinkStates::onlyMinimalTree(t, mt);
  // Cut the MT link from leaf S2_2_2 upward: hosts below it cannot send out.
  const SwitchId leaf = t.findSwitch("S2_2_2").value();
  st.set(t.sw(leaf).ports[*mt.upPort(leaf)].link, Direction::kUp, false);
  const auto pair = conn.findDisconnectedPair(st);
  ASSERT_TRUE(pair);
  EXPECT_EQ(t.leafOf(pair->src), leaf);
  EXPECT_FALSE(testing::naivePath(t, st, pair->src, pair->dst));
}

// Random link states on small trees: the fast check agrees with the naive
// all-pairs search, and any pair it names has no path.
class RandomStates : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(RandomStates, AgreesWithNaiveAllPairsSearch) {
  const auto [k, n] = GetParam();
  const Topology t = KAryNTree::make(k, n).value().build();
  const MinimalTree mt = MinimalTree::build(t).value();
  Connectivity conn(t);
  std::mt19937_64 rng(static_cast<std::uint64_t>(k * 100 + n));
  int connectedSeen = 0, disconnectedSeen = 0;
  for (int trial = 0; trial < 300; ++trial) {
    // Bias toward mostly-on states so both outcomes occur.
    const double pOff = (trial % 3 == 0) ? 0.02 : (trial % 3 == 1 ? 0.15 : 0.5);
    std::bernoulli_distribution off(pOff);
    LinkStates st = (trial % 2) ? LinkStates::allOn(t) : LinkStates::onlyMinimalTree(t, mt);
    for (LinkId::rep_type l = 0; l < t.numLinks(); ++l) {
      for (Direction d : {Direction::kUp, Direction::kDown}) {
        if (off(rng)) st.set(LinkId(l), d, !st.isOn(LinkId(l), d));
      }
    }
    const bool naive = testing::naiveAllConnected(t, st);
    const auto pair = conn.findDisconnectedPair(st);
    EXPECT_EQ(naive, !pair.has_value()) << "trial " << trial;
    if (pair) {
      EXPECT_FALSE(testing::naivePath(t, st, pair->src, pair->dst));
      ++disconnectedSeen;
    } else {
      ++connectedSeen;
    }
  }
  EXPECT_GT(connectedSeen, 0);
  EXPECT_GT(disconnectedSeen, 0);
}

INSTANTIATE_TEST_SUITE_P(Small, RandomStates,
                         ::testing::Values(std::pair{2, 2}, std::pair{2, 3}, std::pair{2, 4},
                                           std::pair{3, 3}, std::pair{4, 2}, std::pair{4, 3}),
                         [](const auto& tpi) {
                           return "k" + std::to_string(tpi.param.first) + "n" +
                                  std::to_string(tpi.param.second);
                         });

}  // namespace
}  // namespace ebb::fabric
