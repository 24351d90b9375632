// The guard's single-failure rule for in-band control (setInBand with
// Resilience::kSingleLink): every turn-off it lets through leaves a fabric in
// which, for ANY one switch link failing, re-enabling the ports ebb can still
// reach reconnects every pair. The property is checked here by brute force
// over every link (the guard itself only looks at bridges), on a leaf-spine
// fabric with the stranding case of issue 13, on k-ary n-trees and on an
// irregular fabric, over seeded random turn-off orders.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <string>

#include "agent/safety_guard.h"
#include "fabric/in_band_reach.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "fabric/recovery.h"
#include "fabric/topology_builder.h"

namespace ebb::agent {
namespace {

using fabric::Direction;
using fabric::LinkId;
using fabric::SwitchId;

// Leaves of `ups` up links each, spines of as many down ports as leaves; up
// port 0 of every leaf goes to spine0 (the tree's root), up port j > 0 of
// leaf i to spine 1 + (i + j - 1) % (spines - 1), so the cabling is not a
// k-ary n-tree when ups < spines. Two hosts per leaf.
fabric::Topology leafSpine(std::uint16_t leaves, std::uint16_t spines, std::uint16_t ups) {
  fabric::TopologyBuilder b;
  std::vector<SwitchId> sp, lf;
  for (std::uint16_t s = 0; s < spines; ++s)
    sp.push_back(b.addSwitch(fmt::format("spine{}", s), 0x10u + s, leaves));
  for (std::uint16_t l = 0; l < leaves; ++l)
    lf.push_back(b.addSwitch(fmt::format("leaf{}", l), 0x100u + l, 2u + ups));
  for (std::uint16_t l = 0; l < leaves; ++l) {
    for (std::uint16_t j = 0; j < ups; ++j) {
      const auto s = static_cast<std::uint16_t>(j == 0 ? 0 : 1 + (l + j - 1) % (spines - 1));
      EXPECT_TRUE(b.connectSwitches({lf[l], static_cast<std::uint16_t>(2 + j)}, {sp[s], l}).isOk());
    }
    for (std::uint16_t h = 0; h < 2; ++h) {
      const fabric::HostId host = b.addHost(fmt::format("h{}", 2 * l + h), 0x1000u + 2u * l + h);
      EXPECT_TRUE(b.connectHost(host, 0, {lf[l], h}).isOk());
    }
  }
  return b.build().value();
}

// What an agent does on InfiniBand: check the whole link, then record it off.
bool tryTurnOff(SafetyGuard& g, LinkId l) {
  if (!g.checkTurnOffLink(l).isOk()) return false;
  g.recordOff(l, Direction::kUp);
  g.recordOff(l, Direction::kDown);
  return true;
}

// Brute force: for no failure and for every switch link on, the recovery
// in-band (re-enable every gate reached, repeatedly) connects every pair the
// surviving cables connect, and with no failure brings back every gated link.
std::string bruteForceGap(const fabric::Topology& topo, const SafetyGuard& g, SwitchId root) {
  std::vector<SwitchId> gate(topo.numLinks());
  for (std::size_t i = 0; i < topo.numLinks(); ++i) {
    if (auto e = g.gateEnd(LinkId(static_cast<std::uint32_t>(i)))) gate[i] = e->sw;
  }
  const fabric::FaultSet none(topo);
  const std::vector<char> all;
  const fabric::InBandView v{&g.states(), &none, &gate, &all, root};
  fabric::InBandReach reach(topo);
  fabric::Connectivity conn(topo);
  reach.recover(v);
  if (!reach.leftDisabled().empty())
    return "left disabled: " + topo.describeLink(reach.leftDisabled().front());
  for (std::size_t i = 0; i < topo.numLinks(); ++i) {
    const LinkId f(static_cast<std::uint32_t>(i));
    if (!topo.isSwitchLink(f) || !g.states().isFullyOn(f)) continue;
    fabric::FaultSet faults(topo);
    faults.failLink(f);
    const auto pair = conn.findDisconnectedPair(reach.recover(v, f), faults);
    if (pair) return "if " + topo.describeLink(f) + " fails: " + conn.describe(*pair);
  }
  return {};
}

LinkId upLink(const fabric::Topology& t, const std::string& lower, const std::string& upper) {
  const fabric::Switch& s = t.sw(*t.findSwitch(lower));
  for (std::uint16_t p : s.upPorts) {
    if (t.sw(t.link(s.ports[p].link).upper.sw).name == upper) return s.ports[p].link;
  }
  ADD_FAILURE() << "no link " << lower << " - " << upper;
  return LinkId();
}

TEST(SingleLinkResilience, NoneStrandsALeafThatSingleLinkKeepsRecoverable) {
  const fabric::Topology t = leafSpine(4, 3, 3);
  const fabric::MinimalTree mt = fabric::MinimalTree::build(t).value();
  const SwitchId root = *t.findSwitch("leaf0");
  // leaf1's up links go to spine0, spine2, spine1; the tree takes spine0.
  const LinkId tree = upLink(t, "leaf1", "spine0");
  ASSERT_TRUE(mt.containsLink(tree));
  const LinkId spare[] = {upLink(t, "leaf1", "spine1"), upLink(t, "leaf1", "spine2")};

  SafetyGuard none(t, mt, fabric::LinkStates::allOn(t));
  none.setInBand({root, {}, Resilience::kNone});
  for (LinkId l : spare)
    ASSERT_TRUE(tryTurnOff(none, l));
  // Both disabled at leaf1 itself: if its tree cable fails, nothing ebb can
  // reach brings it back (the case of issue 13).
  EXPECT_EQ(none.gateEnd(spare[0])->sw, *t.findSwitch("leaf1"));
  EXPECT_EQ(none.gateEnd(spare[1])->sw, *t.findSwitch("leaf1"));
  const std::string gap = bruteForceGap(t, none, root);
  EXPECT_NE(gap.find("if " + t.describeLink(tree) + " fails"), std::string::npos) << gap;

  SafetyGuard single(t, mt, fabric::LinkStates::allOn(t));
  single.setInBand({root, {}, Resilience::kSingleLink});
  for (LinkId l : spare)
    ASSERT_TRUE(tryTurnOff(single, l));
  // The last one is disabled at its spine, which stays in reach.
  EXPECT_NE(single.gateEnd(spare[1])->sw, *t.findSwitch("leaf1"));
  EXPECT_EQ(bruteForceGap(t, single, root), "");
}

TEST(SingleLinkResilience, RefusesWhenNoEndWorksAndSaysWhy) {
  // Only the leaves are allow-listed: a spare can be disabled only at its
  // leaf, so a leaf keeps one spare on besides its tree link.
  const fabric::Topology t = leafSpine(4, 3, 3);
  const fabric::MinimalTree mt = fabric::MinimalTree::build(t).value();
  std::vector<char> leavesOnly(t.numSwitches(), 0);
  for (const fabric::Switch& s : t.switches())
    leavesOnly[t.findSwitch(s.name)->value()] = s.name.starts_with("leaf");
  SafetyGuard g(t, mt, fabric::LinkStates::allOn(t));
  g.setInBand({*t.findSwitch("leaf0"), leavesOnly, Resilience::kSingleLink});
  ASSERT_TRUE(tryTurnOff(g, upLink(t, "leaf1", "spine1")));
  const LinkId last = upLink(t, "leaf1", "spine2");
  const Status s = g.checkTurnOffLink(last);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("single-failure resilience"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("spine2 is not allow-listed"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("fails, recovery in-band leaves"), std::string::npos) << s.message();
  EXPECT_TRUE(g.states().isFullyOn(last));
  EXPECT_EQ(bruteForceGap(t, g, *t.findSwitch("leaf0")), "");
}

// Seeded random orders of turn-off attempts until nothing more goes off:
// after every accepted one the brute-force property holds; the rule keeps a
// fair share of what NONE turns off (it costs little).
void randomOrders(const fabric::Topology& t, SwitchId root, std::size_t& offSingle,
                  std::size_t& offNone) {
  const fabric::MinimalTree mt = fabric::MinimalTree::build(t).value();
  std::vector<LinkId> links;
  for (std::size_t i = 0; i < t.numLinks(); ++i) {
    const LinkId l(static_cast<std::uint32_t>(i));
    if (t.isSwitchLink(l) && !mt.containsLink(l)) links.push_back(l);
  }
  for (unsigned seed = 1; seed <= 4; ++seed) {
    std::mt19937 rng(seed);
    std::shuffle(links.begin(), links.end(), rng);
    SafetyGuard single(t, mt, fabric::LinkStates::allOn(t));
    single.setInBand({root, {}, Resilience::kSingleLink});
    SafetyGuard none(t, mt, fabric::LinkStates::allOn(t));
    none.setInBand({root, {}, Resilience::kNone});
    for (LinkId l : links) {
      offNone += tryTurnOff(none, l);
      if (!tryTurnOff(single, l)) continue;
      ++offSingle;
      const std::string gap = bruteForceGap(t, single, root);
      ASSERT_EQ(gap, "") << "seed " << seed << " after " << t.describeLink(l);
      ASSERT_TRUE(single.checkAll().isOk());
    }
  }
}

TEST(SingleLinkResilience, RandomOrdersOnKAryTreesKeepEveryFailureRecoverable) {
  for (auto [k, n] : {std::pair{4, 2}, std::pair{4, 3}, std::pair{2, 4}}) {
    const fabric::Topology t = fabric::KAryNTree::make(k, n).value().build();
    const SwitchId root = t.link(t.host(fabric::HostId(0)).link).upper.sw;
    std::size_t offSingle = 0, offNone = 0;
    randomOrders(t, root, offSingle, offNone);
    EXPECT_GT(offSingle, offNone / 2) << k << "-ary " << n << "-tree";
  }
}

TEST(SingleLinkResilience, RandomOrdersOnAnIrregularFabricKeepEveryFailureRecoverable) {
  const fabric::Topology t = leafSpine(6, 4, 3);
  for (const char* root : {"leaf0", "spine2"}) {
    std::size_t offSingle = 0, offNone = 0;
    randomOrders(t, *t.findSwitch(root), offSingle, offNone);
    EXPECT_GT(offSingle, 0u) << root;
  }
}

// Brute force with faults: for no further failure and for every switch link
// still on, recovery in-band connects every pair the surviving cables do.
std::string gapWithFaults(const fabric::Topology& topo, const SafetyGuard& g,
                          const fabric::FaultSet& faults, SwitchId root) {
  std::vector<SwitchId> gate(topo.numLinks());
  for (std::size_t i = 0; i < topo.numLinks(); ++i) {
    if (auto e = g.gateEnd(LinkId(static_cast<std::uint32_t>(i)))) gate[i] = e->sw;
  }
  const std::vector<char> all;
  const fabric::InBandView v{&g.states(), &faults, &gate, &all, root};
  fabric::InBandReach reach(topo);
  fabric::Connectivity conn(topo);
  if (const auto pair = conn.findDisconnectedPair(reach.recover(v), faults))
    return "with no further failure: " + conn.describe(*pair);
  for (std::size_t i = 0; i < topo.numLinks(); ++i) {
    const LinkId f(static_cast<std::uint32_t>(i));
    if (!topo.isSwitchLink(f) || !g.states().isFullyOn(f) || !faults.cableUsable(f)) continue;
    fabric::FaultSet more = faults;
    more.failLink(f);
    const auto pair = conn.findDisconnectedPair(reach.recover(v, f), more);
    if (pair) return "if " + topo.describeLink(f) + " fails: " + conn.describe(*pair);
  }
  return {};
}

// A fault can leave the gates where the next single failure strands a leaf:
// leaf1 hangs on its tree cable, one spare gated at the spine end, the other
// at leaf1. That spine dies: only the spare gated at leaf1 is left, and if
// the tree cable fails next nothing ebb reaches can bring it back. The
// re-homing lifts that gate (linksForResilience), and then every further
// single failure is recoverable again.
TEST(SingleLinkResilience, AFaultThatLeavesALeafOneFailureFromStrandedLiftsItsGate) {
  const fabric::Topology t = leafSpine(4, 3, 3);
  const fabric::MinimalTree mt = fabric::MinimalTree::build(t).value();
  const SwitchId root = *t.findSwitch("leaf0");
  const SwitchId leaf1 = *t.findSwitch("leaf1");
  const LinkId spare[] = {upLink(t, "leaf1", "spine1"), upLink(t, "leaf1", "spine2")};
  SafetyGuard g(t, mt, fabric::LinkStates::allOn(t));
  g.setInBand({root, {}, Resilience::kSingleLink});
  for (LinkId l : spare)
    ASSERT_TRUE(tryTurnOff(g, l));
  // One spare at its spine's end, the other at leaf1 (the guard's rule).
  const bool firstAtSpine = g.gateEnd(spare[0])->sw != leaf1;
  const LinkId atSpine = firstAtSpine ? spare[0] : spare[1];
  const LinkId atLeaf = firstAtSpine ? spare[1] : spare[0];
  ASSERT_NE(g.gateEnd(atSpine)->sw, leaf1);
  ASSERT_EQ(g.gateEnd(atLeaf)->sw, leaf1);
  EXPECT_TRUE(g.linksForResilience({}).empty()) << "intact: nothing to lift";
  fabric::FaultSet faults(t);
  faults.failSwitch(t, g.gateEnd(atSpine)->sw);
  g.setFaults(faults);
  EXPECT_NE(gapWithFaults(t, g, faults, root).find("fails"), std::string::npos)
      << "the precondition: one more failure would strand leaf1";
  const std::vector<LinkId> lift = g.linksForResilience({});
  ASSERT_EQ(lift, std::vector<LinkId>{atLeaf});
  g.recordOn(atLeaf, Direction::kUp);
  g.recordOn(atLeaf, Direction::kDown);
  EXPECT_EQ(gapWithFaults(t, g, faults, root), "");
  EXPECT_TRUE(g.linksForResilience({}).empty());
  // The same when ebb does not know the spine died: only its links that
  // were on fail, and it is out of reach, its gates with it.
  SafetyGuard dark(t, mt, fabric::LinkStates::allOn(t));
  dark.setInBand({root, {}, Resilience::kSingleLink});
  for (LinkId l : spare)
    ASSERT_TRUE(tryTurnOff(dark, l));
  const SwitchId spine = dark.gateEnd(atSpine)->sw;
  fabric::FaultSet cut(t);
  for (const fabric::Port& p : t.sw(spine).ports) {
    if (p.link.valid() && dark.states().isFullyOn(p.link)) cut.failLink(p.link);
  }
  dark.setFaults(cut);
  EXPECT_EQ(dark.linksForResilience({}), std::vector<LinkId>{atLeaf});
  // Resilience NONE asks for nothing.
  SafetyGuard none(t, mt, fabric::LinkStates::allOn(t));
  none.setInBand({root, {}, Resilience::kNone});
  for (LinkId l : spare)
    ASSERT_TRUE(tryTurnOff(none, l));
  none.setFaults(faults);
  EXPECT_TRUE(none.linksForResilience({}).empty());
}

// Random faults on random gatings: after each fault, the links the re-homing
// turns on plus those linksForResilience lifts leave every further single
// failure recoverable, unless what is left is not ebb's to bring back.
TEST(SingleLinkResilience, AfterRandomFaultsTheLiftedGatesKeepTheNextFailureRecoverable) {
  for (const auto& [k, n] : {std::pair{3, 3}, std::pair{4, 2}, std::pair{2, 4}}) {
    const fabric::Topology t = fabric::KAryNTree::make(k, n).value().build();
    const fabric::MinimalTree mt = fabric::MinimalTree::build(t).value();
    const SwitchId root = t.leafOf(fabric::HostId(0));
    for (std::uint32_t seed = 1; seed <= 6; ++seed) {
      std::mt19937 rng(seed);
      SafetyGuard g(t, mt, fabric::LinkStates::allOn(t));
      g.setInBand({root, {}, Resilience::kSingleLink});
      std::vector<LinkId> links;
      for (std::uint32_t i = 0; i < t.numLinks(); ++i)
        if (t.isSwitchLink(LinkId(i)) && !mt.containsLink(LinkId(i))) links.push_back(LinkId(i));
      std::shuffle(links.begin(), links.end(), rng);
      for (LinkId l : links)
        tryTurnOff(g, l);
      // One switch other than the management leaf fails.
      SwitchId dead;
      do {
        dead = SwitchId(static_cast<std::uint32_t>(rng() % t.numSwitches()));
      } while (dead == root);
      fabric::FaultSet faults(t);
      faults.failSwitch(t, dead);
      g.setFaults(faults);
      const fabric::Rehomed r = fabric::MinimalTree::build(t, faults);
      const std::vector<LinkId> restore = fabric::linksToRestore(t, g.states(), faults, r.tree);
      std::vector<LinkId> on = restore;
      for (LinkId l : g.linksForResilience(restore))
        on.push_back(l);
      for (LinkId l : on) {
        g.recordOn(l, Direction::kUp);
        g.recordOn(l, Direction::kDown);
      }
      EXPECT_EQ(gapWithFaults(t, g, faults, root), "")
          << k << "-ary " << n << "-tree, seed " << seed << ", " << t.sw(dead).name << " failed";
    }
  }
}

TEST(InBandReach, ParallelCablesAreNotBridgesButTreeLinksAre) {
  fabric::TopologyBuilder b;
  const SwitchId top = b.addSwitch("top", 0x10, 4);
  const SwitchId a = b.addSwitch("a", 0x20, 4);
  const SwitchId c = b.addSwitch("c", 0x21, 4);
  ASSERT_TRUE(b.connectSwitches({a, 2}, {top, 0}).isOk());
  ASSERT_TRUE(b.connectSwitches({a, 3}, {top, 1}).isOk());  // doubled cable
  ASSERT_TRUE(b.connectSwitches({c, 2}, {top, 2}).isOk());  // single cable
  for (std::uint16_t i = 0; i < 2; ++i) {
    const fabric::HostId h = b.addHost(fmt::format("h{}", i), 0x100u + i);
    ASSERT_TRUE(b.connectHost(h, 0, {i == 0 ? a : c, 0}).isOk());
  }
  const fabric::Topology t = b.build().value();
  const fabric::LinkStates on = fabric::LinkStates::allOn(t);
  const fabric::FaultSet none(t);
  const std::vector<SwitchId> gate(t.numLinks());
  const std::vector<char> all;
  fabric::InBandReach reach(t);
  const auto bridges = reach.bridges({&on, &none, &gate, &all, a});
  ASSERT_EQ(bridges.size(), 1u);
  EXPECT_EQ(t.link(bridges[0]).lower.sw, c);
}

}  // namespace
}  // namespace ebb::agent
