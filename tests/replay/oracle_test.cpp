// The oracle bound of replay reports (docs/replay.md, "The oracle bound"):
// hand-computed periods (one leaf under load, a hot spot, a message across the
// roots of a 3-level tree), the minimal tree at zero load, and a whole run.
#include <gtest/gtest.h>

#include "configs/config_loader.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "replay/oracle.h"
#include "replay/run_spec.h"
#include "replay/runner.h"

namespace ebb::replay {
namespace {

using fabric::HostId;

struct Tree {
  Tree(int k, int n)
      : topo(fabric::KAryNTree::make(k, n).value().build()),
        mt(fabric::MinimalTree::build(topo).value()) {}
  // Switch-link directions of the minimal tree over all switch-link directions.
  double minimalShare() const {
    double in = 0, all = 0;
    for (fabric::LinkId::rep_type l = 0; l < topo.numLinks(); ++l) {
      if (!topo.isSwitchLink(fabric::LinkId(l))) continue;
      all += 2;
      in += mt.containsLink(fabric::LinkId(l)) ? 2 : 0;
    }
    return in / all;
  }
  fabric::Topology topo;
  fabric::MinimalTree mt;
};

// Target 0.5 of 1000 bytes per period: 500 bytes per direction.
OracleBound bound(const Tree& t) {
  return OracleBound::make(t.topo, t.mt, 0.5, 1000).value();
}

TEST(Oracle, AtZeroLoadItIsTheMinimalTree) {
  for (auto [k, n] : {std::pair{4, 2}, std::pair{2, 3}, std::pair{4, 3}, std::pair{3, 3}}) {
    const Tree t(k, n);
    OracleBound o = bound(t);
    EXPECT_DOUBLE_EQ(o.closePeriod(), t.minimalShare()) << k << "-ary " << n << "-tree";
    // Hosts of one leaf talking among themselves use no switch link.
    o.offer(HostId(0), HostId(1), 1'000'000);
    EXPECT_DOUBLE_EQ(o.closePeriod(), t.minimalShare());
    EXPECT_DOUBLE_EQ(o.switchLinkPower(), t.minimalShare());
  }
}

// 4-ary 2-tree: 4 leaves of 4 hosts, 4 roots, 16 switch links (32 directions);
// the minimal tree holds one up link per leaf and one root. Per direction,
// every up direction on lands on a root of its own (each leaf has one link to
// each root) and makes it active, and an active root has its 4 down
// directions on (the down-link rule).
TEST(Oracle, OneLeafUnderKnownLoad) {
  const Tree t(4, 2);
  OracleBound o = bound(t);
  // 1600 bytes from leaf 0 to leaf 1: ceil(1600 / 500) = 4 directions up out
  // of leaf 0 (the other leaves keep their tree link), so 4 active roots and
  // 16 down directions, which also carry the 4 directions' worth into leaf 1.
  o.offer(HostId(0), HostId(4), 1000);
  o.offer(HostId(1), HostId(5), 600);
  EXPECT_DOUBLE_EQ(o.closePeriod(), (4 + 1 + 1 + 1 + 16) / 32.0);
  // 500 bytes fit one direction at the target: the minimal tree; 501 need two
  // up, two active roots and their 8 down directions.
  o.offer(HostId(0), HostId(4), 500);
  EXPECT_DOUBLE_EQ(o.closePeriod(), 8 / 32.0);
  o.offer(HostId(0), HostId(4), 501);
  EXPECT_DOUBLE_EQ(o.closePeriod(), (2 + 1 + 1 + 1 + 8) / 32.0);
  EXPECT_DOUBLE_EQ(o.switchLinkPower(), (23 + 8 + 13) / 32.0 / 3);
  // Each direction on its own: 4 up and 4 down in the first period, 2 and 2
  // in the third.
  EXPECT_DOUBLE_EQ(o.freeDirectionsPower(), (14 + 8 + 10) / 32.0 / 3);
}

TEST(Oracle, AHotSpotNeedsEveryLinkIntoItsLeafAndNoMore) {
  const Tree t(4, 2);
  OracleBound o = bound(t);
  for (std::uint32_t h = 0; h < 12; ++h)
    o.offer(HostId(h), HostId(12), 300);
  // Into leaf 3: 3600 bytes, 8 directions' worth, but it has 4: every root is
  // active, 16 down directions. Out of each other leaf: 1200 bytes, 3
  // directions; leaf 3 keeps its tree link.
  EXPECT_DOUBLE_EQ(o.closePeriod(), (3 * 3 + 1 + 16) / 32.0);
  // The all-links power counts the 32 host-link directions as always on.
  EXPECT_DOUBLE_EQ(o.allLinkPower(), (26 + 32) / 64.0);
  EXPECT_DOUBLE_EQ(o.freeDirectionsPower(), (3 * (3 + 1) + (1 + 4)) / 32.0);
}

// 2-ary 3-tree: 4 leaves, two pods of two level-1 switches, 4 roots; each
// leaf has a link to both switches of its pod, each of those to two roots.
TEST(Oracle, AMessageAcrossTheRootsCountsAtEveryLevelItCrosses) {
  const Tree t(2, 3);
  ASSERT_DOUBLE_EQ(t.minimalShare(), 12 / 32.0);
  OracleBound o = bound(t);
  // Host 0 to host 7, 2 directions at each crossing: up out of leaf 0 and out
  // of pod A (plus the tree links of leaves 1-3 and pod B: 8 up), so both
  // switches of pod A and two roots are active, and for the 2 directions into
  // leaf 3 both switches of pod B: 3 x 2 active switches x 2 down links.
  o.offer(HostId(0), HostId(7), 1000);
  EXPECT_DOUBLE_EQ(o.closePeriod(), (8 + 12) / 32.0);
  // Within one pod (hosts 0 and 2: leaves 0 and 1): 2 up out of leaf 0 and 2
  // down into leaf 1 make both switches of pod A active; pod B and the roots
  // keep the tree.
  o.offer(HostId(0), HostId(2), 1000);
  EXPECT_DOUBLE_EQ(o.closePeriod(), (7 + 2 + 4 + 2) / 32.0);
  EXPECT_DOUBLE_EQ(o.freeDirectionsPower(), (16 + 14) / 32.0 / 2);
}

// In band (whole links), a link on carries both ways: a group needs the links
// its larger direction needs, both directions of each.
TEST(Oracle, WholeLinksCountTheLargerDirectionTwice) {
  const Tree t(4, 2);
  OracleBound o =
      OracleBound::make(t.topo, t.mt, 0.5, 1000, OracleBound::Rules::kWholeLinks).value();
  EXPECT_DOUBLE_EQ(o.closePeriod(), t.minimalShare());
  o.offer(HostId(0), HostId(4), 1600);  // 4 links out of leaf 0 and 4 into leaf 1
  o.offer(HostId(8), HostId(12), 700);  // 2 out of leaf 2, 2 into leaf 3
  EXPECT_DOUBLE_EQ(o.closePeriod(), 2 * (4 + 4 + 2 + 2) / 32.0);
  // Each direction on its own: leaves 0-3 need 4+1, 1+4, 2+1 and 1+2.
  EXPECT_DOUBLE_EQ(o.freeDirectionsPower(), (8 + 16) / 32.0 / 2);
}

// On every shape the bound with the rules needs at least as much as the one
// with every direction free, and both equal the minimal tree when idle.
TEST(Oracle, TheRulesOnlyAddToTheFreeBound) {
  for (auto [k, n] : {std::pair{4, 2}, std::pair{2, 4}, std::pair{3, 3}, std::pair{4, 3}}) {
    const Tree t(k, n);
    OracleBound o = bound(t);
    const auto hosts = static_cast<std::uint32_t>(t.topo.numHosts());
    double sum = 0;
    for (std::uint32_t period = 0; period < 20; ++period) {
      for (std::uint32_t m = 0; m < period * 3; ++m)  // more traffic each period
        o.offer(HostId((m * 7 + period) % hosts), HostId((m * 13 + 5) % hosts), 150);
      sum += o.closePeriod();
    }
    EXPECT_DOUBLE_EQ(o.switchLinkPower(), sum / 20);
    EXPECT_GE(o.switchLinkPower(), o.freeDirectionsPower()) << k << "-ary " << n << "-tree";
    EXPECT_GT(o.switchLinkPower(), t.minimalShare());
    EXPECT_LE(o.switchLinkPower(), 1.0);
  }
}

RunSpec oracleSpec(const std::string& text) {
  auto cfg = config::parseTextConfig(text, "test");
  EXPECT_TRUE(cfg) << cfg.status().toString();
  auto s = buildRunSpec(*cfg);
  EXPECT_TRUE(s) << s.status().toString();
  return *s;
}

TEST(Oracle, TargetDefaultsToThePolicysOnThresholdAndIsChecked) {
  EXPECT_DOUBLE_EQ(oracleSpec("gating { policy: STATIC u_off: 0.085 u_on: 0.435 }").oracleTarget,
                   0.435);
  EXPECT_DOUBLE_EQ(oracleSpec("oracle { target_utilization: 0.6 }").oracleTarget, 0.6);
  for (const char* bad :
       {"oracle { target_utilization: 0 }", "oracle { target_utilization: 1.5 }"}) {
    auto cfg = config::parseTextConfig(bad, "test");
    ASSERT_TRUE(cfg);
    const auto s = buildRunSpec(*cfg);
    ASSERT_FALSE(s) << bad;
    EXPECT_NE(s.status().message().find("oracle.target_utilization"), std::string::npos)
        << s.status().message();
  }
}

// A nearly idle run: the bound is the minimal tree in every period, and the
// dynamic policy, which sits there too, is as good as the bound.
TEST(Oracle, ANearlyIdleRunSitsOnTheBound) {
  const Tree t(4, 3);
  const RunSpec s = oracleSpec(
      "fabric { kary_n_tree { k: 4 n: 3 } } "
      "workload { uniform { rate: 0.001 duration_cycles: 40000 } } "
      "gating { policy: DYNAMIC u_on: 0.15 }");
  const RunOutput out = runEmulation(s, t.topo, t.mt, true, {}).value();
  ASSERT_TRUE(out.summary.has_oracle());
  const results::OracleReport& o = out.summary.oracle();
  EXPECT_TRUE(o.unavailable().empty());
  EXPECT_DOUBLE_EQ(o.target_utilization(), 0.15);
  EXPECT_DOUBLE_EQ(o.switch_link_power(), t.minimalShare());
  for (const PeriodRow& r : out.rows)
    EXPECT_DOUBLE_EQ(r.oraclePowerSwitchLinks, t.minimalShare());
  ASSERT_TRUE(o.has_efficiency());
  EXPECT_GT(o.efficiency(), 0.9);
  EXPECT_LT(o.efficiency(), 1.0 + 1e-9);
}

// The proportional policy against the dynamic one on a load step of an
// 8-ary 2-tree (docs/mechanisms.md §2.7): its two decisions after the step
// (at 22 000 and 24 000 cycles, the first seeing the load through one
// saturated link) turn every link on, usable T_on later; the dynamic policy
// has added one link per leaf and period.
TEST(Oracle, AfterAStepTheProportionalPolicyHasItsLinksWithinTwoPeriods) {
  const Tree t(8, 2);
  const auto sharesAt = [&](const char* policy, double cycles) {
    const RunSpec s =
        oracleSpec(std::string("fabric { kary_n_tree { k: 8 n: 2 } } gating { policy: ") + policy +
                   " u_on: 0.15 } workload { rate_points { point { at_cycles: 0 rate: 0.005 } "
                   "point { at_cycles: 20000 rate: 0.005 } point { at_cycles: 20000 rate: 0.3 } "
                   "point { at_cycles: 40000 rate: 0.3 } } }");
    const RunOutput out = runEmulation(s, t.topo, t.mt, true, {}).value();
    for (const PeriodRow& r : out.rows) {
      if (r.timeCycles == cycles) return r.linksOnShare.at(0);
    }
    ADD_FAILURE() << "no row at " << cycles;
    return 0.0;
  };
  EXPECT_LT(sharesAt("PROPORTIONAL", 20000), 0.5);  // before the step: the minimal tree
  EXPECT_DOUBLE_EQ(sharesAt("PROPORTIONAL", 26000), 1.0);
  EXPECT_LT(sharesAt("DYNAMIC", 26000), 0.75);
}

}  // namespace
}  // namespace ebb::replay
