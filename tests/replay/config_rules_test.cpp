// The configuration rules of docs/replay.md ("Configuration rules"), one table
// per category of bad input: an explicit zero is a value (never "unset"),
// unit conversions never wrap, and fields that do not apply are refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "configs/config_loader.h"
#include "replay/fabric_from_config.h"
#include "replay/run_spec.h"

namespace ebb::replay {
namespace {

struct Rejected {
  const char* text;
  const char* field;  // the message names it
  const char* rule;   // ... and the rule
};

void expectRejected(const Rejected& c) {
  Result<config::Config> cfg = config::parseTextConfig(c.text, "t");
  ASSERT_TRUE(cfg) << c.text << ": " << cfg.status().toString();
  Result<RunSpec> s = buildRunSpec(*cfg);
  ASSERT_FALSE(s) << c.text << " was accepted";
  EXPECT_EQ(s.status().code(), ErrorCode::kInvalidArgument) << c.text;
  const std::string m = s.status().message();
  EXPECT_NE(m.find(c.field), std::string::npos) << c.text << " -> " << m;
  EXPECT_NE(m.find(c.rule), std::string::npos) << c.text << " -> " << m;
}

RunSpec accepted(const std::string& text) {
  Result<config::Config> cfg = config::parseTextConfig(text, "t");
  EXPECT_TRUE(cfg) << text;
  Result<RunSpec> s = buildRunSpec(*cfg);
  EXPECT_TRUE(s) << text << ": " << s.status().toString();
  return s ? *s : RunSpec{};
}

// Every replay config shipped in configs/ loads, checks and builds its fabric
// (the daemon's agent_* and ebb tune's tune_* have tests of their own).
TEST(ConfigRules, EveryShippedReplayConfigLoadsAndBuildsItsFabric) {
  int checked = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(EBB_SOURCE_DIR) + "/configs")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".textproto" || name.rfind("agent_", 0) == 0 ||
        name.rfind("tune_", 0) == 0) {
      continue;
    }
    SCOPED_TRACE(name);
    const auto cfg = config::loadConfigFile(e.path().string());
    ASSERT_TRUE(cfg) << cfg.status().toString();
    const auto spec = buildRunSpec(*cfg, e.path().parent_path().string());
    EXPECT_TRUE(spec) << spec.status().toString();
    const auto topo = topologyFromConfig(cfg->fabric(), e.path().parent_path().string());
    EXPECT_TRUE(topo) << topo.status().toString();
    ++checked;
  }
  EXPECT_GE(checked, 15);
}

TEST(ConfigRules, AnExplicitZeroIsRejectedWhereTheRuleIsAboveZero) {
  const Rejected cases[] = {
      {"emulator { cycle_ps: 0 }", "emulator.cycle_ps", "must be > 0 (is 0)"},
      {"emulator { flit_bytes: 0 }", "emulator.flit_bytes", "must be > 0 (is 0)"},
      {"emulator { packet_bytes: 0 }", "emulator.packet_bytes", "must be > 0 (is 0)"},
      {"emulator { vcs: 0 }", "emulator.vcs", "must be > 0 (is 0)"},
      {"emulator { vc_buffer_bytes: 0 }", "emulator.vc_buffer_bytes", "must be > 0 (is 0)"},
      {"gating { check_period_cycles: 0 }", "gating.check_period_cycles", "must be > 0 (is 0)"},
      {"gating { u_on: 0 }", "gating.u_on", "0 < U_on <= 1"},
      {"lpi { mode: DEEP_SLEEP sleep_signal_ps: 0 }", "lpi.sleep_signal_ps", "must be > 0"},
      {"lpi { mode: DEEP_SLEEP quiet_ps: 0 }", "lpi.quiet_ps", "must be > 0"},
      {"lpi { mode: HYBRID refresh_ps: -1 }", "lpi.refresh_ps", "must be >= 0"},
      {"workload { message_bytes: 0 }", "workload.message_bytes", "must be > 0 (is 0)"},
      {"workload { alonso_ramp { time_scale: 0 } }", "workload.alonso_ramp.time_scale",
       "must be > 0"},
      {"workload { message_bytes_min: 0 message_bytes_max: 10 }", "workload.message_bytes_min",
       "must be > 0"},
      {"faults { retransmit_timeout_cycles: 0 }", "faults.retransmit_timeout_cycles",
       "must be > 0"},
      {"faults { random { mtbf_us: 10 max_failed: 0 } }", "faults.random.max_failed",
       "must be > 0"},
      {"workload { trace { path: \"t.csv\" ranks: 0 } }", "workload.trace.ranks", "must be > 0"},
      {"workload { collective { op: \"alltoall\" ranks: 4 iterations: 0 } }",
       "workload.collective.iterations", "must be in [1, 1000000]"},
  };
  for (const Rejected& c : cases)
    expectRejected(c);
}

// Each low-power-idle timer may fit the time range while a link's idle
// timeline, their sum, does not: refused, never a wrapped sum (a probe saw
// 1e13 % link power). The same timers a little shorter are fine.
TEST(ConfigRules, AnIdleTimelineBeyondTheTimeRangeIsRefused) {
  const char* rule = "a link's idle timeline";
  expectRejected({"lpi { mode: DEEP_SLEEP sleep_signal_ps: 4611686018427387904 hold_ts: 1 }",
                  "lpi.sleep_signal_ps", rule});
  expectRejected(
      {"lpi { mode: DEEP_SLEEP quiet_ps: 9223372036854775807 refresh_ps: "
       "9223372036854775807 }",
       "lpi.quiet_ps", rule});
  expectRejected({"lpi { mode: HYBRID hold_ts: 5e12 }", "lpi.hold_ts", rule});
  const auto cfg = config::parseTextConfig(
      "lpi { mode: HYBRID sleep_signal_ps: 1000000000000000 hold_ts: 2 }", "test");
  ASSERT_TRUE(cfg);
  EXPECT_TRUE(buildRunSpec(*cfg)) << "three 1000 s timers fit";
}

// An infinite mean time between failures is no rate: the rule said is the
// one broken (finite and > 0), not ">= 0", which inf meets.
TEST(ConfigRules, AnInfiniteMtbfIsRefusedAsNotFinite) {
  expectRejected({"faults { random { mtbf_us: inf } }", "faults.random.mtbf_us",
                  "must be a finite number > 0 (is inf)"});
  expectRejected({"faults { random { mtbf_us: 0 } }", "faults.random.mtbf_us",
                  "must be a finite number > 0 (is 0)"});
}

TEST(ConfigRules, AnExplicitZeroIsKeptWhereZeroMeansSomething) {
  // Absent and zero differ: each of these defaults to something else.
  EXPECT_EQ(accepted("seed: 0").emulator.seed, 0u);
  EXPECT_EQ(accepted("").emulator.seed, 1u);
  EXPECT_EQ(accepted("faults { detection_cycles: 0 }").faults.detectionPs, 0);
  EXPECT_EQ(accepted("").faults.detectionPs, 1'000'000);
  EXPECT_EQ(accepted("emulator { link_latency_cycles: 0 }").emulator.linkLatencyPs, 0);
  EXPECT_EQ(accepted("gating { turn_on_cycles: 0 }").emulator.turnOnPs, 0);
  EXPECT_EQ(accepted("faults { random { mtbf_us: 10 mt_share: 0 } }").faults.random.mtShare, 0.0);
  EXPECT_EQ(accepted("faults { random { mtbf_us: 10 } }").faults.random.mtShare, 0.5);
  // A ramp from no load at all.
  EXPECT_EQ(accepted("workload { alonso_ramp { low: 0 } }").workload.rate.at(0), 0.0);
  EXPECT_EQ(accepted("").workload.rate.at(0), 0.01);
  // The default detection is 1000 cycles of the configured cycle.
  EXPECT_EQ(accepted("emulator { cycle_ps: 500 }").faults.detectionPs, 500'000);
}

TEST(ConfigRules, UnitConversionsNeverWrap) {
  const Rejected cases[] = {
      {"gating { check_period_cycles: 18446744073709552 turn_on_cycles: 1 turn_off_cycles: 1 }",
       "gating.check_period_cycles", "beyond the time range"},
      {"emulator { cycle_ps: 9223372036854775000 }", "emulator.cycle_ps", "beyond the time range"},
      {"workload { uniform { rate: 0.1 duration_cycles: 9223372036854776 } }",
       "workload.uniform.duration_cycles", "beyond the time range"},
      {"workload { alonso_ramp { time_scale: 1e300 } }", "workload.alonso_ramp.time_scale",
       "beyond the time range"},
      {"lpi { mode: DEEP_SLEEP hold_ts: 1e30 }", "lpi.hold_ts", "beyond the time range"},
      {"emulator { flit_bytes: 9223372036854775807 }", "emulator.flit_bytes", "does not fit"},
      {"emulator { routing_delay_cycles: 9223372036854775807 }", "emulator.routing_delay_cycles",
       "beyond the time range"},
      {"gating { control_latency_cycles: 9223372036854775807 }", "gating.control_latency_cycles",
       "beyond the time range"},
      {"faults { detection_cycles: 9223372036854775807 }", "faults.detection_cycles",
       "beyond the time range"},
      {"workload { mix { jobs { collective { op: \"barrier\" ranks: 2 } start_us: 1e200 } } }",
       "start_us", "beyond the time range"},
      {"workload { rate_points { point { at_cycles: 0 rate: 0.1 } point { at_cycles: "
       "9223372036854775807 rate: 0.1 } } }",
       "workload.rate_points.point[1].at_cycles", "must be in"},
  };
  for (const Rejected& c : cases)
    expectRejected(c);
}

// The name heads the summary and the plots: one line of text.
TEST(ConfigRules, ANameWithControlCharactersIsRefused) {
  expectRejected({"name: \"a\\nb\"", "name: 'a\\x0ab'", "must be one line of text"});
  EXPECT_EQ(accepted("name: \"fat tree, 4-ary\"").name, "fat tree, 4-ary");
}

// The ramp climbs from low to high and back; a start above its peak (given or
// the default 0.6) is refused, an equal pair is a flat load.
TEST(ConfigRules, ARampStartsAtOrBelowItsPeak) {
  const Rejected cases[] = {
      {"workload { alonso_ramp { low: 0.5 high: 0.2 } }", "workload.alonso_ramp.low",
       "is above high"},
      {"workload { alonso_ramp { low: 0.7 } }", "workload.alonso_ramp.low", "above high (0.6)"},
  };
  for (const Rejected& c : cases)
    expectRejected(c);
  EXPECT_EQ(accepted("workload { alonso_ramp { low: 0.2 high: 0.2 time_scale: 0.01 } }")
                .workload.rate.max(),
            0.2);
}

TEST(ConfigRules, FieldsThatDoNotApplyAreRefused) {
  const Rejected cases[] = {
      {"gating { policy: DYNAMIC u_off: 0.05 }", "gating.u_off", "STATIC policy only"},
      {"gating { u_off: 0.05 }", "gating.u_off", "STATIC policy only"},
      {"gating { policy: ALL_ON u_off: 0.05 }", "gating.u_off", "STATIC policy only"},
      {"gating { policy: STATIC u_on: 0.2 }", "gating.u_off", "needs u_off"},
      {"workload { message_bytes_max: 100 }", "workload.message_bytes_min", "need both"},
      {"workload { message_bytes_min: 10 }", "workload.message_bytes_max", "need both"},
      {"workload { message_bytes: 50 message_bytes_min: 10 message_bytes_max: 100 }",
       "workload.message_bytes", "not both"},
      // Nothing sleeps without a low-power idle mode: a hold would be ignored.
      {"lpi { hold_ts: 2 }", "lpi.hold_ts", "low-power idle mode only (lpi.mode is left out"},
      {"lpi { mode: OFF hold_ts: 2 }", "lpi.hold_ts", "(lpi.mode is OFF)"},
      {"lpi { mode: OFF sleep_signal_ps: 5 }", "lpi.sleep_signal_ps", "(lpi.mode is OFF)"},
      {"lpi { quiet_ps: 5 }", "lpi.quiet_ps", "low-power idle mode only"},
      {"lpi { mode: OFF refresh_ps: 5 }", "lpi.refresh_ps", "(lpi.mode is OFF)"},
      {"lpi { link_speed: \"100GBASE-R\" }", "lpi.link_speed", "low-power idle mode only"},
      {"lpi { mode: OFF adaptive_hold { delay_budget_ns: 100 } }", "lpi.adaptive_hold",
       "set lpi.mode to FAST_WAKE"},
  };
  for (const Rejected& c : cases)
    expectRejected(c);
}

}  // namespace
}  // namespace ebb::replay
