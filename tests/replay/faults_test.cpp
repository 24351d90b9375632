// Cable and switch faults in a replay (docs/faults.md): the agents re-home the
// minimal tree and reconnect every connectable pair within the recovery bound,
// physically cut hosts are reported and not held against ebb, closed loops
// retransmit what a failure lost, a restarted agent decides as before, and the
// runner's own proof catches a pair left disconnected beyond the bound.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>
#include <tuple>

#include "agent/virtual_scheduler.h"
#include "configs/config_loader.h"
#include "fabric/ibnetdiscover.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "replay/fault_injector.h"
#include "replay/recovery_monitor.h"
#include "replay/run_spec.h"
#include "replay/runner.h"

namespace ebb::replay {
namespace {

struct Fixture {
  explicit Fixture(int k = 4, int n = 3)
      : topo(fabric::KAryNTree::make(k, n).value().build()),
        mt(fabric::MinimalTree::build(topo).value()) {}
  fabric::Topology topo;
  fabric::MinimalTree mt;
};

Result<RunSpec> specOf(const std::string& text) {
  auto cfg = config::parseTextConfig(text, "test");
  if (!cfg) return cfg.status();
  return buildRunSpec(*cfg);
}

RunSpec spec(const std::string& text) {
  auto s = specOf(text);
  EXPECT_TRUE(s) << s.status().toString();
  return *s;
}

const char* kLowLoad =
    "workload { uniform { rate: 0.02 duration_cycles: 40000 } } "
    "gating { policy: DYNAMIC u_on: 0.15 } ";

// The recovery facts every fault run must show.
void expectRecovered(const FaultOutcome& f) {
  EXPECT_EQ(f.violations, 0u) << f.firstViolation;
  // The longest recovery is the longest any event's pairs went without a
  // path (a later event during the break restarts the bound, not the clock).
  TimePs longest = 0;
  for (const FaultRecord& r : f.events) {
    if (r.disconnected) longest = std::max(longest, r.recoveredAt - r.at);
  }
  EXPECT_EQ(f.maxRecoveryPs, longest);
  // The bound runs from the last event before the recovery.
  for (const FaultRecord& r : f.events) {
    if (r.disconnected) {
      EXPECT_GE(r.recoveredAt, r.at) << r.part;
      const bool laterEventFirst = &r != &f.events.back() && (&r + 1)->at < r.recoveredAt;
      if (!laterEventFirst) {
        EXPECT_LE(r.recoveredAt - r.at, f.recoveryBoundPs) << r.part;
      }
    }
  }
}

// A leaf's minimal-tree up link fails while its other up links are gated off
// (low load: only the tree is on): the leaf's hosts are cut from the rest
// until the agents re-home, which they do at detection, turning on the new
// tree's links at once; everything is delivered again afterwards.
// Each recovery rule holds on both switch models; the input-queued one here
// with wormhole buffers (a packet spans several hops when the cable fails).
class FaultsOnEachModel : public ::testing::TestWithParam<const char*> {};

INSTANTIATE_TEST_SUITE_P(Models, FaultsOnEachModel,
                         ::testing::Values("",
                                           "emulator { switch_model: INPUT_QUEUED "
                                           "vc_buffer_bytes: 16 } "),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           return std::string(i.param).empty() ? "OutputQueued" : "Wormhole";
                         });

TEST_P(FaultsOnEachModel, MinimalTreeLinkOfAGatedLeafFailsAndTheLeafIsReachableAgain) {
  Fixture f;
  const RunSpec s = spec(std::string(GetParam()) + kLowLoad +
                         "faults { event { at_cycles: 10000 level: 2 index: 0 "
                         "minimal_tree_up: true } detection_cycles: 500 }");
  const RunOutput out = runEmulation(s, f.topo, f.mt, true, {}).value();
  const FaultOutcome& fo = out.faults;
  ASSERT_EQ(fo.events.size(), 1u);
  const FaultRecord& e = fo.events[0];
  EXPECT_EQ(e.action, "fail");
  const fabric::SwitchId leaf = f.topo.switchesAtLevel(2).front();
  const fabric::LinkId mtUp = f.topo.sw(leaf).ports[*f.mt.upPort(leaf)].link;
  EXPECT_EQ(e.part, "link " + f.topo.describeLink(mtUp));
  EXPECT_TRUE(e.disconnected);  // the leaf's other up links were off
  EXPECT_EQ(e.detectedAt, e.at + 500 * 1000);
  EXPECT_EQ(fo.recoveryBoundPs, 500'000 + s.emulator.turnOnPs + s.agent.checkPeriodPs);
  expectRecovered(fo);
  EXPECT_TRUE(fo.cutOffHosts.empty());
  EXPECT_EQ(fo.physicallyCutPairs, 0u);
  // The recovery turned the leaf's links on at once, by the recovery rule.
  const auto recovery = std::count_if(
      out.decisions.begin(), out.decisions.end(), [&](const agent::DecisionRecord& d) {
        return d.source == "fault-recovery" && d.turnOn && d.time == e.detectedAt;
      });
  EXPECT_GE(recovery, 2);  // both directions of at least one link
  // Only messages on the failed cable can be lost; the rest arrive.
  EXPECT_EQ(out.summary.messages_delivered() + fo.lostMessages, out.summary.messages_generated());
  // Traffic resumed: the leaf's hosts are delivered to after the recovery.
  ASSERT_FALSE(out.rows.empty());
  EXPECT_GT(out.rows.back().delivered, 0u);
}

// The same failure under a closed loop (an alltoall loop over every host):
// what the cable took is sent again after the retransmission timeout, and
// the job completes with no message lost for good.
TEST_P(FaultsOnEachModel, ClosedLoopRetransmitsWhatTheFailureLost) {
  Fixture f;
  // The leaf's tree cable and the tree cable above it (by port: once the leaf
  // re-homed, S1_0_0 is out of the tree and its minimal_tree_up names nothing).
  const std::string middleUp = std::to_string(*f.mt.upPort(f.topo.switchesAtLevel(1).front()) + 1);
  const RunSpec s =
      spec(std::string(GetParam()) +
           "workload { collective { op: \"alltoall\" bytes: 256 ranks: 64 iterations: 6 } } "
           "gating { policy: DYNAMIC u_on: 0.15 } "
           "faults { event { at_cycles: 3000 level: 2 index: 0 minimal_tree_up: true } "
           "event { at_cycles: 3000 level: 1 index: 0 port: " +
           middleUp +
           " } "
           "retransmit_timeout_cycles: 20000 }");
  const RunOutput out = runEmulation(s, f.topo, f.mt, true, {}).value();
  const FaultOutcome& fo = out.faults;
  expectRecovered(fo);
  std::uint64_t dropped = 0;
  for (const FaultRecord& r : fo.events)
    dropped += r.messagesDropped;
  EXPECT_EQ(fo.lostMessages, 0u);
  EXPECT_EQ(fo.retransmittedMessages, dropped);
  ASSERT_EQ(out.summary.jobs_size(), 1);
  EXPECT_FALSE(out.summary.jobs(0).incomplete());
  EXPECT_GT(out.summary.app_runtime_us(), 0);
}

// The root of the minimal tree fails: the tree is re-homed on another root
// and every pair is reconnected within the bound.
TEST(Faults, MinimalTreeRootFailsAndEveryPairIsReconnected) {
  Fixture f;
  const fabric::SwitchId root = f.mt.root();
  const auto& roots = f.topo.switchesAtLevel(0);
  const auto index = std::find(roots.begin(), roots.end(), root) - roots.begin();
  // Nearly idle: only the tree is on, so its root carries every pair.
  const RunSpec s =
      spec(std::string("workload { uniform { rate: 0.002 duration_cycles: 40000 } } ") +
           "faults { event { at_cycles: 9000 scope: SWITCH " +
           "level: 0 index: " + std::to_string(index) + " } }");
  const RunOutput out = runEmulation(s, f.topo, f.mt, true, {}).value();
  ASSERT_EQ(out.faults.events.size(), 1u);
  EXPECT_EQ(out.faults.events[0].part, "switch " + f.topo.sw(root).name);
  EXPECT_TRUE(out.faults.events[0].disconnected);
  expectRecovered(out.faults);
}

// In-band (whole-link gating, as on InfiniBand) a dead direction takes its
// link down for the emulator, the agents and the proof alike. Before, the
// agents saw the link down while the proof still used its other direction,
// and gating broke a pair only that direction connected (a 3-ary 3-tree: a
// leaf's tree link up direction, another leaf's link, then one direction
// of the first leaf's last way up).
TEST(Faults, InBandADeadDirectionTakesItsWholeLinkDown) {
  Fixture f(3, 3);
  const RunSpec s = spec(
      "workload { rate_points { point { rate: 0.09 } point { at_cycles: 12000 rate: 0.29 } "
      "point { at_cycles: 24000 rate: 0.2 } } } "
      "gating { in_band { enabled: true resilience: NONE } } "
      "faults { "
      "event { at_cycles: 2279 scope: UP_DIRECTION switch_name: \"S2_0_0\" "
      "minimal_tree_up: true } "
      "event { at_cycles: 5726 scope: LINK switch_name: \"S2_2_1\" port: 5 } "
      "event { at_cycles: 19453 scope: DOWN_DIRECTION switch_name: \"S2_0_0\" port: 6 } }");
  const Result<RunOutput> run = runEmulation(s, f.topo, f.mt, true, {});
  ASSERT_TRUE(run) << run.status().toString();
  const RunOutput& out = *run;
  ASSERT_EQ(out.faults.events.size(), 3u);
  EXPECT_NE(out.faults.events[0].part.find("up direction of link"), std::string::npos);
  EXPECT_NE(out.faults.events[0].part.find("(the whole link: in-band)"), std::string::npos)
      << out.faults.events[0].part;
  EXPECT_NE(out.faults.events[2].part.find("(the whole link: in-band)"), std::string::npos);
  expectRecovered(out.faults);
  // The all-on baseline runs on the same fabric: its dead directions take
  // whole links too, so the comparison charges gating nothing of the faults.
  const Result<RunOutput> base = runEmulation(s, f.topo, f.mt, false, {});
  ASSERT_TRUE(base) << base.status().toString();
  ASSERT_EQ(base->faults.events.size(), 3u);
  EXPECT_NE(base->faults.events[0].part.find("(the whole link: in-band)"), std::string::npos)
      << base->faults.events[0].part;
  EXPECT_NE(base->faults.events[2].part.find("(the whole link: in-band)"), std::string::npos);
}

// In-band, a switch that comes back from a failure has its links up again
// but off where gating had them off: the agents must not take them for on.
// Before, they did, and a later minimal-tree cable failure was re-homed
// over the repaired switch's links, which stayed off: a pair cut for good.
TEST(Faults, InBandARepairedSwitchsGatedLinksStayOffForTheAgents) {
  Fixture f(2, 3);
  const RunSpec s = spec(
      "gating { policy: DYNAMIC u_on: 0.3 check_period_cycles: 2000 in_band { enabled: true } } "
      "workload { uniform { rate: 0.02 duration_cycles: 60000 } } "
      "faults { "
      "event { at_cycles: 17100 scope: SWITCH switch_name: \"S1_1_1\" } "
      "event { at_cycles: 21450 action: REPAIR scope: SWITCH switch_name: \"S1_1_1\" } "
      "event { at_cycles: 37202 switch_name: \"S1_0_0\" port: 3 } }");
  const Result<RunOutput> run = runEmulation(s, f.topo, f.mt, true, {});
  ASSERT_TRUE(run) << run.status().toString();
  ASSERT_EQ(run->faults.events.size(), 3u);
  EXPECT_TRUE(run->faults.events[2].disconnected);
  expectRecovered(run->faults);
}

// A cable failing in the very picosecond a parallel one finishes turning on
// leaves no pair without a path for any time at all: no disconnection, no
// recovery of 0 us (two leaves on one root by three parallel cables each).
TEST(Faults, ABreakMendedWithinItsInstantIsNoDisconnection) {
  std::istringstream net(
      "Hca 1 \"H0\"\n[1] \"L0\"[1]\nHca 1 \"H1\"\n[1] \"L0\"[2]\n"
      "Hca 1 \"H2\"\n[1] \"L0\"[3]\nHca 1 \"H3\"\n[1] \"L1\"[1]\n"
      "Switch 6 \"L0\"\n[1] \"H0\"[1]\n[2] \"H1\"[1]\n[3] \"H2\"[1]\n[4] \"R0\"[1]\n"
      "[5] \"R0\"[2]\n[6] \"R0\"[3]\n"
      "Switch 4 \"L1\"\n[1] \"H3\"[1]\n[2] \"R0\"[4]\n[3] \"R0\"[5]\n[4] \"R0\"[6]\n"
      "Switch 6 \"R0\"\n[1] \"L0\"[4]\n[2] \"L0\"[5]\n[3] \"L0\"[6]\n[4] \"L1\"[2]\n"
      "[5] \"L1\"[3]\n[6] \"L1\"[4]\n");
  const fabric::Topology topo = fabric::parseIbnetdiscover(net, "net").value();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  const RunSpec s = spec(
      "workload { uniform { rate: 0.2 duration_cycles: 30000 } } "
      "faults { event { at_cycles: 5000 switch_name: \"L1\" port: 2 } "
      "event { at_cycles: 6000 switch_name: \"L0\" port: 5 } "
      "event { at_cycles: 20000 action: REPAIR switch_name: \"L1\" port: 2 } }");
  const RunOutput out = runEmulation(s, topo, mt, true, {}).value();
  ASSERT_EQ(out.faults.events.size(), 3u);
  for (const FaultRecord& r : out.faults.events) {
    EXPECT_FALSE(r.disconnected && r.recoveredAt == r.at) << r.part << ": a 0 us disconnection";
  }
  expectRecovered(out.faults);
}

// A second failure during (or in the very instant of) the first one's
// recovery restarts the bound but not the recovery's clock: the longest
// recovery is the first event's, and an event at the instant pairs came back
// left no pair without a path (no 0 us disconnection).
TEST(Faults, ALaterEventDuringARecoveryDoesNotShortenIt) {
  Fixture f(2, 3);
  const std::string first =
      "workload { uniform { rate: 0.1 duration_cycles: 20000 } } "
      "faults { event { at_cycles: 1000 switch_name: \"S2_0_0\" port: 3 } ";
  const RunOutput alone = runEmulation(spec(first + "}"), f.topo, f.mt, true, {}).value();
  ASSERT_EQ(alone.faults.events.size(), 1u);
  const FaultRecord& a = alone.faults.events[0];
  ASSERT_TRUE(a.disconnected);
  ASSERT_GT(a.recoveredAt, a.at);
  const TimePs cyclePs = 1000;  // the default cycle
  ASSERT_EQ(a.recoveredAt % cyclePs, 0);
  const TimePs recovery = a.recoveredAt - a.at;
  EXPECT_EQ(alone.faults.maxRecoveryPs, recovery);
  for (const TimePs second : {a.recoveredAt - 100 * cyclePs, a.recoveredAt}) {
    const std::string events = first + "event { at_cycles: " + std::to_string(second / cyclePs) +
                               " switch_name: \"S2_1_1\" port: 4 } }";
    const RunOutput out = runEmulation(spec(events), f.topo, f.mt, true, {}).value();
    ASSERT_EQ(out.faults.events.size(), 2u);
    EXPECT_GE(out.faults.maxRecoveryPs, recovery) << "second event at " << second;
    const FaultRecord& b = out.faults.events[1];
    EXPECT_FALSE(b.disconnected && b.recoveredAt == b.at) << "a 0 us disconnection";
    expectRecovered(out.faults);
  }
}

// FAIL events at cycle 12 000, one per up cable of `leaf`, of `scope`.
std::string upLinkFailures(const Fixture& f, fabric::SwitchId leaf, const char* scope) {
  std::string events;
  for (std::uint16_t p : f.topo.sw(leaf).upPorts) {
    events += std::string("event { at_cycles: 12000 scope: ") + scope + " switch_name: \"" +
              f.topo.sw(leaf).name + "\" port: " + std::to_string(p + 1) + " } ";
  }
  return events;
}

// The hosts of `leaf`, by name in the report's order.
std::vector<std::string> hostsOf(const Fixture& f, fabric::SwitchId leaf) {
  std::vector<std::string> names;
  for (const fabric::Host& h : f.topo.hosts())
    if (f.topo.link(h.link).upper.sw == leaf) names.push_back(h.name);
  std::sort(names.begin(), names.end());
  return names;
}

// Fails `scope` of every up cable of `leaf` at low load: the run recovers,
// reports the leaf's hosts cut off, and `directions` x hosts x others
// ordered pairs physically cut (2: both ways, 1: one way). Returns how many
// hosts the leaf has.
std::size_t expectLeafCutOff(const Fixture& f, fabric::SwitchId leaf, const char* scope,
                             std::uint64_t directions) {
  const RunSpec s =
      spec(std::string(kLowLoad) + "faults { " + upLinkFailures(f, leaf, scope) + "}");
  const RunOutput out = runEmulation(s, f.topo, f.mt, true, {}).value();
  expectRecovered(out.faults);
  const std::vector<std::string> leafHosts = hostsOf(f, leaf);
  EXPECT_EQ(out.faults.cutOffHosts, leafHosts);
  const std::uint64_t n = f.topo.numHosts(), cut = leafHosts.size();
  EXPECT_EQ(out.faults.physicallyCutPairs, directions * cut * (n - cut));
  return leafHosts.size();
}

// A leaf loses every up cable: its hosts are physically cut off, reported as
// such, and not counted as violations; the rest of the fabric stays connected.
TEST(Faults, ALeafLosingEveryUpCableIsReportedCutOff) {
  Fixture f;
  expectLeafCutOff(f, f.topo.switchesAtLevel(2)[3], "LINK", 2);
}

// Repair: the failed cable comes back, is detected, and no pair is left out.
TEST(Faults, RepairIsDetectedAndLeavesEveryPairConnected) {
  Fixture f;
  const fabric::SwitchId leaf = f.topo.switchesAtLevel(2).front();
  const std::string port = std::to_string(*f.mt.upPort(leaf) + 1);
  const RunSpec s = spec(
      std::string(kLowLoad) + "faults { event { at_cycles: 8000 level: 2 index: 0 port: " + port +
      " } event { at_cycles: 20000 action: REPAIR level: 2 index: 0 port: " + port + " } }");
  const RunOutput out = runEmulation(s, f.topo, f.mt, true, {}).value();
  ASSERT_EQ(out.faults.events.size(), 2u);
  const FaultRecord& repair = out.faults.events[1];
  EXPECT_EQ(repair.action, "repair");
  // Reported once the link is usable again (T_on after the repair).
  EXPECT_GE(repair.detectedAt, repair.at + s.emulator.turnOnPs);
  expectRecovered(out.faults);
}

// A scheduled FAIL that would take nothing (the switch's minimal-tree up
// link, while the switch is out of the tree) is refused, as a REPAIR of
// nothing is. With random faults the plan cannot be followed ahead of the
// run: there the event is skipped, said in its record, and never "detected",
// not even by a later event's re-homing (a probe saw the repair's time
// stamped on it).
std::string faultPlanError(const Fixture& f, const std::string& faults);  // below

TEST(Faults, AFailOfNothingIsRefusedOrWithRandomFaultsSkippedAndNeverDetected) {
  Fixture f(2, 3);
  const std::string events =
      "event { at_cycles: 5000 action: FAIL scope: SWITCH level: 0 index: 0 } "
      "event { at_cycles: 9000 action: FAIL level: 1 index: 0 minimal_tree_up: true } "
      "event { at_cycles: 15000 action: REPAIR scope: SWITCH level: 0 index: 0 } ";
  const std::string load = "workload { uniform { rate: 0.002 duration_cycles: 30000 } } ";
  EXPECT_NE(faultPlanError(f, events).find("faults.event[1].minimal_tree_up: S1_0_0 is not in "
                                           "the minimal tree at 9000 cycles"),
            std::string::npos)
      << faultPlanError(f, events);
  // Random failures far apart (a mean of a second against 30 us of run):
  // none arrives, but the plan is no longer checked ahead.
  const RunSpec s = spec(load + "faults { " + events + "random { mtbf_us: 1000000 } }");
  const RunOutput out = runEmulation(s, f.topo, f.mt, true, {}).value();
  ASSERT_EQ(out.faults.events.size(), 3u);
  const FaultRecord& skipped = out.faults.events[1];
  EXPECT_TRUE(skipped.skipped);
  EXPECT_NE(skipped.part.find("(skipped: S1_0_0 is not in the tree now)"), std::string::npos)
      << skipped.part;
  EXPECT_EQ(skipped.detectedAt, -1);
  EXPECT_GE(out.faults.events[2].detectedAt, out.faults.events[2].at);  // the repair is
}

// A closed-loop replay whose host a failure cuts off for good cannot finish:
// the error names the cut-off host as the cause, not a missing send.
TEST(Faults, AClosedLoopRunWithAHostCutOffForGoodNamesIt) {
  Fixture f(2, 2);
  const Result<RunSpec> s = specOf(
      "workload { collective { op: \"allreduce\" bytes: 4096 ranks: 4 iterations: 5 "
      "compute_us: 5 } } "
      "faults { event { at_cycles: 3000 action: FAIL switch_name: \"S1_0\" port: 1 } }");
  ASSERT_TRUE(s) << s.status().toString();
  const Result<RunOutput> out = runEmulation(*s, f.topo, f.mt, true, {});
  ASSERT_FALSE(out);
  const std::string m = out.status().message();
  EXPECT_NE(m.find("faults cut off H0 for good"), std::string::npos) << m;
  EXPECT_EQ(m.find("a receive without a matching send"), std::string::npos) << m;
}

// Random faults: the same seed gives the same events, byte for byte.
TEST(Faults, RandomFaultsAreDeterministicPerSeed) {
  Fixture f;
  const std::string base = std::string(kLowLoad) +
                           "faults { random { mtbf_us: 4 repair_us: 6 switch_share: 0.2 "
                           "direction_share: 0.3 max_failed: 2 seed: ";
  const auto run = [&](int seed) {
    return runEmulation(spec(base + std::to_string(seed) + " } }"), f.topo, f.mt, true, {}).value();
  };
  const RunOutput a = run(3), b = run(3), c = run(4);
  ASSERT_GT(a.faults.events.size(), 4u);
  expectRecovered(a.faults);
  expectRecovered(c.faults);
  EXPECT_EQ(a.summary.SerializeAsString(), b.summary.SerializeAsString());
  std::vector<std::string> pa, pc;
  for (const FaultRecord& r : a.faults.events)
    pa.push_back(r.part);
  for (const FaultRecord& r : c.faults.events)
    pc.push_back(r.part);
  EXPECT_NE(pa, pc);
  EXPECT_TRUE(std::any_of(a.faults.events.begin(), a.faults.events.end(),
                          [](const FaultRecord& r) { return r.random && r.action == "repair"; }));
}

// An agent that restarts at a period boundary where it had nothing to do
// recovers its state from the backend and decides as if it never restarted.
TEST(Faults, ARestartedAgentDecidesAsBefore) {
  Fixture f;
  const char* load =
      "workload { alonso_ramp { time_scale: 0.1 } } gating { policy: DYNAMIC u_on: 0.15 } ";
  const RunOutput plain = runEmulation(spec(load), f.topo, f.mt, true, {}).value();
  const fabric::SwitchId leaf = f.topo.switchesAtLevel(2)[5];
  const TimePs period = spec(load).agent.checkPeriodPs;
  // A boundary in the ramp where this switch decided nothing.
  TimePs when = -1;
  for (TimePs t = 10 * period; t < 20 * period && when < 0; t += period) {
    const bool busy = std::any_of(
        plain.decisions.begin(), plain.decisions.end(),
        [&](const agent::DecisionRecord& d) { return d.port.sw == leaf && d.time == t; });
    if (!busy) when = t;
  }
  ASSERT_GE(when, 0);
  const RunOutput restarted =
      runEmulation(
          spec(std::string(load) + "faults { event { at_cycles: " + std::to_string(when / 1000) +
               " action: RESTART_AGENT switch_name: \"" + f.topo.sw(leaf).name + "\" } }"),
          f.topo, f.mt, true, {})
          .value();
  EXPECT_EQ(restarted.faults.agentRestarts, 1u);
  // The same decisions; within one instant the restarted agent's period task
  // runs after the others', so they are compared in (time, switch, port) order.
  using Key = std::tuple<TimePs, std::uint32_t, std::uint16_t, bool, std::string>;
  const auto keys = [](const RunOutput& o) {
    std::vector<Key> k;
    for (const agent::DecisionRecord& d : o.decisions)
      k.emplace_back(d.time, d.port.sw.value(), d.port.index, d.turnOn, d.source);
    std::sort(k.begin(), k.end());
    return k;
  };
  EXPECT_EQ(keys(restarted), keys(plain));
  EXPECT_TRUE(std::any_of(plain.decisions.begin(), plain.decisions.end(),
                          [&](const agent::DecisionRecord& d) {
                            return d.port.sw == leaf && d.time > when;
                          }));  // it had decisions to make after the restart
  EXPECT_EQ(restarted.summary.relative_power_switch_links(),
            plain.summary.relative_power_switch_links());
}

// A repair during a recovery removes no path: the pairs a failure broke keep
// the failure's deadline (a probe saw an unrelated repair push it back for
// all, which could hide an overrun).
TEST(Faults, ARepairDuringARecoveryKeepsTheFailuresDeadline) {
  Fixture f(4, 2);
  const fabric::SwitchId leaf0 = f.topo.switchesAtLevel(1).front();
  const fabric::SwitchId leaf1 = f.topo.switchesAtLevel(1).back();
  const fabric::LinkId up = f.topo.sw(leaf0).ports[*f.mt.upPort(leaf0)].link;
  // A cable of the other leaf off the tree, failed before and repaired
  // during the recovery: it changes nothing for leaf 0's pairs.
  fabric::LinkId unrelated;
  for (std::uint16_t p : f.topo.sw(leaf1).upPorts) {
    const fabric::LinkId l = f.topo.sw(leaf1).ports[p].link;
    if (!f.mt.containsLink(l)) unrelated = l;  // the last: a root leaf 0 still reaches
  }
  ASSERT_TRUE(unrelated.valid());
  agent::VirtualScheduler sched;
  fabric::FaultSet truth(f.topo);
  std::vector<FaultRecord> records(3);
  records[0].action = "fail";
  records[1].action = "fail";
  records[2].action = "repair";
  RecoveryMonitor m(f.topo, fabric::LinkStates::onlyMinimalTree(f.topo, f.mt), sched, truth,
                    &records, 100, true);
  const auto event = [&](std::size_t r, const std::function<void()>& change) {
    m.beforeFaultChange(r);
    change();
    m.onFaultEvent(r, true);
  };
  sched.at(5, agent::Phase::kNetwork, [&] { event(0, [&] { truth.failLink(unrelated); }); });
  sched.at(10, agent::Phase::kNetwork, [&] {
    event(1, [&] {
      truth.failLink(up);
      m.onUsability(up, fabric::Direction::kUp, false);
      m.onUsability(up, fabric::Direction::kDown, false);
    });
  });
  sched.at(60, agent::Phase::kNetwork,
           [&] { event(2, [&] { truth.repairLink(f.topo, unrelated); }); });
  sched.runUntil(400);
  ASSERT_EQ(m.failure().code(), ErrorCode::kInternal) << "no violation";
  EXPECT_NE(m.failure().message().find("after the fault event that began its recovery"),
            std::string::npos)
      << m.failure().message();
  EXPECT_LE(sched.now(), 110);  // the failure's deadline, not the repair's (160)
}

// The monitor itself: a pair left disconnected past the bound is a violation,
// an error in a replay and counted per period in a campaign; a break with no
// fault in the window is a gating break at once.
TEST(Faults, MonitorCountsPairsLeftDisconnectedBeyondTheBound) {
  Fixture f(2, 2);
  const fabric::SwitchId leaf = f.topo.switchesAtLevel(1).front();
  const fabric::LinkId hostLink = f.topo.host(fabric::HostId(0)).link;
  const fabric::LinkId up = f.topo.sw(leaf).ports[*f.mt.upPort(leaf)].link;
  for (bool errors : {true, false}) {
    agent::VirtualScheduler sched;
    fabric::FaultSet truth(f.topo);
    std::vector<FaultRecord> records{FaultRecord{}};
    records[0].action = "fail";
    RecoveryMonitor m(f.topo, fabric::LinkStates::onlyMinimalTree(f.topo, f.mt), sched, truth,
                      &records, 100, errors);
    sched.at(10, agent::Phase::kNetwork, [&] {
      m.beforeFaultChange(0);
      truth.failLink(up);
      m.onUsability(up, fabric::Direction::kUp, false);
      m.onUsability(up, fabric::Direction::kDown, false);
      m.onFaultEvent(0, true);
    });
    for (TimePs t = 50; t <= 400; t += 50)
      sched.at(t, agent::Phase::kControl, [&] { m.onPeriod(); });
    sched.runUntil(400);
    EXPECT_TRUE(records[0].disconnected);
    FaultOutcome out;
    m.fill(out);
    if (errors) {
      EXPECT_EQ(m.failure().code(), ErrorCode::kInternal);
      EXPECT_NE(m.failure().message().find("recovery bound 100 ps"), std::string::npos)
          << m.failure().message();
      EXPECT_LE(sched.now(), 110);  // stopped at the deadline
    } else {
      EXPECT_TRUE(m.failure().isOk());
      // Leaf 0's two hosts and leaf 1's two, both ways: 8 ordered pairs, at
      // the deadline and at each of the periods 150..400 after it.
      EXPECT_EQ(out.violations, 8u * 7u);
      EXPECT_NE(out.firstViolation.find("still disconnected"), std::string::npos);
      // Never recovered: the longest recovery is the outage so far, not 0.
      EXPECT_GE(out.maxRecoveryPs, 400 - 10);
    }
  }
  // Without a fault: the first lost pair is a gating break, at once.
  agent::VirtualScheduler sched;
  fabric::FaultSet truth(f.topo);
  RecoveryMonitor m(f.topo, fabric::LinkStates::allOn(f.topo), sched, truth, nullptr, 100, true);
  m.onUsability(hostLink, fabric::Direction::kUp, false);
  EXPECT_NE(m.failure().message().find("gating broke connectivity"), std::string::npos);
}

// The error of a fault plan (`faults` inside faults { }) on the fixture's
// fabric: its config's, or its injector's once the plan is resolved; "" if
// none.
std::string faultPlanError(const Fixture& f, const std::string& faults) {
  auto s = specOf(std::string(kLowLoad) + "faults { " + faults + " }");
  if (!s) return s.status().message();
  agent::VirtualScheduler sched;
  sim::FabricEmulator emu(f.topo, s->emulator, sched);
  auto inj = FaultInjector::create(s->faults, f.topo, emu, 1000);
  return inj ? std::string() : inj.status().message();
}

// Bad fault configs name the event and the rule.
TEST(Faults, BadFaultConfigsAreRejectedNamingTheField) {
  Fixture f;
  const auto error = [&](const std::string& faults) { return faultPlanError(f, faults); };
  EXPECT_NE(error("event { switch_name: \"nope\" port: 1 }").find("faults.event[0].switch_name"),
            std::string::npos);
  EXPECT_NE(error("event { level: 2 index: 0 port: 99 }").find("faults.event[0].port"),
            std::string::npos);
  EXPECT_NE(error("event { level: 7 index: 0 port: 1 }").find("faults.event[0].level"),
            std::string::npos);
  EXPECT_NE(error("event { level: 1 index: 99 port: 1 }").find("faults.event[0].index"),
            std::string::npos);
  EXPECT_NE(error("event { level: 0 index: 0 minimal_tree_up: true }").find("is a root"),
            std::string::npos);
  EXPECT_NE(error("event { level: 2 index: 0 }").find("needs port"), std::string::npos);
  EXPECT_NE(error("event { scope: SWITCH level: 2 index: 0 port: 1 }").find("names a switch"),
            std::string::npos);
  EXPECT_NE(error("event { switch_name: \"S2_0_0\" level: 1 port: 1 }").find("not both"),
            std::string::npos);
  EXPECT_NE(error("event { at_cycles: -5 level: 2 index: 0 port: 1 }").find("at_cycles"),
            std::string::npos);
  EXPECT_NE(error("random { mtbf_us: 0 }").find("faults.random.mtbf_us"), std::string::npos);
  EXPECT_NE(error("random { mtbf_us: 1 mt_share: 1.5 }").find("faults.random.mt_share"),
            std::string::npos);
  EXPECT_NE(error("random { mtbf_us: 1 start_cycles: 50 end_cycles: 10 }").find("end_cycles"),
            std::string::npos);
  EXPECT_NE(error("detection_cycles: -1").find("faults.detection_cycles"), std::string::npos);
  // The cost before the work: a mean gap of 1 ps over the 1000 ps run draws
  // about 1000 failures (an ns-for-us typo), over max_arrivals unless raised.
  EXPECT_NE(error("random { mtbf_us: 0.000001 max_arrivals: 999 }")
                .find("faults.random.mtbf_us: 1e-06 us over the 0.001 us of random faults draws "
                      "about 1e+03 failures, more than the limit of 999"),
            std::string::npos)
      << error("random { mtbf_us: 0.000001 max_arrivals: 999 }");
  EXPECT_EQ(error("random { mtbf_us: 0.000001 max_arrivals: 1000 }"), "");
  EXPECT_NE(error("random { mtbf_us: 1 max_arrivals: 0 }").find("faults.random.max_arrivals"),
            std::string::npos);
  EXPECT_EQ(error("event { level: 2 index: 0 port: 5 }"), "");
  // A repair names what an earlier failure took: the same link from either
  // end, a direction of a failed link, or a link of a failed switch.
  EXPECT_NE(error("event { action: REPAIR switch_name: \"S2_0_0\" port: 5 }")
                .find("faults.event[0]: REPAIR of link"),
            std::string::npos);
  EXPECT_NE(error("event { at_cycles: 10 switch_name: \"S2_0_0\" port: 5 } "
                  "event { at_cycles: 20 action: REPAIR switch_name: \"S2_0_0\" port: 6 }")
                .find("faults.event[1]: REPAIR of link"),
            std::string::npos);
  EXPECT_NE(error("event { at_cycles: 10 scope: UP_DIRECTION switch_name: \"S2_0_0\" port: 5 } "
                  "event { at_cycles: 20 action: REPAIR scope: DOWN_DIRECTION switch_name: "
                  "\"S2_0_0\" port: 5 }")
                .find("REPAIR of the down direction of link"),
            std::string::npos);
  EXPECT_NE(error("event { action: REPAIR scope: SWITCH switch_name: \"S1_0_0\" }")
                .find("REPAIR of switch S1_0_0, which no earlier event failed"),
            std::string::npos);
  // A part fails once until repaired: the same cable from its other end, a
  // direction of a failed link, a switch twice. A direction then its link,
  // or a failure after its repair, is a new failure.
  EXPECT_NE(error("event { at_cycles: 10 switch_name: \"S2_0_0\" port: 5 } "
                  "event { at_cycles: 20 switch_name: \"S1_0_0\" port: 1 }")
                .find("faults.event[1]: FAIL of link S2_0_0[5] - S1_0_0[1], which an earlier "
                      "event failed and none repaired"),
            std::string::npos)
      << error(
             "event { at_cycles: 10 switch_name: \"S2_0_0\" port: 5 } "
             "event { at_cycles: 20 switch_name: \"S1_0_0\" port: 1 }");
  EXPECT_NE(error("event { at_cycles: 10 switch_name: \"S2_0_0\" port: 5 } "
                  "event { at_cycles: 20 scope: UP_DIRECTION switch_name: \"S2_0_0\" port: 5 }")
                .find("FAIL of the up direction of link"),
            std::string::npos);
  // A link of a failed switch failed with it (either end); a cable that
  // fails before its switch is a failure of its own.
  EXPECT_NE(error("event { at_cycles: 10 scope: SWITCH switch_name: \"S1_0_0\" } "
                  "event { at_cycles: 20 switch_name: \"S2_0_0\" port: 5 }")
                .find("faults.event[1]: FAIL of link S2_0_0[5] - S1_0_0[1], whose switch S1_0_0 "
                      "an earlier event failed and none repaired"),
            std::string::npos);
  EXPECT_NE(error("event { at_cycles: 10 scope: SWITCH switch_name: \"S2_0_0\" } "
                  "event { at_cycles: 20 scope: DOWN_DIRECTION switch_name: \"S1_0_0\" port: 1 }")
                .find("whose switch S2_0_0 an earlier event failed"),
            std::string::npos);
  EXPECT_EQ(error("event { at_cycles: 10 switch_name: \"S2_0_0\" port: 5 } "
                  "event { at_cycles: 20 scope: SWITCH switch_name: \"S1_0_0\" } "
                  "event { at_cycles: 30 action: REPAIR scope: SWITCH switch_name: \"S1_0_0\" } "
                  "event { at_cycles: 40 action: REPAIR switch_name: \"S2_0_0\" port: 5 }"),
            "");
  EXPECT_NE(error("event { at_cycles: 10 scope: SWITCH switch_name: \"S1_0_0\" } "
                  "event { at_cycles: 20 scope: SWITCH switch_name: \"S1_0_0\" }")
                .find("FAIL of switch S1_0_0, which an earlier event failed"),
            std::string::npos);
  EXPECT_EQ(error("event { at_cycles: 10 scope: UP_DIRECTION switch_name: \"S2_0_0\" port: 5 } "
                  "event { at_cycles: 20 switch_name: \"S2_0_0\" port: 5 } "
                  "event { at_cycles: 30 action: REPAIR switch_name: \"S2_0_0\" port: 5 } "
                  "event { at_cycles: 40 switch_name: \"S2_0_0\" port: 5 }"),
            "");
  EXPECT_EQ(error("event { at_cycles: 10 switch_name: \"S2_0_0\" port: 5 } "
                  "event { at_cycles: 20 action: REPAIR scope: UP_DIRECTION switch_name: "
                  "\"S2_0_0\" port: 5 } "
                  "event { at_cycles: 30 action: REPAIR scope: DOWN_DIRECTION switch_name: "
                  "\"S2_0_0\" port: 5 }"),
            "");
  EXPECT_EQ(error("event { at_cycles: 10 scope: SWITCH switch_name: \"S1_0_0\" } "
                  "event { at_cycles: 20 action: REPAIR switch_name: \"S2_0_0\" port: 5 } "
                  "event { at_cycles: 30 action: REPAIR scope: SWITCH switch_name: \"S1_0_0\" }"),
            "");
}

// A whole-link failure inside the detection delay of an earlier failure of
// one direction of that link changes nothing the agents hear: the re-homing
// after the first covers it (not the later repair's, 3.8 us on).
TEST(Faults, AFailureOnALinkAlreadyHeardDownIsDetectedWithIt) {
  Fixture f(3, 3);
  const auto run = [&](const std::string& events) {
    const RunSpec s = spec(
        "workload { uniform { rate: 0.005 duration_cycles: 10000 } } gating { policy: DYNAMIC } "
        "faults { event { at_cycles: 100 scope: UP_DIRECTION switch_name: \"S2_0_0\" port: 4 } " +
        events + " }");
    const RunOutput out = runEmulation(s, f.topo, f.mt, true, {}).value();
    EXPECT_EQ(out.faults.events.size(), 3u);
    return std::pair{s.faults.detectionPs, out.faults.events};
  };
  const auto [detection, events] =
      run("event { at_cycles: 200 scope: LINK switch_name: \"S2_0_0\" port: 4 } "
          "event { at_cycles: 3000 action: REPAIR switch_name: \"S2_0_0\" port: 4 }");
  ASSERT_EQ(events.size(), 3u);
  const FaultRecord& first = events[0];
  const FaultRecord& whole = events[1];
  EXPECT_EQ(first.detectedAt, first.at + detection);
  EXPECT_EQ(whole.detectedAt, first.detectedAt);
  EXPECT_GT(events[2].detectedAt, events[2].at);
  // Heard before the whole-link failure, the first report saw only the up
  // direction: a re-homing for another cable inside the new failure's
  // detection delay does not count as hearing it.
  const auto [detectionLater, later] =
      run("event { at_cycles: 4500 scope: LINK switch_name: \"S2_1_0\" port: 4 } "
          "event { at_cycles: 5000 scope: LINK switch_name: \"S2_0_0\" port: 4 }");
  ASSERT_EQ(later.size(), 3u);
  const FaultRecord& other = later[1];
  const FaultRecord& wholeLater = later[2];
  EXPECT_EQ(other.detectedAt, other.at + detectionLater);
  EXPECT_GE(wholeLater.detectedAt, wholeLater.at + detectionLater);
}

// A leaf whose every up cable lost its down direction can send out but never
// hear back: its hosts are cut off one way, reported as cut off too (not a
// silent 10% of the messages lost), and a closed-loop run names them.
TEST(Faults, HostsCutOffOneWayAreReportedCutOff) {
  Fixture f;
  const fabric::SwitchId leaf = f.topo.switchesAtLevel(2)[3];
  // Only the pairs into the leaf are cut: half of a whole cut's.
  const std::size_t cut = expectLeafCutOff(f, leaf, "DOWN_DIRECTION", 1);
  const fabric::Rehomed r = fabric::MinimalTree::build(f.topo, [&] {
    fabric::FaultSet fs(f.topo);
    for (std::uint16_t p : f.topo.sw(leaf).upPorts)
      fs.failLink(f.topo.sw(leaf).ports[p].link, fabric::Direction::kDown);
    return fs;
  }());
  EXPECT_TRUE(r.cutOff.empty());
  EXPECT_EQ(r.oneWay.size(), cut);
}

// The recovery bound is a sum (detection + T_on + period + slack): one that
// would not fit the time range is refused naming the fields, and a large one
// that fits never wraps into a false violation blamed on gating.
TEST(Faults, ARecoveryBoundBeyondTheTimeRangeIsRefusedAndALargeOneHolds) {
  const std::string cable = "event { at_cycles: 8000 level: 2 index: 0 minimal_tree_up: true } ";
  for (const char* field : {"recovery_slack_cycles", "detection_cycles"}) {
    SCOPED_TRACE(field);
    const Result<RunSpec> huge =
        specOf(std::string(kLowLoad) + "faults { " + cable + field + ": 9223372036854775 }");
    ASSERT_FALSE(huge);
    EXPECT_NE(huge.status().message().find("the recovery bound"), std::string::npos)
        << huge.status().message();
    EXPECT_NE(huge.status().message().find("faults.recovery_slack_cycles"), std::string::npos)
        << huge.status().message();
  }
  Fixture f;
  const RunSpec s = spec(std::string(kLowLoad) + "faults { " + cable +
                         "recovery_slack_cycles: 2000000000000000 }");  // about 23 days
  EXPECT_EQ(s.faults.recoveryBoundPs, s.faults.detectionPs + s.emulator.turnOnPs +
                                          s.agent.checkPeriodPs + s.faults.recoverySlackPs);
  const Result<RunOutput> out = runEmulation(s, f.topo, f.mt, true, {});
  ASSERT_TRUE(out) << out.status().toString();
  EXPECT_EQ(out->faults.violations, 0u) << out->faults.firstViolation;
  EXPECT_EQ(out->faults.recoveryBoundPs, s.faults.recoveryBoundPs);
}

// A switch is named by switch_name or by level and index: a left-out field
// never silently names root S0_0_0; a port given as 0 is a value, refused.
TEST(Faults, AnEventMustNameItsSwitchAndAPortZeroIsRefused) {
  const auto error = [](const std::string& faults) {
    const Result<RunSpec> s = specOf(std::string(kLowLoad) + "faults { " + faults + " }");
    return s ? std::string() : s.status().message();
  };
  EXPECT_NE(error("event { port: 1 }")
                .find("faults.event[0]: no switch named: give switch_name, "
                      "or level and index (missing level)"),
            std::string::npos);
  EXPECT_NE(error("event { level: 2 port: 1 }").find("(missing index)"), std::string::npos);
  EXPECT_NE(error("event { scope: SWITCH }").find("no switch named"), std::string::npos);
  EXPECT_NE(error("event { action: RESTART_AGENT }").find("no switch named"), std::string::npos);
  EXPECT_NE(error("event { switch_name: \"S2_0_0\" index: 0 port: 1 }").find("not both"),
            std::string::npos);
  EXPECT_NE(error("event { level: 2 index: 0 port: 0 }")
                .find("faults.event[0].port: must be 1..65535 (is 0)"),
            std::string::npos);
  EXPECT_EQ(error("event { level: 0 index: 0 scope: SWITCH }"), "");
}

// minimal_tree_up is followed ahead of the run as the run resolves it (the
// tree re-homed over what the plan failed so far): the events after it are
// checked too, and its REPAIR repairs the link its FAIL took.
TEST(Faults, MinimalTreeUpEventsAreFollowedAndTheirRepairRepairsWhatTheyTook) {
  Fixture f;
  const auto error = [&](const std::string& faults) { return faultPlanError(f, faults); };
  // The typo after an unrelated minimal_tree_up FAIL is still caught.
  EXPECT_NE(error("event { at_cycles: 10 level: 2 index: 1 minimal_tree_up: true } "
                  "event { at_cycles: 20 switch_name: \"S2_0_0\" port: 5 } "
                  "event { at_cycles: 30 action: REPAIR switch_name: \"S2_0_0\" port: 6 }")
                .find("faults.event[2]: REPAIR of link"),
            std::string::npos);
  // The tree link of S2_0_0, failed as minimal_tree_up, then again by name
  // from its other end: the same cable twice.
  const fabric::SwitchId leaf = f.topo.findSwitch("S2_0_0").value();
  const fabric::LinkId treeUp = f.topo.sw(leaf).ports[f.mt.upPort(leaf).value()].link;
  const fabric::PortId upper = f.topo.link(treeUp).upper;
  const std::string other =
      fmt::format("switch_name: \"{}\" port: {}", f.topo.sw(upper.sw).name, upper.ibPortNumber());
  EXPECT_NE(error("event { at_cycles: 10 switch_name: \"S2_0_0\" minimal_tree_up: true } "
                  "event { at_cycles: 20 " +
                  other + " }")
                .find("faults.event[1]: FAIL of link " + f.topo.describeLink(treeUp) +
                      ", which an earlier event failed"),
            std::string::npos);
  EXPECT_NE(error("event { at_cycles: 10 action: REPAIR switch_name: \"S2_0_0\" "
                  "minimal_tree_up: true }")
                .find("faults.event[0]: REPAIR of the minimal_tree_up link of S2_0_0, but no "
                      "earlier minimal_tree_up FAIL of S2_0_0 took a link"),
            std::string::npos);
  EXPECT_NE(error("event { at_cycles: 10 switch_name: \"S2_0_0\" minimal_tree_up: true } "
                  "event { at_cycles: 20 action: REPAIR switch_name: \"S2_0_0\" "
                  "minimal_tree_up: true } "
                  "event { at_cycles: 30 action: REPAIR " +
                  other + " }")
                .find("faults.event[2]: REPAIR of link"),
            std::string::npos)
      << "the minimal_tree_up REPAIR repaired the cable, so a REPAIR by name is one too many";
  // Run: the REPAIR brings back exactly the cable the FAIL took.
  const RunSpec s = spec(std::string(kLowLoad) +
                         "faults { event { at_cycles: 5000 switch_name: \"S2_0_0\" "
                         "minimal_tree_up: true } event { at_cycles: 15000 action: REPAIR "
                         "switch_name: \"S2_0_0\" minimal_tree_up: true } }");
  const Result<RunOutput> out = runEmulation(s, f.topo, f.mt, true, {});
  ASSERT_TRUE(out) << out.status().toString();
  ASSERT_EQ(out->faults.events.size(), 2u);
  EXPECT_EQ(out->faults.events[0].part, "link " + f.topo.describeLink(treeUp));
  EXPECT_EQ(out->faults.events[1].part, "link " + f.topo.describeLink(treeUp));
  EXPECT_FALSE(out->faults.events[1].skipped);
  EXPECT_EQ(out->faults.violations, 0u);
}

// An event after the run ended never happens, and the report says so.
TEST(Faults, EventsAfterTheRunEndedAreCountedAsNotReached) {
  Fixture f;
  const RunSpec s = spec(std::string(kLowLoad) +
                         "faults { event { at_cycles: 5000 switch_name: \"S2_0_0\" port: 5 } "
                         "event { at_cycles: 900000000 switch_name: \"S2_1_0\" port: 5 } }");
  const Result<RunOutput> out = runEmulation(s, f.topo, f.mt, true, {});
  ASSERT_TRUE(out) << out.status().toString();
  EXPECT_EQ(out->faults.events.size(), 1u);
  EXPECT_EQ(out->faults.eventsNotReached, 1u);
}

}  // namespace
}  // namespace ebb::replay
