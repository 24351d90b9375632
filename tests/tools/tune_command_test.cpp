// `ebb tune` as a user runs it: the recommended config replayed on its own
// meets the budget; shards merged give the same files as one sweep.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include <filesystem>

#include "configs/proto/replay.pb.h"  // generated
#include "tests/tools/tune_test_util.h"

namespace ebb::tools::tune {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::ebb;
using testing::scratch;
using testing::slurp;
using testing::writeSpec;

config::Report replayReport(const fs::path& dir, const fs::path& recommended) {
  const CliRun r = ebb({"replay", recommended.string(), "--out", (dir / "replay").string(),
                        "--quiet", "report.skip_plots=true"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  config::Report report;
  EXPECT_TRUE(
      google::protobuf::util::JsonStringToMessage(slurp(dir / "replay" / "report.json"), &report)
          .ok());
  return report;
}

TEST(TuneRecommended, MeetsItsLatencyBudgetReplayedAloneOnAShortRamp) {
  const auto dir = scratch("recommended-ramp");
  const auto spec = writeSpec(
      dir, testing::tinyRampBase(0.5) +
               "budget { latency_increase_pct: 3 } search_space { policy: [STATIC, DYNAMIC] "
               "u_off { values: [0.04] } u_on { values: [0.1, 0.3, 0.45, 0.6] } }");
  const CliRun t = ebb({"tune", spec.string(), "--out", (dir / "out").string(), "--quiet"});
  ASSERT_EQ(t.code, kExitOk) << t.err;
  ASSERT_TRUE(fs::exists(dir / "out" / "recommended.textproto")) << t.out;
  const config::Report report = replayReport(dir, dir / "out" / "recommended.textproto");
  EXPECT_LE(100 * report.mean_latency_increase(), 3.0 + 1e-9);
  EXPECT_LE(100 * report.p99_latency_increase(), 3.0 + 1e-9);
  EXPECT_GT(report.power_saving_switch_links(), 0.0);
  // The replay is the very run the sweep measured (runs are deterministic).
  EXPECT_NE(t.out.find(fmt::format("saved {:.1f}%", 100 * report.power_saving_switch_links())),
            std::string::npos)
      << t.out;
}

TEST(TuneRecommended, MeetsItsBudgetReplayedAloneOnTheAmgTrace) {
  const std::string trace = std::string(EBB_TRACES_DIR) + "/amg2013-27/amg27_events.csv";
  ASSERT_TRUE(fs::exists(trace)) << "no AMG trace at " << trace;
  const auto dir = scratch("recommended-amg");
  // A 3-ary 3-tree has exactly the trace's 27 hosts. U_on = 0.6 adds about 8%
  // to the mean latency, so the budget rules it out.
  const auto spec = writeSpec(dir,
                              "base { fabric { kary_n_tree { k: 3 n: 3 } } } "
                              "workload { name: \"amg\" spec { trace { path: \"" +
                                  trace +
                                  "\" } } } budget { app_slowdown_pct: 1 "
                                  "latency_increase_pct: 5 } search_space { u_on { values: "
                                  "[0.15, 0.6] } } skip_plots: true");
  const CliRun t = ebb({"tune", spec.string(), "--out", (dir / "out").string(), "--quiet"});
  ASSERT_EQ(t.code, kExitOk) << t.err;
  const std::string settings = slurp(dir / "out" / "settings.csv");
  EXPECT_NE(settings.find("over-budget"), std::string::npos) << settings;
  const config::Report report = replayReport(dir, dir / "out" / "recommended.textproto");
  ASSERT_GT(report.run().ranks(), 0u);
  EXPECT_LE(100 * report.app_slowdown(), 1.0 + 1e-9);
  EXPECT_LE(100 * report.mean_latency_increase(), 5.0 + 1e-9);
  EXPECT_LE(100 * report.p99_latency_increase(), 5.0 + 1e-9);
}

TEST(TuneShards, MergedShardsGiveTheSameFilesAsOneSweep) {
  const auto dir = scratch("shards");
  const auto spec = writeSpec(
      dir, testing::tinyRampBase(0.1) +
               "budget { latency_increase_pct: 10 } search_space { policy: [STATIC, DYNAMIC] "
               "u_off { values: [0.04, 0.1] } u_on { values: [0.1, 0.3, 0.45] } }");
  std::vector<std::string> merge = {"tune", spec.string(), "--quiet", "--merge"};
  for (int i = 0; i < 3; ++i) {
    const std::string out = (dir / fmt::format("shard{}", i)).string();
    const CliRun s = ebb({"tune", spec.string(), "--shard", fmt::format("{}/3", i), "--out", out,
                          "--quiet", "--jobs", "1"});
    ASSERT_EQ(s.code, kExitOk) << s.err;
    EXPECT_NE(s.out.find("left to the other shards"), std::string::npos) << s.out;
    EXPECT_FALSE(fs::exists(fs::path(out) / "runs.csv"));
    merge.push_back(out);
  }
  // Two shards of three are not enough: the merge names a missing run.
  const CliRun partial =
      ebb({"tune", spec.string(), "--quiet", "--merge", (dir / "shard0").string(),
           (dir / "shard1").string(), "--out", (dir / "partial").string()});
  EXPECT_EQ(partial.code, kExitError);
  EXPECT_NE(partial.err.find("is in none of the merged folders"), std::string::npos) << partial.err;
  merge.insert(merge.end(), {"--out", (dir / "merged").string()});
  const CliRun merged = ebb(merge);
  ASSERT_EQ(merged.code, kExitOk) << merged.err;
  EXPECT_NE(merged.out.find(" 0 computed now"), std::string::npos) << merged.out;
  const CliRun one =
      ebb({"tune", spec.string(), "--out", (dir / "one").string(), "--quiet", "--jobs", "2"});
  ASSERT_EQ(one.code, kExitOk) << one.err;
  for (const char* f :
       {"runs.csv", "runs.json", "settings.csv", "pareto.csv", "recommended.textproto"}) {
    const std::string a = slurp(dir / "merged" / f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_EQ(a, slurp(dir / "one" / f)) << f;
  }
}

TEST(TuneCommand, BadCommandLinesAndSpecsExitWithTheirCodes) {
  const auto dir = scratch("cli");
  const auto spec = writeSpec(dir, testing::tinyRampBase(0.1) +
                                       "budget { latency_increase_pct: 5 } search_space { u_on { "
                                       "values: [0.2] } } search { strategy: HALVING }");
  EXPECT_EQ(ebb({"tune", spec.string(), "--shard", "3/3"}).code, kExitUsage);
  EXPECT_EQ(ebb({"tune", spec.string(), "--shard", "x"}).code, kExitUsage);
  const CliRun halving =
      ebb({"tune", spec.string(), "--shard", "0/2", "--out", (dir / "out").string(), "--quiet"});
  EXPECT_EQ(halving.code, kExitError);
  EXPECT_NE(halving.err.find("--shard: only a grid search"), std::string::npos) << halving.err;
  const auto bad = writeSpec(dir, testing::tinyRampBase(0.1) +
                                      "budget { latency_increase_pct: -5 } search_space { u_on { "
                                      "values: [0.2] } }");
  const CliRun r = ebb({"tune", bad.string(), "--out", (dir / "out").string()});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("budget.latency_increase_pct: must be >= 0"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ebb::tools::tune
