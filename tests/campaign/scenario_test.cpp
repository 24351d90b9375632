// Scenario generation: a pure function of (base config, seed), every event
// naming a real part within the run, and the kinds of faults the campaign
// promises (minimal-tree links, roots, directions, repairs, a restart).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "agent/virtual_scheduler.h"
#include "campaign/scenario.h"
#include "campaign/summary.h"
#include "campaign_test_util.h"
#include "fabric/minimal_tree.h"
#include "replay/fault_injector.h"
#include "replay/run_spec.h"
#include "sim_backend/fabric_emulator.h"

namespace ebb::campaign {
namespace {

using config::FaultEventSpec;
using testing::baseConfig;
using testing::topologyOf;

TEST(Scenario, SameSeedSameConfigOtherSeedOtherConfig) {
  const config::Config base = baseConfig(4, 3);
  const fabric::Topology topo = topologyOf(base);
  const std::string a = configText(makeScenario(base, topo, 42));
  EXPECT_EQ(a, configText(makeScenario(base, topo, 42)));
  EXPECT_NE(a, configText(makeScenario(base, topo, 43)));
  std::set<std::string> distinct;
  for (std::uint64_t s = 1; s <= 50; ++s)
    distinct.insert(configText(makeScenario(base, topo, s)));
  EXPECT_EQ(distinct.size(), 50u);
}

TEST(Scenario, SeedsOfACampaignAreDistinctAndDeterministic) {
  std::set<std::uint64_t> seeds;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const std::uint64_t s = scenarioSeed(7, i);
    EXPECT_NE(s, 0u);
    EXPECT_EQ(s, scenarioSeed(7, i));
    seeds.insert(s);
  }
  EXPECT_EQ(seeds.size(), 1000u);
  EXPECT_NE(scenarioSeed(7, 0), scenarioSeed(8, 0));
}

// The part an event names, as a key; fails the test when it does not exist.
std::string partOf(const fabric::Topology& topo, const FaultEventSpec& e) {
  if (!e.switch_name().empty()) {
    const std::optional<fabric::SwitchId> sw = topo.findSwitch(e.switch_name());
    EXPECT_TRUE(sw) << "no switch " << e.switch_name();
    if (!sw) return "";
    if (e.port() != 0) {
      EXPECT_LE(e.port(), topo.sw(*sw).ports.size());
      if (e.port() > topo.sw(*sw).ports.size()) return "";
      EXPECT_NE(topo.sw(*sw).ports[e.port() - 1].role, fabric::PortRole::kUnused)
          << e.switch_name() << "[" << e.port() << "] is not cabled";
    }
    if (e.minimal_tree_up()) {
      EXPECT_GT(topo.sw(*sw).level, 0) << "a root has no up link";
    }
    return fmt::format("{}[{}]{}", e.switch_name(), e.port(), e.minimal_tree_up() ? "mt" : "");
  }
  EXPECT_GE(e.level(), 0);
  EXPECT_LT(e.level(), topo.depth());
  if (e.level() < 0 || e.level() >= topo.depth()) return "";
  EXPECT_LT(e.index(), topo.switchesAtLevel(e.level()).size());
  return fmt::format("L{}#{}", e.level(), e.index());
}

void checkValid(const config::Config& base, const fabric::Topology& topo, std::uint64_t seed,
                std::map<std::string, int>& seen) {
  const config::Config c = makeScenario(base, topo, seed);
  SCOPED_TRACE(fmt::format("seed {}", seed));
  EXPECT_EQ(c.seed(), seed);
  Result<replay::RunSpec> spec = replay::buildRunSpec(c);
  ASSERT_TRUE(spec) << spec.status().toString();
  EXPECT_FALSE(spec->baseline);
  EXPECT_FALSE(spec->plots);
  const std::int64_t horizon = ScenarioShape{}.periods * checkPeriodCycles(base);
  // The load: steps and ramps through the whole run.
  const auto& points = c.workload().rate_points().point();
  ASSERT_GE(points.size(), 2);
  EXPECT_EQ(points[0].at_cycles(), 0);
  EXPECT_EQ(points[points.size() - 1].at_cycles(), horizon);
  for (int i = 1; i < points.size(); ++i) {
    if (points[i].at_cycles() == points[i - 1].at_cycles() + 1) ++seen["step"];
    EXPECT_LE(points[i].rate(), ScenarioShape{}.maxRate);
  }
  if (c.workload().has_hotspot()) {
    ++seen["hotspot"];
    for (const std::string& h : c.workload().hotspot().host())
      EXPECT_TRUE(topo.findHost(h)) << h;
  }
  // The events: within the run, on real parts; a repair follows its failure.
  int restarts = 0, failures = 0;
  std::map<std::string, int> failed;  // part -> open failures
  std::int64_t last = 0;
  for (const FaultEventSpec& e : c.faults().event()) {
    EXPECT_GE(e.at_cycles(), last) << "events in time order";
    last = e.at_cycles();
    EXPECT_GT(e.at_cycles(), 0);
    EXPECT_LT(e.at_cycles(), horizon);
    const std::string part = partOf(topo, e) + fmt::format("/{}", static_cast<int>(e.scope()));
    switch (e.action()) {
      case FaultEventSpec::RESTART_AGENT:
        ++restarts;
        EXPECT_EQ(e.port(), 0u);
        break;
      case FaultEventSpec::REPAIR:
        EXPECT_EQ(failed[part], 1) << "repair of " << part << " without its failure";
        --failed[part];
        ++seen["repair"];
        break;
      default:
        EXPECT_EQ(failed[part], 0) << part << " failed twice";
        ++failed[part];
        ++failures;
        if (e.minimal_tree_up()) ++seen["minimal_tree_up"];
        if (e.scope() == FaultEventSpec::SWITCH && e.switch_name().empty() && e.level() == 0) {
          ++seen["root"];
        }
        if (e.scope() == FaultEventSpec::SWITCH && !e.switch_name().empty()) ++seen["switch"];
        if (e.scope() == FaultEventSpec::UP_DIRECTION) ++seen["up"];
        if (e.scope() == FaultEventSpec::DOWN_DIRECTION) ++seen["down"];
        break;
    }
  }
  EXPECT_EQ(restarts, 1);
  EXPECT_GE(failures, 1);
  // The replayable text is the same config.
  Result<config::Config> back = config::parseTextConfig(configText(c), "emitted");
  ASSERT_TRUE(back) << back.status().toString();
  EXPECT_EQ(configText(*back), configText(c));
}

TEST(Scenario, EventsAreValidAndCoverEveryKindOfFault) {
  for (auto [k, n] : {std::pair{4, 3}, std::pair{4, 2}, std::pair{2, 4}}) {
    const config::Config base = baseConfig(k, n);
    const fabric::Topology topo = topologyOf(base);
    std::map<std::string, int> seen;
    for (std::uint64_t seed = 1; seed <= 150; ++seed)
      checkValid(base, topo, scenarioSeed(5, seed), seen);
    for (const char* kind :
         {"step", "hotspot", "repair", "minimal_tree_up", "root", "switch", "up", "down"}) {
      EXPECT_GT(seen[kind], 0) << k << "-ary " << n << "-tree: no " << kind << " in 150 scenarios";
    }
  }
}

// Failures drawn close together (a short run, a short check period: several
// at one cycle) are still a plan the run accepts: never the same part twice,
// never a link of a switch failed at that cycle (the fault plan's own check,
// with the emulator it would run on).
TEST(Scenario, FailuresDrawnAtOneCycleAreAPlanTheRunAccepts) {
  ScenarioShape shape;
  shape.periods = 4;
  for (const char* fabricText :
       {"xgft { m: [3, 2, 5] w: [1, 2, 3] }", "kary_n_tree { k: 3 n: 2 }"}) {
    const config::Config base =
        config::parseTextConfig(std::string("fabric { ") + fabricText +
                                    " } gating { policy: DYNAMIC check_period_cycles: 20 "
                                    "turn_on_cycles: 1 turn_off_cycles: 1 } seed: 1",
                                "test")
            .value();
    const fabric::Topology topo = topologyOf(base);
    int sameCycle = 0;
    for (std::uint64_t i = 1; i <= 400; ++i) {
      const std::uint64_t seed = scenarioSeed(104, i);
      const config::Config c = makeScenario(base, topo, seed, shape);
      SCOPED_TRACE(fmt::format("{}: seed {}", fabricText, seed));
      for (int e = 1; e < c.faults().event_size(); ++e) {
        const auto& a = c.faults().event(e - 1);
        const auto& b = c.faults().event(e);
        sameCycle += a.at_cycles() == b.at_cycles() && a.action() == config::FaultEventSpec::FAIL &&
                     b.action() == config::FaultEventSpec::FAIL;
      }
      Result<replay::RunSpec> spec = replay::buildRunSpec(c);
      ASSERT_TRUE(spec) << spec.status().toString();
      agent::VirtualScheduler sched;
      sim::FabricEmulator emu(topo, spec->emulator, sched);
      auto plan = replay::FaultInjector::create(spec->faults, topo, emu, 1'000'000'000);
      ASSERT_TRUE(plan) << plan.status().toString();
    }
    EXPECT_GT(sameCycle, 0) << "no two failures at one cycle: the case is not exercised";
  }
}

// A link failure named by port on a minimal-tree up link: the generator aims
// at the tree as it stands, not only at random cables.
TEST(Scenario, MinimalTreeLinksAreTargetedByPortToo) {
  const config::Config base = baseConfig(4, 3);
  const fabric::Topology topo = topologyOf(base);
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  int mtByPort = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const config::Config c = makeScenario(base, topo, seed);
    // The first failure meets the intact tree.
    for (const FaultEventSpec& e : c.faults().event()) {
      if (e.action() != FaultEventSpec::FAIL && e.action() != FaultEventSpec::ACTION_UNSPECIFIED) {
        continue;
      }
      if (e.port() != 0 && !e.switch_name().empty()) {
        const fabric::SwitchId sw = *topo.findSwitch(e.switch_name());
        const auto up = mt.upPort(sw);
        if (mt.containsSwitch(sw) && up && *up + 1u == e.port()) ++mtByPort;
      }
      break;
    }
  }
  EXPECT_GT(mtByPort, 10);
}

// A scenario replays alone from wherever it was written
// (worst_scenario.textproto under --out): against the config's folder, or
// the current one when the config was named without a folder (a probe saw
// that case keep the relative path, which then named a missing file).
TEST(Scenario, RelativeTopologyFileBecomesAbsolute) {
  config::Config base = baseConfig(2, 2);
  const fabric::Topology topo = topologyOf(base);
  base.mutable_fabric()->mutable_topology_file()->set_path("net.txt");
  const config::Config c = makeScenario(base, topo, 9, {}, "/some/dir");
  EXPECT_EQ(c.fabric().topology_file().path(), "/some/dir/net.txt");
  EXPECT_EQ(makeScenario(base, topo, 9).fabric().topology_file().path(),
            (std::filesystem::current_path() / "net.txt").string());
}

}  // namespace
}  // namespace ebb::campaign
