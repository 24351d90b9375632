// `ebb tune` specs: the grid over the map of valid thresholds, bad input named
// by field and rule, and the run cache's keys.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "replay/run_spec.h"
#include "tests/tune/tune_test_util.h"
#include "tune/cache.h"
#include "tune/grid.h"

namespace ebb::tune {
namespace {

using testing::planFrom;
using testing::scratch;
using testing::tinyRampBase;
using testing::writeSpec;

struct BadSpec {
  const char* name;
  const char* body;  // after the tiny base
  const char* field;
  const char* rule;
};

const BadSpec kBadSpecs[] = {
    {"EmptySearchSpace", "budget { latency_increase_pct: 5 }", "search_space", "empty grid"},
    {"RangeOfTooManyValues",
     "budget { latency_increase_pct: 5 } search_space { u_on { from: 0.1 to: 0.9 step: 1e-300 } "
     "}",
     "search_space.u_on", "gives over 10^18 values, more than"},
    {"UOnAboveOne",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.2, 1.5] } }",
     "search_space.u_on", "0 < U_on <= 1"},
    {"UOnZero", "budget { latency_increase_pct: 5 } search_space { u_on { values: [0] } }",
     "search_space.u_on", "0 < U_on <= 1"},
    {"UOffOutsideMap",
     "budget { latency_increase_pct: 5 } search_space { policy: [STATIC] u_off { values: [0.6] } "
     "}",
     "search_space.u_off", "U_off < 0.5"},
    {"NoStaticPointInTheMap",
     "budget { latency_increase_pct: 5 } search_space { policy: [STATIC] u_off { values: [0.2] } "
     "u_on { values: [0.3, 0.4] } }",
     "empty grid", "U_on > 2*U_off"},
    {"UOffWithoutStatic",
     "budget { latency_increase_pct: 5 } search_space { policy: [DYNAMIC] u_off { values: [0.03] } "
     "}",
     "search_space.u_off", "only static thresholds"},
    {"RangeWithoutStep",
     "budget { latency_increase_pct: 5 } search_space { u_on { from: 0.1 to: 0.5 } }",
     "search_space.u_on.step", "missing (a range needs from, to and step)"},
    {"RangeWithoutFrom",
     "budget { latency_increase_pct: 5 } search_space { u_on { to: 0.5 step: 0.1 } }",
     "search_space.u_on.from", "missing"},
    {"RangeStepZero",
     "budget { latency_increase_pct: 5 } search_space { u_on { from: 0.1 to: 0.5 step: 0 } }",
     "search_space.u_on.step", "must be > 0 (is 0)"},
    {"ValueTwice",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.2, 0.3, 0.2] } }",
     "search_space.u_on", "0.2 is given twice"},
    {"PolicyTwice",
     "budget { latency_increase_pct: 5 } search_space { policy: [DYNAMIC, DYNAMIC] }",
     "search_space.policy", "DYNAMIC is given twice"},
    {"FieldValueSpelledTwice",
     "budget { latency_increase_pct: 5 } search_space { field { path: \"gating.u_on\" values: "
     "[\"0.2\", \"0.20\"] } }",
     "search_space.field[0] (gating.u_on)", "0.2 and 0.20 are the same value"},
    {"RangeBackwards",
     "budget { latency_increase_pct: 5 } search_space { u_on { from: 0.5 to: 0.1 step: 0.1 } }",
     "search_space.u_on.to", "must be >= from"},
    {"RangeFromNotANumber",
     "budget { latency_increase_pct: 5 } search_space { u_on { from: nan to: 0.3 step: 0.1 } }",
     "search_space.u_on.from", "nan is not a number"},
    {"ValuesAndRange",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.2] from: 0.1 to: 0.5 "
     "step: 0.1 } }",
     "search_space.u_on", "not both"},
    {"NegativeLatencyBudget",
     "budget { latency_increase_pct: -1 } search_space { u_on { values: [0.2] } }",
     "budget.latency_increase_pct", "must be >= 0"},
    {"NegativeP99Budget",
     "budget { latency_increase_pct: 5 p99_latency_increase_pct: -0.5 } search_space { u_on { "
     "values: [0.2] } }",
     "budget.p99_latency_increase_pct", "must be >= 0"},
    {"NegativeSlowdownBudget",
     "budget { app_slowdown_pct: -2 } search_space { u_on { values: [0.2] } }",
     "budget.app_slowdown_pct", "must be >= 0"},
    {"EmptyBudget", "search_space { u_on { values: [0.2] } }", "budget", "set at least one"},
    {"SlowdownWithoutTrace",
     "budget { app_slowdown_pct: 5 } search_space { u_on { values: [0.2] } }",
     "budget.app_slowdown_pct", "needs a closed-loop workload (a trace, collective, motif or mix"},
    {"SlowdownAloneWithAnOpenLoopWorkload",
     "workload { name: \"coll\" spec { collective { op: \"alltoall\" bytes: 4096 ranks: 8 "
     "iterations: 2 } } } workload { name: \"ramp\" spec { alonso_ramp { time_scale: 0.1 } } } "
     "budget { app_slowdown_pct: 5 } search_space { u_on { values: [0.2] } }",
     "budget", "app_slowdown_pct alone bounds nothing on workload 'ramp'"},
    // A field the grid never reads is refused, as the named dimension is.
    {"FieldUOffWithoutStatic",
     "budget { latency_increase_pct: 5 } search_space { field { path: \"gating.u_off\" values: "
     "[\"0.1\", \"0.2\"] } }",
     "search_space.field[0] (gating.u_off)", "only static thresholds have U_off"},
    {"FieldHysteresisWithoutProportional",
     "budget { latency_increase_pct: 5 } search_space { field { path: \"gating.hysteresis\" "
     "values: [\"0.5\", \"0.7\"] } }",
     "search_space.field[0] (gating.hysteresis)", "only the proportional policy has it"},
    {"FieldOfLpiWithoutLpi",
     "budget { latency_increase_pct: 5 } search_space { field { path: \"lpi.hold_ts\" values: "
     "[\"1\", \"2\"] } }",
     "search_space.field[0] (lpi.hold_ts)", "only low-power idle reads it"},
    {"UnknownField",
     "budget { latency_increase_pct: 5 } search_space { field { path: \"gating.bogus\" values: "
     "[\"1\"] } }",
     "search_space.field[0] (gating.bogus)", "no field 'bogus'"},
    {"FieldWithoutValues",
     "budget { latency_increase_pct: 5 } search_space { field { path: \"emulator.vcs\" } }",
     "search_space.field[0] (emulator.vcs)", "empty"},
    // What is no setting: the real agent's fields, the fabric, the traffic,
    // what is reported.
    {"FieldOfTheRealAgent",
     "budget { latency_increase_pct: 5 } search_space { field { path: "
     "\"agent.check_period_ms\" values: [\"5\", \"6\"] } }",
     "search_space.field[0] (agent.check_period_ms)", "the emulator never reads agent.*"},
    {"FieldOfTheWorkload",
     "budget { latency_increase_pct: 5 } search_space { field { path: "
     "\"workload.uniform.rate\" values: [\"0.1\", \"0.2\"] } }",
     "search_space.field[0] (workload.uniform.rate)", "the same fabric and workloads"},
    // The workload's units: another preset or packet size is other traffic.
    {"FieldOfTheLinkPreset",
     "budget { latency_increase_pct: 5 } search_space { field { path: "
     "\"emulator.link_preset\" values: [\"PAPER\", \"IB_EDR_2K\"] } }",
     "search_space.field[0] (emulator.link_preset)", "the workload's own units"},
    {"FieldOfThePacketSize",
     "budget { latency_increase_pct: 5 } search_space { field { path: "
     "\"emulator.packet_bytes\" values: [\"64\", \"256\"] } }",
     "search_space.field[0] (emulator.packet_bytes)", "one tune per link preset or packet size"},
    {"FieldOfTheFabric",
     "budget { latency_increase_pct: 5 } search_space { field { path: "
     "\"fabric.kary_n_tree.k\" values: [\"2\", \"4\"] } }",
     "search_space.field[0] (fabric.kary_n_tree.k)", "one tune per fabric"},
    {"FieldSeed",
     "budget { latency_increase_pct: 5 } search_space { field { path: \"seed\" values: "
     "[\"1\", \"2\"] } }",
     "search_space.field[0] (seed)", "the same fabric and workloads"},
    {"FieldOfTheReport",
     "budget { latency_increase_pct: 5 } search_space { field { path: "
     "\"report.skip_plots\" values: [\"true\", \"false\"] } }",
     "search_space.field[0] (report.skip_plots)", "not what the fabric does"},
    {"FieldBadValue",
     "budget { latency_increase_pct: 5 } search_space { field { path: \"lpi.mode\" values: "
     "[\"SOMETIMES\"] } }",
     "search_space.field[0] (lpi.mode)", "not one of OFF, DEEP_SLEEP, FAST_WAKE, HYBRID"},
    {"PeriodShorterThanTurnOn",
     "budget { latency_increase_pct: 5 } search_space { check_period_cycles { values: [2000, 500] "
     "} }",
     "gating.turn_on_cycles", "must not exceed the check period"},
    {"FractionalPeriod",
     "budget { latency_increase_pct: 5 } search_space { check_period_cycles { values: [1500.5] } "
     "}",
     "search_space.check_period_cycles", "whole number"},
    {"NegativeHold",
     "budget { latency_increase_pct: 5 } search_space { lpi_mode: [HYBRID] lpi_hold_ts { values: "
     "[1, -1] } }",
     "search_space.lpi_hold_ts", "must be >= 0"},
    {"EtaOne",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.2] } } search { "
     "strategy: HALVING eta: 1 }",
     "search.eta", "must be >= 2"},
    {"FractionAboveOne",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.2] } } search { "
     "strategy: HALVING min_fraction: 2 }",
     "search.min_fraction", "must be in [0.0001, 1] (is 2)"},
    {"FractionTooSmall",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.2] } } search { "
     "strategy: HALVING min_fraction: 1e-300 }",
     "search.min_fraction", "must be in [0.0001, 1] (is 1e-300)"},
    {"NoPasses",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.2] } } search { "
     "strategy: COORDINATE max_passes: -1 }",
     "search.max_passes", "must be >= 1"},
    // An explicit zero is a value, never "use the default".
    {"ZeroEta",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.2] } } search { "
     "strategy: HALVING eta: 0 }",
     "search.eta", "must be >= 2 (is 0)"},
    {"ZeroPasses",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.2] } } search { "
     "strategy: COORDINATE max_passes: 0 }",
     "search.max_passes", "must be >= 1 (is 0)"},
    {"ZeroFraction",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.2] } } search { "
     "strategy: HALVING min_fraction: 0 }",
     "search.min_fraction", "must be in [0.0001, 1] (is 0)"},
    {"ZeroStep",
     "budget { latency_increase_pct: 5 } search_space { u_on { from: 0 to: 0 step: 0 } }",
     "search_space.u_on.step", "must be > 0"},
    // A grid counted before it is built: 10^4 x 10^4 settings.
    {"GridBomb",
     "budget { latency_increase_pct: 5 } search_space { policy: [STATIC] "
     "u_on { from: 0.5 to: 1 step: 0.0001 } u_off { from: 0.0001 to: 0.2 step: 0.0001 } "
     "check_period_cycles { from: 1000 to: 10000 step: 1 } }",
     "search_space: the grid has 90028002000 settings (1 policy x 2000 u_off x 5001 u_on x 9001 "
     "period)",
     "more than the limit of 10000"},
    // One field in two dimensions: each would override the other.
    {"FieldSweptTwice",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.3] } field { path: "
     "\"gating.u_on\" values: [\"0.2\"] } }",
     "search_space.field[0] (gating.u_on)", "gating.u_on is swept twice"},
    {"FieldSweptTwiceByFields",
     "budget { latency_increase_pct: 5 } search_space { field { path: \"emulator.vcs\" values: "
     "[\"2\"] } field { path: \"emulator.vcs\" values: [\"3\"] } }",
     "search_space.field[1] (emulator.vcs)", "emulator.vcs is swept twice"},
    // A search field the strategy never reads is refused, not ignored.
    {"EtaWithGrid",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.2, 0.3] } } search { "
     "strategy: GRID eta: 3 }",
     "search.eta", "does not apply to strategy GRID; only HALVING reads it"},
    {"MinFractionWithCoordinate",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.2] } } search { "
     "strategy: COORDINATE min_fraction: 0.1 }",
     "search.min_fraction", "does not apply to strategy COORDINATE; only HALVING reads it"},
    {"MaxPassesWithDefaultStrategy",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.2] } } search { "
     "max_passes: 3 }",
     "search.max_passes", "does not apply to strategy GRID (the default); only COORDINATE"},
    {"MaxPassesWithHalving",
     "budget { latency_increase_pct: 5 } search_space { u_on { values: [0.2] } } search { "
     "strategy: HALVING max_passes: 3 }",
     "search.max_passes", "does not apply to strategy HALVING"},
    // Without low-power idle a hold or a delay budget would collapse unasked.
    {"HoldWithoutLpi",
     "budget { latency_increase_pct: 5 } search_space { lpi_hold_ts { values: [1] } }",
     "search_space.lpi_hold_ts", "only low-power idle has a hold time"},
    {"HoldWithLpiOff",
     "budget { latency_increase_pct: 5 } search_space { lpi_mode: [OFF] lpi_hold_ts { values: "
     "[0, 1] } }",
     "search_space.lpi_hold_ts", "add FAST_WAKE, DEEP_SLEEP or HYBRID to search_space.lpi_mode"},
    {"DelayBudgetWithoutLpi",
     "budget { latency_increase_pct: 5 } search_space { lpi_delay_budget_ns { values: [5] } }",
     "search_space.lpi_delay_budget_ns", "only low-power idle has a delay budget"},
    // Named by field, the value as given (not rounded to 1.0000000000000002e+30).
    {"PeriodBeyond64Bits",
     "budget { latency_increase_pct: 5 } search_space { check_period_cycles { values: [1e30] } }",
     "search_space.check_period_cycles: 1e+30 is out of range",
     "a 64-bit integer, at most 9223372036854775807 cycles"},
    // The placeholder is "not given": a second spelling of the default.
    {"FieldUnspecifiedEnum",
     "budget { latency_increase_pct: 5 } search_space { field { path: \"emulator.allocator\" "
     "values: [\"ISLIP\", \"ALLOCATOR_UNSPECIFIED\"] } }",
     "search_space.field[0] (emulator.allocator)", "the value is not one of ISLIP, ROUND_ROBIN"},
    // A workload without its spec would tune on the built-in alonso-ramp.
    {"WorkloadWithoutSpec",
     "budget { latency_increase_pct: 5 } workload { name: \"mine\" } search_space { u_on { "
     "values: [0.2] } }",
     "workload[0].spec: missing", "leave every workload out to tune on the base's"},
};

TEST(TuneSpec, TheSettingsLimitIsCheckedBeforeTheGridAndCanBeRaised) {
  const std::string body = tinyRampBase(0.1) +
                           "budget { latency_increase_pct: 5 } search_space { u_on { values: "
                           "[0.2, 0.3, 0.4] } check_period_cycles { values: [1000, 2000] } }";
  Result<TunePlan> refused = planFrom(body, 5);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.status().message().find("the grid has 6 settings (3 u_on x 2 "),
            std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("limit of 5"), std::string::npos);
  Result<TunePlan> raised = planFrom(body, 6);
  ASSERT_TRUE(raised) << raised.status().toString();
  EXPECT_EQ(raised->settings.size(), 6u);
}

class TuneSpecBad : public ::testing::TestWithParam<BadSpec> {};

TEST_P(TuneSpecBad, IsRejectedNamingTheFieldAndTheRule) {
  const BadSpec& c = GetParam();
  Result<TunePlan> plan = planFrom(tinyRampBase(0.1) + c.body);
  ASSERT_FALSE(plan) << c.body;
  EXPECT_EQ(plan.status().code(), ErrorCode::kInvalidArgument) << plan.status().toString();
  EXPECT_NE(plan.status().message().find(c.field), std::string::npos) << plan.status().message();
  EXPECT_NE(plan.status().message().find(c.rule), std::string::npos) << plan.status().message();
}

INSTANTIATE_TEST_SUITE_P(TuneSpec, TuneSpecBad, ::testing::ValuesIn(kBadSpecs),
                         [](const ::testing::TestParamInfo<BadSpec>& tpi) {
                           return std::string(tpi.param.name);
                         });

TEST(TuneSpec, MissingBaseAndUnreadableBaseAreNamed) {
  Result<TunePlan> none = planFrom(
      "budget { latency_increase_pct: 5 } search_space { u_on { "
      "values: [0.2] } }");
  ASSERT_FALSE(none);
  EXPECT_NE(none.status().message().find("base_config"), std::string::npos);
  Result<TunePlan> missing = planFrom(
      "base_config: \"/nonexistent/x.textproto\" budget { latency_increase_pct: 5 } "
      "search_space { u_on { values: [0.2] } }");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), ErrorCode::kIo);
  EXPECT_NE(missing.status().message().find("/nonexistent/x.textproto"), std::string::npos);
}

// A one-level tree has no switch link: the default objective would measure
// nothing and recommend "gate nothing"; refused, with ALL_LINKS named.
// ALL_LINKS (low-power idle on host links) is a real sweep there.
TEST(TuneSpec, TheSwitchLinkObjectiveOnAFabricWithoutSwitchLinksIsRefused) {
  const std::string base =
      "base { fabric { kary_n_tree { k: 4 n: 1 } } workload { uniform { rate: 0.05 "
      "duration_cycles: 2000 } } } skip_plots: true budget { latency_increase_pct: 5 } ";
  Result<TunePlan> gating = planFrom(base + "search_space { u_on { values: [0.2] } }");
  ASSERT_FALSE(gating);
  EXPECT_NE(gating.status().message().find("objective: SWITCH_LINKS"), std::string::npos)
      << gating.status().message();
  EXPECT_NE(gating.status().message().find("use objective: ALL_LINKS"), std::string::npos)
      << gating.status().message();
  Result<TunePlan> lpi = planFrom(base +
                                  "objective: ALL_LINKS search_space { policy: [ALL_ON] "
                                  "lpi_mode: [OFF, FAST_WAKE] }");
  ASSERT_TRUE(lpi) << lpi.status().toString();
  EXPECT_EQ(lpi->settings.size(), 2u);
}

// The inline base replaces what it sets of base_config's, lists whole: an
// XGFT's m and w were appended, running a tree neither file describes.
TEST(TuneSpec, TheInlineBaseReplacesTheBaseConfigsListsWhole) {
  const auto dir = scratch("inline-base");
  std::ofstream(dir / "base.textproto")
      << "fabric { xgft { m: 4 m: 4 w: 1 w: 4 } } "
         "workload { uniform { rate: 0.05 duration_cycles: 2000 } }";
  const auto spec = writeSpec(dir,
                              "base_config: \"base.textproto\" "
                              "base { fabric { xgft { m: 2 m: 2 w: 1 w: 2 } } } "
                              "budget { latency_increase_pct: 5 } "
                              "search_space { u_on { values: [0.2] } }");
  Result<TunePlan> plan = loadTunePlan(spec.string());
  ASSERT_TRUE(plan) << plan.status().toString();
  const config::XgftSpec& x = plan->base.fabric().xgft();
  ASSERT_EQ(x.m_size(), 2);
  ASSERT_EQ(x.w_size(), 2);
  EXPECT_EQ(x.m(0), 2u);
  EXPECT_EQ(x.w(1), 2u);
  EXPECT_DOUBLE_EQ(plan->base.workload().uniform().rate(), 0.05);  // kept
}

TEST(TuneSpec, ShippedExamplesLoad) {
  Result<TunePlan> ramp =
      loadTunePlan(std::string(EBB_SOURCE_DIR) + "/configs/tune_alonso_ramp.textproto");
  ASSERT_TRUE(ramp) << ramp.status().toString();
  // 10 U_off x 11 U_on x 3 periods static, 11 x 3 dynamic; 93 static pairs break U_on > 2*U_off.
  EXPECT_EQ(ramp->settings.size(), 363u);
  EXPECT_EQ(ramp->validSettings(), 270u);
  EXPECT_EQ(ramp->base.fabric().kary_n_tree().n(), 3u);
  ASSERT_TRUE(std::filesystem::exists(std::string(EBB_TRACES_DIR) + "/amg2013-27/amg27_events.csv"))
      << "no AMG trace under " << EBB_TRACES_DIR;
  Result<TunePlan> amg = loadTunePlan(std::string(EBB_SOURCE_DIR) + "/configs/tune_amg.textproto");
  ASSERT_TRUE(amg) << amg.status().toString();
  EXPECT_TRUE(amg->workloads.at(0).isTrace);
  EXPECT_TRUE(amg->budget.appSlowdownPct.has_value());
}

TEST(TuneGrid, SkipsWhatDoesNotApplyAndFlagsPointsOutsideTheMap) {
  Result<TunePlan> plan = planFrom(tinyRampBase(0.1) +
                                   "budget { latency_increase_pct: 5 } search_space { "
                                   "policy: [STATIC, DYNAMIC] u_off { values: [0.03, 0.1] } "
                                   "u_on { values: [0.15, 0.3] } lpi_mode: [OFF, HYBRID] "
                                   "lpi_hold_ts { values: [0, 1] } }");
  ASSERT_TRUE(plan) << plan.status().toString();
  // Static: 2 U_off x 2 U_on x (off, hybrid hold 0 = deep sleep, hybrid
  // hold 1); dynamic: 2 U_on x 3, without U_off.
  EXPECT_EQ(plan->settings.size(), 18u);
  EXPECT_EQ(plan->validSettings(), 15u);
  std::set<std::string> labels;
  for (const Setting& s : plan->settings) {
    labels.insert(s.label);
    const bool outside = s.isStatic && s.uOff == 0.1 && s.uOn == 0.15;
    EXPECT_EQ(s.mapValid(), !outside) << s.label;
    if (outside) {
      EXPECT_EQ(s.mapRule, "U_on > 2*U_off");
    }
    for (const auto& [path, value] : s.overrides) {
      if (path == "gating.u_off") {
        EXPECT_TRUE(s.isStatic) << s.label;
      }
      if (path == "lpi.hold_ts") {
        EXPECT_NE(s.label.find(value == "0" ? "lpi=DEEP_SLEEP" : "lpi=HYBRID"), std::string::npos)
            << s.label;
      }
    }
  }
  EXPECT_EQ(labels.size(), plan->settings.size());
  EXPECT_EQ(plan->workloads.size(), 1u);
  EXPECT_EQ(plan->workloads[0].name, "alonso-ramp");
}

// The labels of a plan's settings, each resolved to its config and checked.
std::set<std::string> labelsResolved(
    const TunePlan& plan, const std::function<void(const Setting&, const config::Config&)>& check) {
  std::set<std::string> labels;
  for (const Setting& s : plan.settings) {
    labels.insert(s.label);
    Result<config::Config> cfg = resolveConfig(plan, s, 0, 1.0);
    EXPECT_TRUE(cfg) << cfg.status().toString();
    if (cfg) check(s, *cfg);
  }
  return labels;
}

// HYBRID with a hold of 0 goes to deep sleep at once: the grid runs it once,
// as DEEP_SLEEP (not two settings that measure alike, either recommendable);
// with a hold it stays hybrid. MODE_UNSPECIFIED is no mode: refused by name.
TEST(TuneSpec, HybridWithoutHoldIsDeepSleepAndAnUnspecifiedModeIsRefused) {
  Result<TunePlan> plan = planFrom(tinyRampBase(0.1) +
                                   "budget { latency_increase_pct: 5 } search_space { policy: "
                                   "[ALL_ON] lpi_mode: [HYBRID, DEEP_SLEEP] lpi_hold_ts { values: "
                                   "[0, 1] } }");
  ASSERT_TRUE(plan) << plan.status().toString();
  const std::set<std::string> labels =
      labelsResolved(*plan, [](const Setting& s, const config::Config& cfg) {
        EXPECT_NE(s.label.find(config::LpiSpec::Mode_Name(cfg.lpi().mode())), std::string::npos)
            << s.label;  // the run is the mode its label says
      });
  EXPECT_EQ(labels, (std::set<std::string>{"policy=ALL_ON lpi=DEEP_SLEEP hold=0",
                                           "policy=ALL_ON lpi=HYBRID hold=1",
                                           "policy=ALL_ON lpi=DEEP_SLEEP hold=1"}));
  Result<TunePlan> unspecified =
      planFrom(tinyRampBase(0.1) +
               "budget { latency_increase_pct: 5 } search_space { policy: [ALL_ON] lpi_mode: "
               "[MODE_UNSPECIFIED, FAST_WAKE] }");
  ASSERT_FALSE(unspecified);
  EXPECT_NE(unspecified.status().message().find("search_space.lpi_mode: name OFF"),
            std::string::npos)
      << unspecified.status().message();
}

// The proportional policy's hysteresis is searched for it alone, and every
// resolved config carries it only there.
TEST(TuneGrid, SearchesTheProportionalPolicyAndItsHysteresis) {
  Result<TunePlan> plan = planFrom(tinyRampBase(0.1) +
                                   "budget { latency_increase_pct: 5 } search_space { "
                                   "policy: [DYNAMIC, PROPORTIONAL] u_on { values: [0.15] } "
                                   "hysteresis { values: [0.5, 0.75] } }");
  ASSERT_TRUE(plan) << plan.status().toString();
  ASSERT_EQ(plan->settings.size(), 3u);  // dynamic once, proportional at each h
  const std::set<std::string> labels =
      labelsResolved(*plan, [](const Setting& s, const config::Config& cfg) {
        const bool proportional = cfg.gating().policy() == config::GatingSpec::PROPORTIONAL;
        EXPECT_EQ(cfg.gating().has_hysteresis(), proportional) << s.label;
        EXPECT_FALSE(baselineConfig(cfg).gating().has_hysteresis());
      });
  EXPECT_EQ(labels, (std::set<std::string>{"policy=DYNAMIC u_on=0.15",
                                           "policy=PROPORTIONAL h=0.5 u_on=0.15",
                                           "policy=PROPORTIONAL h=0.75 u_on=0.15"}));
  for (const auto& [body, says] :
       {std::pair{"search_space { policy: [DYNAMIC] hysteresis { values: [0.5] } }",
                  "search_space.hysteresis: only the proportional policy has it"},
        std::pair{"search_space { policy: [PROPORTIONAL] hysteresis { values: [1] } }",
                  "search_space.hysteresis: 1 breaks the rule 0 < h < 1"}}) {
    Result<TunePlan> bad =
        planFrom(tinyRampBase(0.1) + "budget { latency_increase_pct: 5 } " + body);
    ASSERT_FALSE(bad) << body;
    EXPECT_NE(bad.status().message().find(says), std::string::npos) << bad.status().message();
  }
}

// A base gated in-band (or with a congestion trigger, or starting all on):
// the all-links-on baseline and an ALL_ON setting drop what only gating
// uses, so they run (the baseline was refused: in-band control needs gating).
TEST(TuneGrid, AnInBandBaseKeepsARunnableBaselineAndAllOnSetting) {
  Result<TunePlan> plan = planFrom(
      "base { fabric { kary_n_tree { k: 4 n: 2 } } workload { alonso_ramp { time_scale: 0.1 } } "
      "gating { u_on: 0.3 wait_on: 0.2 start: FROM_ALL_ON in_band { enabled: true } } } "
      "skip_plots: true budget { latency_increase_pct: 5 } "
      "search_space { policy: [DYNAMIC, ALL_ON] lpi_mode: [FAST_WAKE] }");
  ASSERT_TRUE(plan) << plan.status().toString();
  labelsResolved(*plan, [](const Setting& s, const config::Config& cfg) {
    for (const config::Config& c : {cfg, baselineConfig(cfg)}) {
      const Result<replay::RunSpec> spec = replay::buildRunSpec(c);
      EXPECT_TRUE(spec) << s.label << ": " << spec.status().toString();
      if (c.gating().policy() != config::GatingSpec::ALL_ON) continue;
      EXPECT_FALSE(c.gating().in_band().enabled()) << s.label;
      EXPECT_FALSE(c.gating().has_u_on() || c.gating().has_wait_on()) << s.label;
      EXPECT_EQ(c.gating().start(), config::GatingSpec::START_UNSPECIFIED) << s.label;
    }
  });
}

// A base whose low-power idle carries a hold (and an adaptive one): the
// grid's setting without low-power idle runs with neither, which the runner
// would refuse (lpi.hold_ts applies with a mode only).
TEST(TuneGrid, ASettingWithoutLowPowerIdleDropsTheBasesHold) {
  Result<TunePlan> plan = planFrom(
      "base { fabric { kary_n_tree { k: 4 n: 2 } } workload { alonso_ramp { time_scale: 0.1 } } "
      "lpi { mode: FAST_WAKE hold_ts: 2 adaptive_hold { delay_budget_ns: 50 } } } "
      "skip_plots: true budget { latency_increase_pct: 5 } "
      "search_space { lpi_mode: [OFF, FAST_WAKE] }");
  ASSERT_TRUE(plan) << plan.status().toString();
  const std::set<std::string> labels =
      labelsResolved(*plan, [](const Setting& s, const config::Config& cfg) {
        const bool off = cfg.lpi().mode() == config::LpiSpec::OFF;
        EXPECT_EQ(cfg.lpi().hold_ts(), off ? 0.0 : 2.0) << s.label;
        EXPECT_EQ(cfg.lpi().has_adaptive_hold(), !off) << s.label;
        const Result<replay::RunSpec> spec = replay::buildRunSpec(cfg);
        EXPECT_TRUE(spec) << s.label << ": " << spec.status().toString();
      });
  EXPECT_EQ(labels, (std::set<std::string>{"lpi=OFF", "lpi=FAST_WAKE"}));
}

// The adaptive hold's budget is searched with low-power idle alone.
TEST(TuneGrid, SearchesTheAdaptiveHoldBudgetWithLowPowerIdleOnly) {
  Result<TunePlan> plan = planFrom(tinyRampBase(0.1) +
                                   "budget { latency_increase_pct: 5 } search_space { "
                                   "lpi_mode: [OFF, HYBRID] lpi_delay_budget_ns { values: [5, 20] "
                                   "} }");
  ASSERT_TRUE(plan) << plan.status().toString();
  // Off once, hybrid at each budget: with the base's hold of 0 hybrid is
  // deep sleep (its fast-wake stay is that hold), and runs under that name.
  ASSERT_EQ(plan->settings.size(), 3u);
  const std::set<std::string> labels =
      labelsResolved(*plan, [](const Setting& s, const config::Config& cfg) {
        EXPECT_EQ(cfg.lpi().has_adaptive_hold(), cfg.lpi().mode() == config::LpiSpec::DEEP_SLEEP)
            << s.label;
      });
  EXPECT_EQ(labels, (std::set<std::string>{"lpi=OFF", "lpi=DEEP_SLEEP budget=5",
                                           "lpi=DEEP_SLEEP budget=20"}));
  Result<TunePlan> bad = planFrom(tinyRampBase(0.1) +
                                  "budget { latency_increase_pct: 5 } search_space { lpi_mode: "
                                  "[HYBRID] lpi_delay_budget_ns { values: [0] } }");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("search_space.lpi_delay_budget_ns: 0 breaks the rule"),
            std::string::npos)
      << bad.status().message();
}

TEST(TuneGrid, RangesCountTheirEndsAndPrintCleanly) {
  config::Range r;
  r.set_from(0.1);
  r.set_to(0.3);
  r.set_step(0.05);
  Result<std::vector<double>> v = expandRange(r, "x");
  ASSERT_TRUE(v);
  ASSERT_EQ(v->size(), 5u);
  EXPECT_EQ(formatValue((*v)[2]), "0.2");
  EXPECT_EQ(formatValue(0.1 + 0.2), "0.3");
  EXPECT_EQ(formatValue(2000.0), "2000");
}

TEST(TuneGrid, HalvingRungsGrowByEtaToFullLength) {
  Result<TunePlan> plan = planFrom(tinyRampBase(0.1) +
                                   "budget { latency_increase_pct: 5 } search_space { u_on { "
                                   "values: [0.2] } } search { strategy: HALVING eta: 3 }");
  ASSERT_TRUE(plan);
  const std::vector<double> f = plan->rungFractions();
  ASSERT_EQ(f.size(), 3u);
  EXPECT_NEAR(f[0], 1.0 / 9, 1e-12);
  EXPECT_NEAR(f[1], 1.0 / 3, 1e-12);
  EXPECT_EQ(f[2], 1.0);
  Result<config::Config> shortRamp = resolveConfig(*plan, plan->settings[0], 0, f[0]);
  ASSERT_TRUE(shortRamp);
  EXPECT_NEAR(shortRamp->workload().alonso_ramp().time_scale(), 0.1 / 9, 1e-12);
  // A latency warm-up shrinks with the replay (else it could outlast it).
  Result<TunePlan> warm = planFrom(
      "base { fabric { kary_n_tree { k: 4 n: 2 } } workload { alonso_ramp { time_scale: 0.1 } } "
      "report { latency_warmup_cycles: 9000 } } skip_plots: true budget { latency_increase_pct: "
      "5 } search_space { u_on { values: [0.2] } } search { strategy: HALVING eta: 3 }");
  ASSERT_TRUE(warm) << warm.status().toString();
  EXPECT_EQ(resolveConfig(*warm, warm->settings[0], 0, f[0])->report().latency_warmup_cycles(),
            1000);
  EXPECT_EQ(resolveConfig(*warm, warm->settings[0], 0, 1.0)->report().latency_warmup_cycles(),
            9000);
}

TEST(TuneCache, KeysFollowTheResolvedConfigAndFileContentsNotPaths) {
  const auto dir = scratch("keys");
  for (const char* name : {"a.csv", "b.csv"})
    std::ofstream(dir / name) << "0,isend,0,0,1,8,0,1\n";
  std::ofstream(dir / "c.csv") << "0,isend,0,0,1,16,0,1\n";
  FileDigests digests;
  const auto key = [&](const std::string& trace, double uOn, bool gated) {
    config::Config c;
    c.set_name("any name");
    c.mutable_gating()->set_u_on(uOn);
    c.mutable_workload()->mutable_trace()->set_path((dir / trace).string());
    return runKey(c, gated, digests).value().hash;
  };
  EXPECT_EQ(key("a.csv", 0.2, true), key("b.csv", 0.2, true));
  EXPECT_NE(key("a.csv", 0.2, true), key("c.csv", 0.2, true));
  EXPECT_NE(key("a.csv", 0.2, true), key("a.csv", 0.3, true));
  EXPECT_NE(key("a.csv", 0.2, true), key("a.csv", 0.2, false));
  // Of the report's fields only the latency warm-up changes the summary.
  const auto withReport = [&](const std::string& report) {
    config::Config c;
    c.mutable_workload()->mutable_trace()->set_path((dir / "a.csv").string());
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(report, c.mutable_report()));
    return runKey(c, true, digests).value().hash;
  };
  EXPECT_EQ(withReport(""), withReport("skip_plots: true timeseries_period_cycles: 4000"));
  EXPECT_EQ(withReport(""), withReport("latency_warmup_cycles: 0"));
  EXPECT_NE(withReport(""), withReport("latency_warmup_cycles: 5000"));
}

// The all-on reference is shared by the settings that differ only in what an
// all-on run does not read (thresholds, low-power idle), but not across check
// periods: an all-on run still samples every check period, and the period
// bounds its drain (100 periods: a hotspot's backlog delivers more or fewer
// messages, at other latencies), its fault recovery bound and its oracle.
TEST(TuneCache, TheAllOnReferenceIsSharedAcrossThresholdsButNotCheckPeriods) {
  Result<TunePlan> plan = planFrom(tinyRampBase(0.1) +
                                   "budget { latency_increase_pct: 5 } search_space { policy: "
                                   "[DYNAMIC] u_on { values: [0.2, 0.4] } lpi_mode: [OFF, "
                                   "FAST_WAKE] check_period_cycles { values: [1000, 2000] } }");
  ASSERT_TRUE(plan) << plan.status().toString();
  ASSERT_EQ(plan->settings.size(), 8u);
  FileDigests digests;
  std::map<std::string, std::set<std::string>> refsByPeriod;
  for (const Setting& s : plan->settings) {
    Result<config::Config> cfg = resolveConfig(*plan, s, 0, 1.0);
    ASSERT_TRUE(cfg) << cfg.status().toString();
    refsByPeriod[std::to_string(cfg->gating().check_period_cycles())].insert(
        runKey(baselineConfig(*cfg), false, digests).value().hash);
  }
  ASSERT_EQ(refsByPeriod.size(), 2u);
  EXPECT_EQ(refsByPeriod["1000"].size(), 1u);
  EXPECT_EQ(refsByPeriod["2000"].size(), 1u);
  EXPECT_NE(*refsByPeriod["1000"].begin(), *refsByPeriod["2000"].begin());
}

// T_on, T_off and the agents' message latency cannot change a run with every
// link on and nothing failing: one reference serves a sweep over them. With
// faults a repaired cable retrains in T_on: the references stay apart.
TEST(TuneCache, TheAllOnReferenceIsSharedAcrossTransitionTimesUnlessCablesFail) {
  for (const bool faults : {false, true}) {
    SCOPED_TRACE(faults ? "with a fault" : "without faults");
    const std::string base =
        std::string(
            "base { fabric { kary_n_tree { k: 4 n: 2 } } workload { alonso_ramp { "
            "time_scale: 0.1 } } ") +
        (faults ? "faults { event { at_cycles: 100 action: FAIL level: 1 index: 0 "
                  "minimal_tree_up: true } } "
                : "") +
        "} skip_plots: true ";
    Result<TunePlan> plan =
        planFrom(base +
                 "budget { latency_increase_pct: 5 } search_space { field { path: "
                 "\"gating.turn_on_cycles\" values: [\"100\", \"400\"] } field { path: "
                 "\"gating.control_latency_cycles\" values: [\"0\", \"20\"] } }");
    ASSERT_TRUE(plan) << plan.status().toString();
    ASSERT_EQ(plan->settings.size(), 4u);
    FileDigests digests;
    std::set<std::string> gated, refs;
    for (const Setting& s : plan->settings) {
      Result<config::Config> cfg = resolveConfig(*plan, s, 0, 1.0);
      ASSERT_TRUE(cfg) << cfg.status().toString();
      gated.insert(runKey(*cfg, true, digests).value().hash);
      refs.insert(runKey(baselineConfig(*cfg), false, digests).value().hash);
    }
    EXPECT_EQ(gated.size(), 4u);
    EXPECT_EQ(refs.size(), faults ? 4u : 1u);
  }
}

// Trace folders (SimGrid) and the traces of a mix are keyed by content too:
// a changed rank file changes the key, a copied folder does not.
// A device as an input file would be hashed forever: refused by name.
TEST(TuneCache, ADeviceIsRefusedAsAnInputFile) {
  FileDigests digests;
  const Result<std::string> d = digests.of("/dev/zero");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(d.status().message().find("/dev/zero: not a regular file"), std::string::npos)
      << d.status().toString();
}

TEST(TuneCache, TraceFoldersAndMixJobsAreKeyedByContent) {
  const auto dir = scratch("folder_keys");
  for (const char* sub : {"x", "y", "z"}) {
    std::filesystem::create_directories(dir / sub);
    std::ofstream(dir / sub / "r0.txt") << "0 compute 10\n";
    std::ofstream(dir / sub / "r1.txt") << "1 compute 10\n";
  }
  std::ofstream(dir / "z" / "r1.txt") << "1 compute 20\n";
  FileDigests digests;
  const auto key = [&](const std::string& folder, bool mix) {
    config::Config c;
    config::TraceSpec t;
    t.set_path((dir / folder).string());
    t.set_format(config::TraceSpec::SIMGRID_TI);
    if (mix) {
      *c.mutable_workload()->mutable_mix()->add_jobs()->mutable_trace() = t;
    } else {
      *c.mutable_workload()->mutable_trace() = t;
    }
    return runKey(c, true, digests).value().hash;
  };
  EXPECT_EQ(key("x", false), key("y", false));
  EXPECT_NE(key("x", false), key("z", false));
  EXPECT_EQ(key("x", true), key("y", true));
  EXPECT_NE(key("x", true), key("z", true));
  EXPECT_NE(key("x", true), key("x", false));
}

// A trace folder or a merged cache folder with an entry that cannot be read
// (a symlink to itself) is an error naming it, not an uncaught exception.
TEST(TuneCache, UnreadableFolderEntriesAreNamed) {
  namespace fs = std::filesystem;
  const auto dir = scratch("loops");
  fs::create_directories(dir / "trace");
  std::ofstream(dir / "trace" / "r0.txt") << "0 compute 10\n";
  fs::create_symlink("self.txt", dir / "trace" / "self.txt");
  FileDigests digests;
  config::Config c;
  c.mutable_workload()->mutable_trace()->set_path((dir / "trace").string());
  c.mutable_workload()->mutable_trace()->set_format(config::TraceSpec::SIMGRID_TI);
  Result<RunKey> key = runKey(c, true, digests);
  ASSERT_FALSE(key);
  EXPECT_NE(key.status().message().find("cannot read " + (dir / "trace" / "self.txt").string()),
            std::string::npos)
      << key.status().message();
  fs::create_directories(dir / "other");
  const std::string entry = "0123456789abcdef0123456789abcdef.json";
  fs::create_symlink(entry, dir / "other" / entry);
  const RunCache cache((dir / "cache").string());
  Result<std::size_t> n = cache.importFrom((dir / "other").string());
  ASSERT_FALSE(n);
  EXPECT_NE(n.status().message().find("cannot read " + (dir / "other" / entry).string()),
            std::string::npos)
      << n.status().message();
  // A file that is no cached run by its name (a replay's report.json in a
  // shard's folder) is left out, neither merged nor called corrupt.
  fs::remove(dir / "other" / entry);
  std::ofstream(dir / "other" / "report.json") << "{\"run\": {}}\n";
  std::vector<std::string> corrupt;
  n = cache.importFrom((dir / "other").string(), &corrupt);
  ASSERT_TRUE(n) << n.status().toString();
  EXPECT_EQ(*n, 0u);
  EXPECT_TRUE(corrupt.empty());
}

// A corrupt cached run (half written) is named, never merged over a good
// copy, and replaced by a good copy from another folder.
// The cache key of a config with u_on 0.3, and a summary to store under it.
RunKey sampleKey(FileDigests& digests, config::Config* out = nullptr) {
  config::Config c;
  c.mutable_gating()->set_u_on(0.3);
  if (out) *out = c;
  return runKey(c, true, digests).value();
}
results::RunSummary sampleSummary() {
  results::RunSummary s;
  s.set_mean_latency_cycles(42.5);
  return s;
}

TEST(TuneCache, MergingReportsCorruptEntriesAndAGoodCopyReplacesOne) {
  namespace fs = std::filesystem;
  const auto dir = scratch("merge_corrupt");
  FileDigests digests;
  const RunKey key = sampleKey(digests);
  const results::RunSummary s = sampleSummary();
  const RunCache good((dir / "good").string());
  ASSERT_TRUE(good.store(key, {s, ""}).isOk());
  const std::string name = key.hash + ".json";
  const std::string text = testing::slurp(dir / "good" / name);
  fs::create_directories(dir / "bad");
  std::ofstream(dir / "bad" / name) << text.substr(0, text.size() / 2);

  const RunCache merged((dir / "merged").string());
  std::vector<std::string> corrupt;
  Result<std::size_t> n = merged.importFrom((dir / "bad").string(), &corrupt);
  ASSERT_TRUE(n) << n.status().toString();
  EXPECT_EQ(*n, 0u);
  ASSERT_EQ(corrupt.size(), 1u);
  EXPECT_NE(corrupt[0].find((dir / "bad" / name).string() + ": corrupt cached run"),
            std::string::npos)
      << corrupt[0];
  EXPECT_FALSE(fs::exists(dir / "merged" / name));
  n = merged.importFrom((dir / "good").string());
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 1u);
  ASSERT_TRUE(merged.load(key));
  EXPECT_EQ(merged.load(key)->summary.mean_latency_cycles(), 42.5);

  // A corrupt entry already in the destination is named, then replaced.
  std::ofstream(dir / "merged" / name) << "{ \"key\": ";
  EXPECT_FALSE(merged.load(key));
  EXPECT_NE(merged.corruption(key).find((dir / "merged" / name).string() + ": corrupt cached run"),
            std::string::npos)
      << merged.corruption(key);
  n = merged.importFrom((dir / "good").string());
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 1u);
  EXPECT_TRUE(merged.load(key));
  EXPECT_EQ(merged.corruption(key), "");
  // A good destination entry is kept.
  n = merged.importFrom((dir / "good").string());
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 0u);
}

TEST(TuneCache, StoredRunsLoadBackAndHalfFilesAreMisses) {
  const auto dir = scratch("cache");
  const RunCache cache((dir / "cache").string());
  FileDigests digests;
  config::Config c;
  const RunKey key = sampleKey(digests, &c);
  results::RunSummary s = sampleSummary();
  s.set_link_transitions(7);
  ASSERT_TRUE(cache.store(key, {s, ""}).isOk());
  std::optional<RunOutcome> back = cache.load(key);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->summary.mean_latency_cycles(), 42.5);
  EXPECT_EQ(back->summary.link_transitions(), 7u);
  EXPECT_TRUE(back->failure.empty());
  // A failed run is remembered as such.
  config::Config other = c;
  other.set_seed(9);
  const RunKey failedKey = runKey(other, true, digests).value();
  ASSERT_TRUE(cache.store(failedKey, {{}, "E_INVALID: did not finish"}).isOk());
  EXPECT_EQ(cache.load(failedKey)->failure, "E_INVALID: did not finish");
  const auto file = dir / "cache" / (key.hash + ".json");
  const std::string text = testing::slurp(file);
  std::ofstream(file) << text.substr(0, text.size() / 2);
  EXPECT_FALSE(cache.load(key));
}

}  // namespace
}  // namespace ebb::tune
