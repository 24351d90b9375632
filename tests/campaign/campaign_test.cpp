// The campaign: scenarios run and aggregate, the same summary whatever the
// number of jobs, and no violation of the recovery bound.
#include <gtest/gtest.h>

#include "campaign/campaign.h"
#include "campaign/summary.h"
#include "campaign_test_util.h"

namespace ebb::campaign {
namespace {

using testing::baseConfig;

CampaignOptions options(std::uint64_t scenarios, int jobs, int periods) {
  CampaignOptions o;
  o.seed = 11;
  o.scenarios = scenarios;
  o.jobs = jobs;
  o.shape.periods = periods;
  return o;
}

TEST(Campaign, SummaryIsTheSameForOneAndTwoJobs) {
  const config::Config base = baseConfig(4, 2);
  Result<CampaignResult> one = runCampaign(base, options(8, 1, 12));
  Result<CampaignResult> two = runCampaign(base, options(8, 2, 12));
  ASSERT_TRUE(one && two);
  const CampaignInfo info{"base", "4-ary 2-tree", 11, 12};
  EXPECT_EQ(summaryJson(info, *one), summaryJson(info, *two));
  EXPECT_EQ(scenariosCsv(*one), scenariosCsv(*two));
  EXPECT_EQ(one->totals.scenarios, 8u);
  EXPECT_GT(one->totals.messagesDelivered, 0u);
  for (std::size_t i = 0; i < one->scenarios.size(); ++i) {
    EXPECT_EQ(one->scenarios[i].index, i);
    EXPECT_EQ(one->scenarios[i].seed, scenarioSeed(11, i));
  }
}

// 20 scenarios on a 4-ary 2-tree: every one runs to its end, faults are
// injected and recovered from, and no connectable pair stays disconnected
// beyond the recovery bound.
TEST(Campaign, SmallCampaignHasNoViolation) {
  const config::Config base = baseConfig(4, 2);
  Result<CampaignResult> r = runCampaign(base, options(20, 2, 24));
  ASSERT_TRUE(r) << r.status().toString();
  const CampaignTotals& t = r->totals;
  EXPECT_EQ(t.scenarios, 20u);
  EXPECT_EQ(t.failedRuns, 0u) << t.firstError;
  EXPECT_EQ(t.violations, 0u) << t.firstViolation;
  EXPECT_GE(t.faultsScheduled, 20u);
  EXPECT_GT(t.repairsScheduled, 0u);
  // The runner reports the failures it injected and the restarts it did.
  EXPECT_GT(t.faultsInjected, 0u);
  EXPECT_LE(t.faultsInjected, t.faultsScheduled);
  EXPECT_EQ(t.agentRestarts, 20u);
  EXPECT_GT(t.recoveryBoundPs, 0);
  EXPECT_LE(t.maxRecoveryPs, t.recoveryBoundPs);
  EXPECT_GT(t.messagesDelivered, 0u);
  for (const ScenarioResult& s : r->scenarios) {
    EXPECT_GE(s.periods, 24) << "scenario " << s.index << " ended early";
    EXPECT_GT(s.messagesGenerated, 0u);
  }
}

TEST(Campaign, WorstIsTheOneWithTheMostViolationsThenTheLongestRecovery) {
  std::vector<ScenarioResult> s(4);
  for (std::size_t i = 0; i < s.size(); ++i) {
    s[i].index = i;
    s[i].seed = 100 + i;
  }
  s[1].faults.maxRecoveryPs = 5'000'000;
  s[2].faults.violations = 3;
  s[2].faults.maxRecoveryPs = 1'000;
  s[2].faults.firstViolation = "at 6000000 ps: H1 -> H7";
  s[3].faults.violations = 3;
  s[3].faults.maxRecoveryPs = 2'000;
  CampaignTotals t = aggregate(s);
  EXPECT_EQ(t.worst, 3u);
  EXPECT_EQ(t.violations, 6u);
  EXPECT_EQ(t.scenariosWithViolations, 2u);
  EXPECT_EQ(t.maxRecoveryPs, 5'000'000);
  EXPECT_NE(t.worstReason.find("the most violations (3)"), std::string::npos) << t.worstReason;
  EXPECT_EQ(t.firstViolation, "scenario 2 (seed 102): at 6000000 ps: H1 -> H7");
  s[2].faults.violations = 0;
  s[3].faults.violations = 0;
  t = aggregate(s);
  EXPECT_EQ(t.worst, 1u);
  EXPECT_NE(t.worstReason.find("longest recovery (5000000 ps)"), std::string::npos);
  // A failed run is the worst of all.
  s[0].error = "E_INTERNAL: boom";
  t = aggregate(s);
  EXPECT_EQ(t.worst, 0u);
  EXPECT_EQ(t.failedRuns, 1u);
  EXPECT_EQ(t.firstError, "scenario 0 (seed 100): E_INTERNAL: boom");
}

// Pairs can be cut without any host cut off from the main part (a failed
// direction: its host still sends, or still receives): the two counts are
// kept apart.
TEST(Campaign, ScenariosWithCutPairsAndWithCutOffHostsAreCountedApart) {
  std::vector<ScenarioResult> s(3);
  // Pairs cut with every host still joined to the main part both ways (an
  // up*/down* path to and from the main part is no path between two hosts).
  s[0].faults.physicallyCutPairs = 8;
  s[1].faults.physicallyCutPairs = 6;  // a host lost its cable
  s[1].faults.cutOffHosts = {"H3"};
  const CampaignTotals t = aggregate(s);
  EXPECT_EQ(t.physicallyCutPairs, 14u);
  EXPECT_EQ(t.scenariosWithCutPairs, 2u);
  EXPECT_EQ(t.scenariosWithCutHosts, 1u);
}

TEST(Campaign, BadBaseConfigNamesTheField) {
  config::Config base = baseConfig(4, 2);
  base.mutable_gating()->set_turn_on_cycles(5000);  // beyond the check period
  Result<CampaignResult> r = runCampaign(base, options(2, 1, 8));
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("gating.turn_on_cycles"), std::string::npos)
      << r.status().toString();
  base = baseConfig(1, 2);
  r = runCampaign(base, options(2, 1, 8));
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("fabric.kary_n_tree"), std::string::npos)
      << r.status().toString();
}

}  // namespace
}  // namespace ebb::campaign
