#include "fabric/faults.h"

#include <gtest/gtest.h>

#include <random>

#include "fabric/connectivity.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "tests/fabric/fault_reference.h"

namespace ebb::fabric {
namespace {

TEST(FaultSet, LinksAndDirections) {
  const Topology t = KAryNTree::make(2, 2).value().build();
  FaultSet f(t);
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(f.describe(t), "no faults");
  const LinkId l = t.sw(t.findSwitch("S1_0").value()).ports[2].link;
  f.failLink(l, Direction::kUp);
  EXPECT_FALSE(f.usable(l, Direction::kUp));
  EXPECT_TRUE(f.usable(l, Direction::kDown));
  EXPECT_TRUE(f.linkFailed(l));
  EXPECT_FALSE(f.cableUsable(l));
  EXPECT_EQ(f.numFailedLinks(), 1u);
  EXPECT_EQ(f.describe(t), "links failed: " + t.describeLink(l) + " (up only)");
  f.failLink(l, Direction::kDown);
  EXPECT_EQ(f.describe(t), "links failed: " + t.describeLink(l));
  EXPECT_EQ(f.numFailedLinks(), 1u);
  f.repairLink(t, l, Direction::kUp);  // one direction back
  EXPECT_TRUE(f.usable(l, Direction::kUp));
  EXPECT_FALSE(f.usable(l, Direction::kDown));
  EXPECT_EQ(f.describe(t), "links failed: " + t.describeLink(l) + " (down only)");
  f.repairLink(t, l, Direction::kDown);
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(f, FaultSet(t));
  f.failLink(l);
  f.repairLink(t, l);
  EXPECT_TRUE(f.empty());
  EXPECT_TRUE(f.cableUsable(l));
  EXPECT_EQ(f, FaultSet(t));
}

TEST(FaultSet, AFailedSwitchFailsAllItsLinksUntilRepaired) {
  const Topology t = KAryNTree::make(2, 2).value().build();
  FaultSet f(t);
  const SwitchId root = t.findSwitch("S0_0").value();
  const LinkId own = t.sw(root).ports[0].link;
  f.failLink(own);
  f.failSwitch(t, root);
  EXPECT_TRUE(f.switchFailed(root));
  for (const Port& p : t.sw(root).ports) {
    if (p.role == PortRole::kUnused) continue;
    EXPECT_FALSE(f.usable(p.link, Direction::kUp));
    EXPECT_FALSE(f.usable(p.link, Direction::kDown));
  }
  EXPECT_EQ(f.describe(t), "switches failed: S0_0; links failed: " + t.describeLink(own));
  const FaultSet copy = f;
  EXPECT_EQ(copy, f);
  f.repairSwitch(t, root);
  EXPECT_NE(copy, f);
  EXPECT_FALSE(f.switchFailed(root));
  // The link failed by itself stays failed; the others are back.
  EXPECT_FALSE(f.cableUsable(own));
  EXPECT_TRUE(f.cableUsable(t.sw(root).ports[1].link));
}

TEST(ConnectivityWithFaults, NoFaultsAgreesWithThePlainProof) {
  const Topology t = KAryNTree::make(3, 3).value().build();
  const MinimalTree mt = MinimalTree::build(t).value();
  Connectivity conn(t);
  const FaultSet none(t);
  std::mt19937_64 rng(7);
  std::bernoulli_distribution off(0.1);
  for (int trial = 0; trial < 100; ++trial) {
    LinkStates st = LinkStates::onlyMinimalTree(t, mt);
    for (LinkId::rep_type l = 0; l < t.numLinks(); ++l)
      for (Direction d : {Direction::kUp, Direction::kDown})
        if (off(rng)) st.set(LinkId(l), d, !st.isOn(LinkId(l), d));
    EXPECT_EQ(conn.findDisconnectedPair(st).has_value(),
              conn.findDisconnectedPair(st, none).has_value());
  }
  EXPECT_EQ(conn.countCutPairs(none), 0u);
}

TEST(ConnectivityWithFaults, PhysicallyCutPairsAreNotCounted) {
  const Topology t = KAryNTree::make(4, 2).value().build();
  Connectivity conn(t);
  FaultSet f(t);
  const HostId h5(5);
  f.failLink(t.host(h5).link);
  LinkStates st = LinkStates::allOn(t);
  st.setLink(t.host(h5).link, false);
  EXPECT_TRUE(conn.findDisconnectedPair(st).has_value());
  EXPECT_FALSE(conn.findDisconnectedPair(st, f).has_value());
  EXPECT_FALSE(conn.connectable(h5, HostId(0), f));
  EXPECT_FALSE(conn.connectable(HostId(0), h5, f));
  EXPECT_TRUE(conn.connectable(HostId(1), HostId(0), f));
  EXPECT_EQ(conn.countCutPairs(f), 2u * 15u);
  // Another host's link off is still a broken, connectable pair.
  st.set(t.host(HostId(9)).link, Direction::kDown, false);
  const auto pair = conn.findDisconnectedPair(st, f);
  ASSERT_TRUE(pair);
  EXPECT_EQ(pair->dst, HostId(9));
  EXPECT_NE(pair->src, h5);
}

TEST(ConnectivityWithFaults, OneDirectionFailedMakesConnectabilityOneWay) {
  const Topology t = KAryNTree::make(4, 2).value().build();
  Connectivity conn(t);
  FaultSet f(t);
  f.failLink(t.host(HostId(2)).link, Direction::kDown);
  EXPECT_TRUE(conn.connectable(HostId(2), HostId(7), f));
  EXPECT_FALSE(conn.connectable(HostId(7), HostId(2), f));
  EXPECT_EQ(conn.countCutPairs(f), 15u);
  EXPECT_FALSE(conn.findDisconnectedPair(LinkStates::allOn(t), f).has_value());
}

TEST(ConnectivityWithFaults, ValleyPathsDoNotCount) {
  // Leaves L0 and L3 share no spine after the faults; L0-L1 share "a" and
  // L1-L3 share "b". A graph search would join L0 and L3 through L1 (a
  // valley); up*/down* routing cannot.
  const Topology t = testing::fullTwoLevel();
  FaultSet f(t);
  for (const auto& [leaf, spine] : std::vector<std::pair<std::string, std::string>>{
           {"L0", "b"}, {"L0", "c"}, {"L3", "a"}, {"L3", "c"}})
    f.failLink(testing::cableBetween(t, leaf, spine));
  Connectivity conn(t);
  const HostId h0 = t.findHost("h0").value();
  const HostId h1 = t.findHost("h1").value();
  const HostId h3 = t.findHost("h3").value();
  EXPECT_TRUE(conn.connectable(h0, h1, f));
  EXPECT_TRUE(conn.connectable(h1, h3, f));
  EXPECT_FALSE(conn.connectable(h0, h3, f));
  EXPECT_FALSE(conn.connectable(h3, h0, f));
  EXPECT_EQ(conn.countCutPairs(f), 2u);
}

}  // namespace
}  // namespace ebb::fabric
