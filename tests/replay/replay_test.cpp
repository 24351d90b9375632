// Agents in the loop on shortened alonso-ramps, in virtual time: the "check"
// facts of docs/mechanisms.md §2 and §6.1, determinism, and bad configs.
#include <gtest/gtest.h>

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cmath>

#include "configs/config_loader.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "replay/run_spec.h"
#include "replay/runner.h"

namespace ebb::replay {
namespace {

struct Fixture {
  explicit Fixture(int k = 4, int n = 4)
      : topo(fabric::KAryNTree::make(k, n).value().build()),
        mt(fabric::MinimalTree::build(topo).value()) {}
  fabric::Topology topo;
  fabric::MinimalTree mt;
};

RunSpec spec(const std::string& text) {
  auto cfg = config::parseTextConfig(text, "test");
  EXPECT_TRUE(cfg) << cfg.status().toString();
  auto s = buildRunSpec(*cfg);
  EXPECT_TRUE(s) << s.status().toString();
  return *s;
}

const char* kRamp = "workload { alonso_ramp { time_scale: 0.25 } } ";

TEST(Replay, MinimalTreeLinksNeverOffAndEveryMessageArrives) {
  Fixture f;
  for (const char* gating : {"gating { policy: DYNAMIC u_on: 0.15 }",
                             "gating { policy: STATIC u_off: 0.085 u_on: 0.435 }"}) {
    const RunSpec s = spec(std::string(kRamp) + gating);
    const RunOutput out = runEmulation(s, f.topo, f.mt, true, {}).value();
    EXPECT_EQ(out.summary.messages_delivered(), out.summary.messages_generated());
    EXPECT_GT(out.summary.link_transitions(), 10u);
    for (const auto& d : out.decisions) {
      if (d.turnOn || !d.refused.empty()) continue;
      const fabric::LinkId link = f.topo.sw(d.port.sw).ports[d.port.index].link;
      EXPECT_FALSE(f.mt.containsLink(link)) << f.topo.describeLink(link);
    }
    // The runner proves connectivity of the usable links after every direction
    // that stops being usable and throws otherwise: one proof per turn-off.
    const auto offs = std::count_if(
        out.decisions.begin(), out.decisions.end(),
        [](const agent::DecisionRecord& d) { return !d.turnOn && d.refused.empty(); });
    EXPECT_GT(offs, 10);
    EXPECT_EQ(out.connectivityProofs, static_cast<std::uint64_t>(offs));
  }
}

// A packet still on its way into a switch (a long wire, or a long route
// stage) when the switch's last input went off reaches a down direction the
// down-link rule just turned off: the agent turns it on for the waiting
// packet (rule packets-waiting, as for an up link), on both switch models,
// and every message arrives.
// The timeseries adds up to the report: the drain after the workload's end
// (which the report's deliveries and power count) has rows of its own,
// marked, on both the gated run and the all-on one.
TEST(Replay, TheTimeseriesWithItsDrainAddsUpToTheReport) {
  Fixture f(5, 3);
  const RunSpec s = spec(
      "workload { uniform { rate: 0.1 duration_cycles: 10000 } } "
      "gating { policy: DYNAMIC u_on: 0.15 }");
  for (bool gated : {true, false}) {
    SCOPED_TRACE(gated ? "gated" : "all on");
    const RunOutput out = runEmulation(s, f.topo, f.mt, gated, {}).value();
    std::uint64_t delivered = 0;
    double span = 0, power = 0;
    std::size_t drainRows = 0;
    bool drainStarted = false;
    for (const PeriodRow& r : out.rows) {
      delivered += r.delivered;
      span += r.spanCycles;
      power += r.powerSwitchLinks * r.spanCycles;
      drainRows += r.drain ? 1 : 0;
      EXPECT_TRUE(r.drain || !drainStarted) << "a workload row after the drain began";
      drainStarted = drainStarted || r.drain;
      if (r.drain) {
        EXPECT_EQ(r.injectedRate, 0.0);
      }
    }
    EXPECT_GT(drainRows, 0u);
    // All on, the network empties within a few hundred cycles of the end,
    // and the run ends then, not at the next check period (2000 cycles).
    if (!gated) {
      EXPECT_LT(span, 10'000 + 500) << "an idle tail after the drain";
    }
    EXPECT_EQ(delivered, out.summary.messages_delivered());
    EXPECT_NEAR(power / span, out.summary.relative_power_switch_links(), 1e-9);
  }
}

TEST(Replay, ADownDirectionTurnedOffUnderAnArrivingPacketGoesBackOn) {
  Fixture f(4, 3);
  const std::string base =
      "gating { policy: DYNAMIC check_period_cycles: 500 turn_on_cycles: 100 turn_off_cycles: 0 "
      "} workload { rate_points { point { at_cycles: 0 rate: 0.05 } point { at_cycles: 4000 "
      "rate: 0 } point { at_cycles: 40000 rate: 0 } } } ";
  for (const char* emulator : {"emulator { link_latency_cycles: 50 } seed: 2",
                               "emulator { switch_model: INPUT_QUEUED routing_delay_cycles: 200 "
                               "} seed: 1"}) {
    SCOPED_TRACE(emulator);
    const RunOutput out = runEmulation(spec(base + emulator), f.topo, f.mt, true, {}).value();
    EXPECT_EQ(out.summary.messages_delivered(), out.summary.messages_generated());
    EXPECT_EQ(out.summary.packets_stranded(), 0u);
    const bool downOn =
        std::any_of(out.decisions.begin(), out.decisions.end(), [](const agent::DecisionRecord& d) {
          return d.source == "packets-waiting" && !d.up && d.turnOn;
        });
    EXPECT_TRUE(downOn);
  }
}

// Static [0.03, 0.15] at the paper's slope (the rate rises 0.0098 per check
// period): leaves still pass 3/4 U_on = 0.11 with fewer than four up links and
// reach all four a few periods later, at 0.156 in this run (0.162 on the full
// ramp); one link per period per switch plus T_on is the lag.
TEST(Replay, StaticThresholdsAtThePapersSlopeReachAllLinksOnWithALag) {
  Fixture f;
  // The paper's slope (0.59 per 120 000 cycles), stopping at 0.2 to stay short.
  const RunSpec s = spec(
      "workload { alonso_ramp { low: 0.01 high: 0.2 time_scale: 0.322 } } "
      "gating { policy: STATIC u_off: 0.03 u_on: 0.15 }");
  const RunOutput out = runEmulation(s, f.topo, f.mt, true, {}).value();
  double firstFull = -1;
  for (const PeriodRow& r : out.rows) {
    if (r.rising && r.linksOnShare.back() >= 0.999) {
      firstFull = r.injectedRate;
      break;
    }
  }
  ASSERT_GT(firstFull, 0);
  EXPECT_GT(firstFull, 0.12);
  EXPECT_LT(firstFull, 0.17);
  // Below it, the leaves pass through intermediate states (1..4 up links).
  std::vector<double> shares;
  for (const PeriodRow& r : out.rows) {
    if (r.rising) shares.push_back(r.linksOnShare.back());
  }
  const auto distinct =
      std::count_if(shares.begin(), shares.end(), [](double x) { return x > 0.3 && x < 0.95; });
  EXPECT_GT(distinct, 0);
}

// The four stable states of static [0.03, 0.15]: on a ramp 13x slower than the
// paper's (time_scale 3, up to 0.16) the leaves' share of up links on sits at
// 1/4, 2/4, 3/4 and 4/4 for many periods each. A leaf forwards about
// 4r(N-4)/(N-1) flits/cycle upward, so i up links stop sufficing once that
// passes i*U_on: at r = 0.038, 0.076 and 0.114 (= 3/4 U_on, the paper's 0.11).
// Noise in one period's utilization makes leaves step up a little early,
// never late; static thresholds do not step back down before U_off.
TEST(Replay, StaticThresholdsShowFourStableStatesAndAllLinksOnNearPoint11) {
  Fixture f;
  const RunSpec s = spec(
      "workload { alonso_ramp { low: 0.01 high: 0.16 time_scale: 3 } } "
      "gating { policy: STATIC u_off: 0.03 u_on: 0.15 }");
  const RunOutput out = runEmulation(s, f.topo, f.mt, true, {}).value();
  const double n = 256;
  const double perLink = 4 * (n - 4) / (n - 1) / 0.15;  // leaf upward flits per rate, over U_on
  int periods[5] = {0, 0, 0, 0, 0};
  double lastRate[5] = {0, 0, 0, 0, 0};
  double firstFull = -1;
  for (const PeriodRow& r : out.rows) {
    if (!r.rising) continue;
    const double share = r.linksOnShare.back();
    for (int i = 1; i <= 4; ++i) {
      if (std::abs(share - i / 4.0) < 1e-9) {
        ++periods[i];
        lastRate[i] = r.injectedRate;
      }
    }
    if (share >= 0.999 && firstFull < 0) firstFull = r.injectedRate;
  }
  for (int i = 1; i <= 4; ++i) {
    EXPECT_GE(periods[i], 8) << "leaves with " << i << " up links on: a stable state";
  }
  // Each state ends no later than the rate at which its links stop sufficing
  // (plus one period of ramp and measurement lag).
  for (int i = 1; i <= 3; ++i) {
    EXPECT_LT(lastRate[i], i / perLink + 0.005) << "state " << i;
    EXPECT_LT(lastRate[i], lastRate[i + 1]);
  }
  EXPECT_GT(firstFull, 0.10);
  EXPECT_LT(firstFull, 3 / perLink + 0.01);
}

TEST(Replay, DynamicSavesMoreThanStaticAtTheSameUOnWithoutAddedLatency) {
  Fixture f;
  const RunOutput dyn =
      runEmulation(spec(std::string(kRamp) + "gating { policy: DYNAMIC u_on: 0.15 }"), f.topo, f.mt,
                   true, {})
          .value();
  const RunOutput sta =
      runEmulation(spec(std::string(kRamp) + "gating { policy: STATIC u_off: 0.03 u_on: 0.15 }"),
                   f.topo, f.mt, true, {})
          .value();
  const RunOutput on =
      runEmulation(spec(std::string(kRamp) + "gating { policy: ALL_ON }"), f.topo, f.mt, false, {})
          .value();
  EXPECT_LT(dyn.summary.relative_power_switch_links(), sta.summary.relative_power_switch_links());
  EXPECT_LT(dyn.summary.relative_power_switch_links(), 0.95);
  EXPECT_DOUBLE_EQ(on.summary.relative_power_switch_links(), 1.0);
  EXPECT_LT(dyn.summary.mean_latency_cycles(), on.summary.mean_latency_cycles() * 1.05);
}

TEST(Replay, SameConfigAndSeedGiveByteIdenticalReports) {
  Fixture f(4, 3);
  const RunSpec s = spec("workload { alonso_ramp { time_scale: 0.1 } } gating { policy: DYNAMIC }");
  auto json = [&] {
    std::string out;
    google::protobuf::util::JsonPrintOptions o;
    o.always_print_primitive_fields = true;
    EXPECT_TRUE(google::protobuf::util::MessageToJsonString(
                    runEmulation(s, f.topo, f.mt, true, {}).value().summary, &out, o)
                    .ok());
    return out;
  };
  const std::string a = json();
  EXPECT_EQ(a, json());
  RunSpec other = s;
  other.workload.seed = 99;
  other.emulator.seed = 99;
  std::string b;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(
                  runEmulation(other, f.topo, f.mt, true, {}).value().summary, &b)
                  .ok());
  EXPECT_NE(a, b);
}

TEST(Replay, LpiWithGatingOffMatchesThePowerModel) {
  Fixture f(2, 2);
  // Fast-wake, hold 0: idle links sit at P_FW, so relative power of the links
  // that are on lies strictly between P_FW and 1 under light load.
  const RunSpec s = spec(
      "gating { policy: ALL_ON } lpi { mode: FAST_WAKE hold_ts: 0 } "
      "workload { uniform { rate: 0.01 duration_cycles: 50000 } }");
  const RunOutput out = runEmulation(s, f.topo, f.mt, true, {}).value();
  EXPECT_GT(out.summary.lpi_relative_power(), 0.6);
  EXPECT_LT(out.summary.lpi_relative_power(), 0.7);
  EXPECT_EQ(out.summary.messages_delivered(), out.summary.messages_generated());
}

// The adaptive hold in a whole run: every link direction keeps its charged
// wake-up delay within budget x packets + one wake-up, and packets wait less
// than with the fixed hold it starts from.
TEST(Replay, AdaptiveHoldKeepsEachLinkWithinItsBudget) {
  Fixture f(4, 2);
  const std::string base =
      "gating { policy: ALL_ON } emulator { cycle_ps: 4000 flit_bytes: 50 packet_bytes: 800 } "
      "workload { uniform { rate: 0.01 duration_cycles: 100000 } message_bytes: 800 } ";
  const RunSpec fixed = spec(base + "lpi { mode: HYBRID hold_ts: 1 }");
  const RunSpec adapt =
      spec(base + "lpi { mode: HYBRID hold_ts: 1 adaptive_hold { delay_budget_ns: 20 } }");
  EXPECT_TRUE(adapt.savesPower());
  EXPECT_EQ(adapt.policyName, "all links on, hybrid idle");
  const RunOutput a = runEmulation(fixed, f.topo, f.mt, true, {}).value();
  const RunOutput b = runEmulation(adapt, f.topo, f.mt, true, {}).value();
  ASSERT_TRUE(a.summary.has_lpi());
  ASSERT_TRUE(b.summary.has_lpi());
  const results::LpiReport& l = b.summary.lpi();
  EXPECT_EQ(l.delay_budget_ns(), 20);
  EXPECT_EQ(a.summary.lpi().delay_budget_ns(), 0);
  EXPECT_GT(l.wakeups(), 0u);
  EXPECT_LE(l.max_overdraw_ns(), 5500.0);
  EXPECT_GT(l.max_hold_ns(), 1100.0) << "some hold grew";
  EXPECT_LT(l.added_delay_ns_per_packet(), a.summary.lpi().added_delay_ns_per_packet());
  EXPECT_EQ(b.summary.messages_delivered(), b.summary.messages_generated());
}

// gating.start: FROM_ALL_ON. A hot start pays no latency where starting from
// the minimal tree does; a cold one sheds every leaf's surplus up links in
// the first period with the proportional policy.
TEST(Replay, StartingFromAllOnShedsInOnePeriodAndSparesAHotStart) {
  Fixture f(8, 2);
  const std::string hot = "workload { uniform { rate: 0.3 duration_cycles: 10000 } } ";
  const auto run = [&](const std::string& text) {
    return runEmulation(spec(text), f.topo, f.mt, true, {}).value().summary;
  };
  const results::RunSummary allOn = run(hot + "gating { policy: ALL_ON }");
  const results::RunSummary fromAll =
      run(hot + "gating { policy: PROPORTIONAL start: FROM_ALL_ON }");
  const results::RunSummary fromTree = run(hot + "gating { policy: PROPORTIONAL }");
  EXPECT_LE(fromAll.mean_latency_cycles(), 1.05 * allOn.mean_latency_cycles());
  EXPECT_GT(fromTree.mean_latency_cycles(), 2 * allOn.mean_latency_cycles());
  EXPECT_NE(fromAll.policy().find("from all on"), std::string::npos) << fromAll.policy();

  const RunSpec cold = spec(
      "workload { uniform { rate: 0.005 duration_cycles: 20000 } } "
      "gating { policy: PROPORTIONAL start: FROM_ALL_ON }");
  const RunOutput out = runEmulation(cold, f.topo, f.mt, true, {}).value();
  ASSERT_FALSE(out.decisions.empty());
  const TimePs first = out.decisions.front().time;
  std::size_t leafOffs = 0;
  for (const agent::DecisionRecord& r : out.decisions) {
    const bool leaf = f.topo.sw(r.port.sw).level == f.topo.depth() - 1;
    if (r.time == first && r.up && !r.turnOn && r.refused.empty() && leaf) ++leafOffs;
  }
  // 8 leaves of 8 up links, one of each in the minimal tree: 7 off each, at once.
  EXPECT_EQ(leafOffs, 8u * 7u);
  EXPECT_EQ(out.summary.messages_delivered(), out.summary.messages_generated());
}

TEST(Replay, DistributedSizesAndPoissonArrivals) {
  Fixture f(4, 2);
  const RunSpec s = spec(
      "gating { policy: ALL_ON } workload { uniform { rate: 0.2 duration_cycles: 20000 } "
      "message_bytes_min: 16 message_bytes_max: 400 arrivals: POISSON }");
  EXPECT_EQ(s.workload.sizeMax, 400);
  const RunOutput out = runEmulation(s, f.topo, f.mt, false, {}).value();
  EXPECT_EQ(out.summary.messages_delivered(), out.summary.messages_generated());
  EXPECT_NEAR(out.summary.offered_load(), 0.2, 0.02);
}

struct BadConfig {
  const char* text;
  const char* expect;
};

TEST(Replay, BadConfigsAreRejectedNamingTheField) {
  const BadConfig cases[] = {
      {"workload { uniform { rate: -0.1 duration_cycles: 10 } }", "workload.uniform.rate"},
      {"workload { alonso_ramp { high: -1 } }", "workload.alonso_ramp.high"},
      {"workload { alonso_ramp { high: 1.2 } }", "more than a host's link carries"},
      {"workload { rate_points { point { at_cycles: 0 rate: 0.1 } point { at_cycles: 10 rate: 3 "
       "} } }",
       "workload.rate_points.point[1].rate"},
      {"gating { policy: DYNAMIC u_on: 1.5 }", "U_on <= 1"},
      {"gating { policy: STATIC u_off: 0.1 u_on: 0.15 }", "U_on > 2*U_off"},
      {"gating { check_period_cycles: 2000 turn_on_cycles: 3000 }", "gating.turn_on_cycles"},
      {"gating { turn_off_cycles: -5 }", "gating.turn_off_cycles"},
      {"emulator { vcs: -1 }", "emulator.vcs"},
      {"emulator { packet_bytes: 128 vc_buffer_bytes: 64 }", "emulator.vc_buffer_bytes"},
      {"lpi { mode: DEEP_SLEEP hold_ts: -1 }", "lpi.hold_ts"},
      {"lpi { link_speed: \"10BASE-T\" }", "link speed"},
      {"lpi { mode: HYBRID adaptive_hold { } }", "lpi.adaptive_hold.delay_budget_ns"},
      {"lpi { mode: HYBRID adaptive_hold { delay_budget_ns: nan } }",
       "lpi.adaptive_hold.delay_budget_ns"},
      {"lpi { mode: HYBRID hold_ts: 4 adaptive_hold { delay_budget_ns: 5 max_hold_ts: 2 } }",
       "min_hold_ts <= lpi.hold_ts <= max_hold_ts"},
      {"lpi { mode: HYBRID adaptive_hold { delay_budget_ns: 5 min_hold_ts: -1 } }",
       "lpi.adaptive_hold.min_hold_ts"},
      {"lpi { mode: HYBRID adaptive_hold { delay_budget_ns: 5 max_hold_ts: 1e300 } }",
       "lpi.adaptive_hold.max_hold_ts"},
      {"workload { message_bytes: -3 }", "workload.message_bytes"},
      {"workload { message_bytes_min: 500 message_bytes_max: 100 }", "workload.message_bytes_max"},
  };
  for (const BadConfig& c : cases) {
    auto cfg = config::parseTextConfig(c.text, "t");
    ASSERT_TRUE(cfg) << c.text;
    auto s = buildRunSpec(*cfg);
    ASSERT_FALSE(s) << c.text;
    EXPECT_EQ(s.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find(c.expect), std::string::npos) << s.status().message();
  }
  // An unknown policy is a parse error with the line.
  auto cfg = config::parseTextConfig("gating {\n policy: SOMETIMES\n}", "t");
  ASSERT_FALSE(cfg);
  EXPECT_EQ(cfg.status().code(), ErrorCode::kParse);
  EXPECT_NE(cfg.status().message().find("\"SOMETIMES\" for field \"policy\""), std::string::npos)
      << cfg.status().message();
}

}  // namespace
}  // namespace ebb::replay
