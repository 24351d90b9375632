// report.latency_warmup_cycles (docs/replay.md, "Latency warm-up"): the
// latency statistics leave out the messages created before it, as a
// simulator's warm-up does; everything else in the run stays the same.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "configs/config_loader.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "replay/run_spec.h"
#include "replay/runner.h"

namespace ebb::replay {
namespace {

Result<RunSpec> warmupSpec(const std::string& text) {
  Result<config::Config> cfg = config::parseTextConfig(text, "t");
  if (!cfg) return cfg.status();
  return buildRunSpec(*cfg);
}

// An overloaded input-queued network from a cold start: the source queues
// grow all run long, so leaving out the first messages raises the mean.
constexpr const char* kLoaded =
    "fabric { kary_n_tree { k: 2 n: 3 } } gating { policy: ALL_ON } "
    "emulator { switch_model: INPUT_QUEUED up_routing: RANDOM } "
    "workload { uniform { rate: 0.9 duration_cycles: 8000 } message_bytes: 64 } ";

TEST(LatencyWarmup, LeavesOutTheMessagesOfTheColdStartOnly) {
  const fabric::Topology topo = fabric::KAryNTree::make(2, 3).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  Result<RunSpec> cold = warmupSpec(std::string(kLoaded) + "report { }");
  Result<RunSpec> warm =
      warmupSpec(std::string(kLoaded) + "report { latency_warmup_cycles: 2000 }");
  ASSERT_TRUE(cold) << cold.status().toString();
  ASSERT_TRUE(warm) << warm.status().toString();
  const RunOutput all = runEmulation(*cold, topo, mt, false, {}).value();
  const RunOutput later = runEmulation(*warm, topo, mt, false, {}).value();
  EXPECT_EQ(all.summary.latency_messages(), all.summary.messages_delivered());
  EXPECT_EQ(all.summary.latency_warmup_cycles(), 0);
  EXPECT_EQ(later.summary.latency_warmup_cycles(), 2000);
  // The same run: only which messages the latency is over differs.
  EXPECT_EQ(later.summary.messages_delivered(), all.summary.messages_delivered());
  EXPECT_EQ(later.summary.relative_power_all_links(), all.summary.relative_power_all_links());
  EXPECT_EQ(later.rows.size(), all.rows.size());
  EXPECT_LT(later.summary.latency_messages(), all.summary.latency_messages());
  // About three quarters of the messages were created after cycle 2000.
  const double share = static_cast<double>(later.summary.latency_messages()) /
                       static_cast<double>(all.summary.latency_messages());
  EXPECT_GT(share, 0.70);
  EXPECT_LT(share, 0.80);
  EXPECT_GT(later.summary.mean_latency_cycles(), all.summary.mean_latency_cycles());
}

TEST(LatencyWarmup, BadValuesAreRefusedNamingTheField) {
  Result<RunSpec> negative = warmupSpec("report { latency_warmup_cycles: -1 }");
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.status().message().find("report.latency_warmup_cycles: must be >= 0"),
            std::string::npos)
      << negative.status().message();
  Result<RunSpec> huge = warmupSpec("report { latency_warmup_cycles: 9223372036854775807 }");
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.status().message().find("report.latency_warmup_cycles"), std::string::npos);
  // A warm-up as long as the workload leaves nothing to measure: refused
  // before the run, not a report with no latency.
  const fabric::Topology topo = fabric::KAryNTree::make(2, 3).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  Result<RunSpec> whole =
      warmupSpec(std::string(kLoaded) + "report { latency_warmup_cycles: 8000 }");
  ASSERT_TRUE(whole) << whole.status().toString();
  Result<RunOutput> run = runEmulation(*whole, topo, mt, false, {});
  ASSERT_FALSE(run);
  EXPECT_NE(run.status().message().find(
                "report.latency_warmup_cycles: 8000 cycles leave no message to measure"),
            std::string::npos)
      << run.status().message();
}

// A traffic file's messages end at its last one, not at the check period
// its run rounds up to: a warm-up past the last is refused (it was run,
// reporting a latency of 0 over no message); one at it measures that one.
TEST(LatencyWarmup, ATrafficFileEndsAtItsLastMessage) {
  const fabric::Topology topo = fabric::KAryNTree::make(2, 1).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  const std::string path = ::testing::TempDir() + "/warmup_traffic.txt";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("0 0 1 64\n10 1 0 128\n20 0 1 64\n", f);  // the last at cycle 20
    std::fclose(f);
  }
  const auto runWith = [&](int warmup) {
    Result<config::Config> cfg = config::parseTextConfig(
        "fabric { kary_n_tree { k: 2 n: 1 } } gating { policy: ALL_ON } "
        "report { latency_warmup_cycles: " +
            std::to_string(warmup) + " }",
        "t");
    EXPECT_TRUE(cfg);
    Result<RunSpec> spec = buildRunSpec(*cfg);
    EXPECT_TRUE(spec) << spec.status().toString();
    spec->trafficFile = path;
    return runEmulation(*spec, topo, mt, false, {});
  };
  Result<RunOutput> past = runWith(21);
  ASSERT_FALSE(past);
  EXPECT_NE(past.status().message().find("21 cycles leave no message to measure: the workload "
                                         "creates its last before cycle 21"),
            std::string::npos)
      << past.status().message();
  Result<RunOutput> at = runWith(20);
  ASSERT_TRUE(at) << at.status().toString();
  EXPECT_EQ(at->summary.latency_messages(), 1u);
  EXPECT_TRUE(at->summary.has_mean_latency_cycles());
  EXPECT_GT(at->summary.mean_latency_cycles(), 0);
}

}  // namespace
}  // namespace ebb::replay
