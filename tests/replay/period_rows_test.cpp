// Merging timeseries rows (replay/period_rows.h): the timeseries period and
// the plots' downsampling.
#include <gtest/gtest.h>

#include "configs/config_loader.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "replay/period_rows.h"
#include "replay/run_spec.h"
#include "replay/runner.h"

namespace ebb::replay {
namespace {

PeriodRow row(double t, double power, double latency, std::uint64_t delivered) {
  PeriodRow r;
  r.timeCycles = t;
  r.injectedRate = power / 2;
  r.offered = power;
  r.accepted = power;
  r.powerSwitchLinks = power;
  r.powerAllLinks = power;
  r.meanLatencyCycles = latency;
  r.delivered = delivered;
  r.linksOnShare = {power};
  return r;
}

TEST(PeriodRows, MergedRowsAverageRatesAndWeighLatencyByDeliveries) {
  RowMerger m;
  m.add(row(100, 0.2, 10, 1));
  m.add(row(200, 0.6, 40, 3));
  const PeriodRow r = m.take();
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(r.timeCycles, 200);
  EXPECT_DOUBLE_EQ(r.powerSwitchLinks, 0.4);
  EXPECT_DOUBLE_EQ(r.linksOnShare.at(0), 0.4);
  EXPECT_DOUBLE_EQ(r.meanLatencyCycles, (10.0 + 3 * 40.0) / 4);
  EXPECT_EQ(r.delivered, 4u);
  // A period without deliveries has no latency to weigh.
  m.add(row(300, 0.1, 0, 0));
  EXPECT_EQ(m.take().meanLatencyCycles, 0);
}

TEST(PeriodRows, DownsampleKeepsAtMostTheRowsAskedAndEveryDelivery) {
  std::vector<PeriodRow> rows;
  for (int i = 1; i <= 10; ++i)
    rows.push_back(row(100.0 * i, 0.1 * i, 5, 2));
  const auto out = downsample(rows, 3);
  ASSERT_EQ(out.size(), 3u);  // groups of 4, 4, 2
  EXPECT_EQ(out.back().timeCycles, 1000);
  std::uint64_t delivered = 0;
  for (const PeriodRow& r : out)
    delivered += r.delivered;
  EXPECT_EQ(delivered, 20u);
  EXPECT_EQ(downsample(rows, 20).size(), 10u);
}

TEST(PeriodRows, TheTimeseriesPeriodIsAWholeNumberOfCheckPeriods) {
  const auto build = [](const std::string& text) {
    return buildRunSpec(config::parseTextConfig(text, "t").value());
  };
  Result<RunSpec> s = build("report { timeseries_period_cycles: 8000 }");
  ASSERT_TRUE(s) << s.status().toString();
  EXPECT_EQ(s->timeseriesGroup, 4);
  for (const char* bad :
       {"report { timeseries_period_cycles: 3000 }", "report { timeseries_period_cycles: 1000 }",
        "report { timeseries_period_cycles: 0 }"}) {
    Result<RunSpec> r = build(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.status().message().find("report.timeseries_period_cycles: must be a whole number "
                                        "of check periods (2000 cycles)"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(PeriodRows, ARunHasOneRowPerTimeseriesPeriod) {
  const fabric::Topology topo = fabric::KAryNTree::make(2, 2).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  const auto rowsWith = [&](const std::string& extra) {
    const RunSpec s =
        buildRunSpec(config::parseTextConfig(
                         "workload { uniform { rate: 0.1 duration_cycles: 40000 } } " + extra, "t")
                         .value())
            .value();
    return runEmulation(s, topo, mt, true, {}).value().rows;
  };
  const auto each = rowsWith("");
  const auto merged = rowsWith("report { timeseries_period_cycles: 10000 }");
  EXPECT_EQ(each.size(), 20u);
  ASSERT_EQ(merged.size(), 4u);
  EXPECT_EQ(merged.back().timeCycles, each.back().timeCycles);
  std::uint64_t a = 0, b = 0;
  for (const auto& r : each)
    a += r.delivered;
  for (const auto& r : merged)
    b += r.delivered;
  EXPECT_EQ(a, b);
}

TEST(PeriodRows, RowsAreWeighedByTheirSpans) {
  RowMerger m;
  PeriodRow busy = row(100, 1.0, 10, 1);
  busy.spanCycles = 100;
  PeriodRow idle = row(1000, 0.1, 0, 0);
  idle.spanCycles = 900;  // nine idle periods fast-forwarded as one row
  m.add(busy);
  m.add(idle);
  EXPECT_DOUBLE_EQ(m.spanCycles(), 1000);
  const PeriodRow r = m.take();
  EXPECT_DOUBLE_EQ(r.powerAllLinks, (100 * 1.0 + 900 * 0.1) / 1000);
  EXPECT_DOUBLE_EQ(r.linksOnShare.at(0), (100 * 1.0 + 900 * 0.1) / 1000);
  EXPECT_DOUBLE_EQ(r.spanCycles, 1000);
  EXPECT_DOUBLE_EQ(r.meanLatencyCycles, 10);
}

// Seconds of compute between phases: the fast-forward skips the idle check
// periods and changes nothing but the number of scheduler tasks run.
TEST(PeriodRows, IdleFastForwardGivesTheSameResultsWithFewerSamples) {
  const fabric::Topology topo = fabric::KAryNTree::make(4, 2).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  for (const char* mode : {"DEEP_SLEEP", "HYBRID"}) {
    SCOPED_TRACE(mode);
    const auto run = [&](bool fastForward) {
      RunSpec s =
          buildRunSpec(config::parseTextConfig(
                           std::string("workload { motif { name: \"halo3d\" ranks: 16 "
                                       "iterations: 3 cells: 4 compute_us: 3000 } } "
                                       "gating { policy: ALL_ON } lpi { hold_ts: 1 mode: ") +
                               mode + " } report { skip_baseline: true }",
                           "t")
                           .value())
              .value();
      s.idleFastForward = fastForward;
      return runEmulation(s, topo, mt, true, {}).value();
    };
    const RunOutput each = run(false);
    const RunOutput skipped = run(true);
    const results::RunSummary& a = each.summary;
    const results::RunSummary& b = skipped.summary;
    EXPECT_EQ(a.messages_delivered(), b.messages_delivered());
    EXPECT_GT(a.messages_delivered(), 0u);
    EXPECT_EQ(a.mean_latency_cycles(), b.mean_latency_cycles());
    EXPECT_EQ(a.p99_latency_cycles(), b.p99_latency_cycles());
    EXPECT_DOUBLE_EQ(a.relative_power_all_links(), b.relative_power_all_links());
    EXPECT_LT(b.relative_power_all_links(), 0.5);  // the links slept through the compute
    EXPECT_DOUBLE_EQ(a.oracle().switch_link_power(), b.oracle().switch_link_power());
    EXPECT_EQ(a.lpi().wakeups(), b.lpi().wakeups());
    EXPECT_LT(b.events() * 5, a.events());  // most samples skipped
    // The rows cover the same time, and their span-weighted power is the run's.
    double spanA = 0, spanB = 0, energyB = 0;
    for (const PeriodRow& r : each.rows)
      spanA += r.spanCycles;
    for (const PeriodRow& r : skipped.rows) {
      spanB += r.spanCycles;
      energyB += r.spanCycles * r.powerAllLinks;
    }
    EXPECT_DOUBLE_EQ(spanA, spanB);
    EXPECT_LT(skipped.rows.size(), each.rows.size());
    for (const PeriodRow& r : skipped.rows)
      EXPECT_EQ(r.linksOnShare, each.rows.front().linksOnShare);  // measured per row
    EXPECT_EQ(each.rows.front().linksOnShare, std::vector<double>({1.0}));
    EXPECT_NEAR(energyB / spanB, b.relative_power_all_links(), 1e-9);
  }
}

// A closed-loop run that outlasts its estimated span keeps at most twice the
// row limit: the rows so far merge in pairs and the row period doubles.
TEST(PeriodRows, ALongClosedLoopRunStaysWithinTheRowLimit) {
  const fabric::Topology topo = fabric::KAryNTree::make(4, 2).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  RunSpec s = buildRunSpec(config::parseTextConfig(
                               "workload { motif { name: \"sweep3d\" ranks: 16 iterations: 4 "
                               "cells: 8 compute_us: 40 } } gating { policy: ALL_ON } "
                               "lpi { mode: FAST_WAKE } report { skip_baseline: true }",
                               "t")
                               .value())
                  .value();
  const RunOutput all = runEmulation(s, topo, mt, true, {}).value();
  s.maxTimeseriesRows = 8;
  const RunOutput few = runEmulation(s, topo, mt, true, {}).value();
  ASSERT_GT(all.rows.size(), 16u);
  EXPECT_LE(few.rows.size(), 16u);
  EXPECT_GE(few.rows.size(), 8u);
  double spanAll = 0, spanFew = 0, energyFew = 0;
  std::uint64_t delivered = 0;
  for (const PeriodRow& r : all.rows)
    spanAll += r.spanCycles;
  for (const PeriodRow& r : few.rows) {
    spanFew += r.spanCycles;
    energyFew += r.spanCycles * r.powerAllLinks;
    delivered += r.delivered;
  }
  EXPECT_DOUBLE_EQ(spanAll, spanFew);
  EXPECT_EQ(delivered, few.summary.messages_delivered());
  EXPECT_NEAR(energyFew / spanFew, few.summary.relative_power_all_links(), 1e-9);
  EXPECT_EQ(all.summary.relative_power_all_links(), few.summary.relative_power_all_links());
}

}  // namespace
}  // namespace ebb::replay
