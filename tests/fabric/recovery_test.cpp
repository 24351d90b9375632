// The recovery rule, checked against brute-force valley-free search on random
// fault sets and random link states (docs/mechanisms.md §3.1).
#include "fabric/recovery.h"

#include <gtest/gtest.h>

#include <random>

#include "fabric/kary_tree.h"
#include "tests/fabric/fault_reference.h"

namespace ebb::fabric {
namespace {

FaultSet randomFaults(const Topology& t, std::mt19937_64& rng, int trial) {
  // Mostly light damage, some heavy, so cut-off hosts and bridges both occur.
  const double pLink = trial % 4 == 0 ? 0.3 : (trial % 4 == 1 ? 0.1 : 0.03);
  const double pSwitch = trial % 5 == 0 ? 0.1 : 0.02;
  const bool directions = trial % 3 == 0;  // one-direction faults, as the emulator can inject
  std::bernoulli_distribution link(pLink), sw(pSwitch), host(0.02), half(0.5), up(0.5);
  FaultSet f(t);
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l) {
    const LinkId id(l);
    if (!(t.isSwitchLink(id) ? link(rng) : host(rng))) continue;
    if (directions && half(rng)) {
      f.failLink(id, up(rng) ? Direction::kUp : Direction::kDown);
    } else {
      f.failLink(id);
    }
  }
  for (SwitchId::rep_type s = 0; s < t.numSwitches(); ++s)
    if (sw(rng)) f.failSwitch(t, SwitchId(s));
  return f;
}

LinkStates randomStates(const Topology& t, const MinimalTree& today, std::mt19937_64& rng,
                        int trial) {
  std::bernoulli_distribution flip(trial % 2 ? 0.1 : 0.5);
  LinkStates st = trial % 3 == 1 ? LinkStates::allOn(t) : LinkStates::onlyMinimalTree(t, today);
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l)
    for (Direction d : {Direction::kUp, Direction::kDown})
      if (flip(rng)) st.set(LinkId(l), d, !st.isOn(LinkId(l), d));
  return st;
}

TEST(Recovery, RandomFaultsAndStatesAgainstBruteForce) {
  const Topology t = KAryNTree::make(4, 3).value().build();
  const MinimalTree today = MinimalTree::build(t).value();
  const std::size_t nh = t.numHosts();
  Connectivity conn(t);
  std::mt19937_64 rng(20240611);
  int withCutOff = 0, bridged = 0, restoredBeyondTree = 0, withDisconnected = 0;
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const FaultSet f = randomFaults(t, rng, trial);
    const LinkStates st = randomStates(t, today, rng, trial);
    const Rehomed r = MinimalTree::build(t, f);
    const auto want = testing::bruteHostReach(t, testing::survivingFn(f));

    // Connectable and cut pairs, against the brute force.
    std::uint64_t cut = 0;
    for (std::size_t a = 0; a < nh; ++a)
      for (std::size_t b = 0; b < nh; ++b) {
        const HostId ha(static_cast<std::uint32_t>(a)), hb(static_cast<std::uint32_t>(b));
        ASSERT_EQ(conn.connectable(ha, hb, f), want[a][b]) << a << " -> " << b;
        cut += !want[a][b];
      }
    EXPECT_EQ(conn.countCutPairs(f), cut);

    // The tree: spanned hosts reach each other over tree links alone, and no
    // surviving switch reaches more hosts than the tree spans.
    std::vector<bool> spanned(nh);
    for (std::size_t h = 0; h < nh; ++h)
      spanned[h] = r.tree.containsLink(t.host(HostId(static_cast<std::uint32_t>(h))).link);
    const LinkStates treeOnly = LinkStates::onlyMinimalTree(t, r.tree);
    const auto inTree = testing::bruteHostReach(t, testing::onAndSurvivingFn(treeOnly, f));
    std::size_t numSpanned = 0;
    for (std::size_t a = 0; a < nh; ++a) {
      numSpanned += spanned[a];
      for (std::size_t b = 0; b < nh; ++b)
        if (spanned[a] && spanned[b]) {
          ASSERT_TRUE(inTree[a][b]) << a << " -> " << b;
        }
    }
    for (SwitchId::rep_type s = 0; s < t.numSwitches(); ++s) {
      if (f.switchFailed(SwitchId(s))) continue;
      // Hosts below s over whole surviving cables.
      std::size_t below = 0;
      for (std::size_t h = 0; h < nh; ++h) {
        const LinkId hl = t.host(HostId(static_cast<std::uint32_t>(h))).link;
        if (!f.cableUsable(hl)) continue;
        std::vector<SwitchId> frontier{t.link(hl).upper.sw};
        bool found = false;
        while (!frontier.empty() && !found) {
          const SwitchId x = frontier.back();
          frontier.pop_back();
          found = x == SwitchId(s);
          for (std::uint16_t p : t.sw(x).upPorts)
            if (f.cableUsable(t.sw(x).ports[p].link))
              frontier.push_back(t.link(t.sw(x).ports[p].link).upper.sw);
        }
        below += found;
      }
      ASSERT_LE(below, numSpanned) << t.sw(SwitchId(s)).name;
    }

    // Cut off = outside the tree with no path to or from any spanned host.
    std::vector<HostId> expectCut, expectOutside;
    for (std::size_t h = 0; h < nh; ++h) {
      if (spanned[h]) continue;
      expectOutside.push_back(HostId(static_cast<std::uint32_t>(h)));
      bool touches = false;
      for (std::size_t m = 0; m < nh; ++m)
        touches = touches || (spanned[m] && (want[h][m] || want[m][h]));
      if (!touches) expectCut.push_back(HostId(static_cast<std::uint32_t>(h)));
    }
    EXPECT_EQ(r.outside, expectOutside);
    EXPECT_EQ(r.cutOff, expectCut);
    withCutOff += !r.cutOff.empty();
    bridged += r.outside.size() > r.cutOff.size();

    // Disconnected pairs counted, against the brute force over the random states.
    const auto now = testing::bruteHostReach(t, testing::onAndSurvivingFn(st, f));
    std::uint64_t disconnected = 0;
    for (std::size_t a = 0; a < nh; ++a)
      for (std::size_t b = 0; b < nh; ++b)
        disconnected += want[a][b] && !now[a][b];
    EXPECT_EQ(conn.countDisconnectedPairs(st, f), disconnected);
    EXPECT_EQ(disconnected == 0, !conn.findDisconnectedPair(st, f).has_value());
    withDisconnected += disconnected > 0;

    // The rule: after turning its links on, every connectable pair is connected.
    const auto restore = linksToRestore(conn, t, st, f, r.tree);
    LinkStates after = st;
    for (LinkId l : restore) {
      ASSERT_FALSE(st.isFullyOn(l)) << t.describeLink(l);
      after.setLink(l, true);
      restoredBeyondTree += !r.tree.containsLink(l);
    }
    EXPECT_FALSE(conn.findDisconnectedPair(after, f).has_value());
    EXPECT_EQ(conn.countDisconnectedPairs(after, f), 0u);
    ASSERT_EQ(testing::bruteHostReach(t, testing::onAndSurvivingFn(after, f)), want);
  }
  // The random cases exercised every branch.
  EXPECT_GT(withCutOff, 10);
  EXPECT_GT(bridged, 0);
  EXPECT_GT(restoredBeyondTree, 0);
  EXPECT_GT(withDisconnected, 100);
}

}  // namespace
}  // namespace ebb::fabric
