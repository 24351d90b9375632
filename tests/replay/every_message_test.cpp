// Every message a run generates is delivered or counted lost, and a host pair
// the surviving cables connect is never left without a path: on irregular
// trees read from a file (a tree switch that is the parent of a leaf hanging
// on another switch), on a small k-ary n-tree whose cable fails under gating,
// and with a failure of one direction only, on both switch models.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "configs/config_loader.h"
#include "fabric/minimal_tree.h"
#include "replay/fabric_from_config.h"
#include "replay/report_writer.h"
#include "replay/run_spec.h"
#include "replay/runner.h"

namespace ebb::replay {
namespace {

namespace fs = std::filesystem;

// Three levels, 4 leaves: L0 and L1 hang on M0 in the minimal tree, but M1
// (a tree switch, over L2 and L3) is cabled to them too; two roots.
constexpr const char* kIrregularNet = R"(
Hca 1 "h0"
[1] "L0"[1]
Hca 1 "h1"
[1] "L0"[2]
Hca 1 "h2"
[1] "L1"[1]
Hca 1 "h3"
[1] "L1"[2]
Hca 1 "h4"
[1] "L2"[1]
Hca 1 "h5"
[1] "L2"[2]
Hca 1 "h6"
[1] "L3"[1]
Hca 1 "h7"
[1] "L3"[2]
Switch 8 "L0"
[1] "h0"[1]
[2] "h1"[1]
[5] "M0"[1]
[6] "M1"[1]
Switch 8 "L1"
[1] "h2"[1]
[2] "h3"[1]
[5] "M0"[2]
[6] "M1"[2]
Switch 8 "L2"
[1] "h4"[1]
[2] "h5"[1]
[5] "M1"[3]
[6] "M2"[1]
Switch 8 "L3"
[1] "h6"[1]
[2] "h7"[1]
[5] "M1"[4]
[6] "M2"[2]
Switch 8 "M0"
[1] "L0"[5]
[2] "L1"[5]
[7] "R0"[1]
Switch 8 "M1"
[1] "L0"[6]
[2] "L1"[6]
[3] "L2"[5]
[4] "L3"[5]
[7] "R0"[2]
[8] "R1"[1]
Switch 8 "M2"
[1] "L2"[6]
[2] "L3"[6]
[7] "R1"[2]
Switch 8 "R0"
[1] "M0"[7]
[2] "M1"[7]
Switch 8 "R1"
[1] "M1"[8]
[2] "M2"[7]
)";

// Two leaves, two roots; root R1 is cabled to L0 only (a missing cable), so
// a packet from L0 to L1 that climbs to R1 has no way down.
constexpr const char* kMissingCableNet = R"(
Hca 1 "h0"
[1] "L0"[1]
Hca 1 "h1"
[1] "L0"[2]
Hca 1 "h2"
[1] "L1"[1]
Hca 1 "h3"
[1] "L1"[2]
Switch 8 "L0"
[1] "h0"[1]
[2] "h1"[1]
[5] "R0"[1]
[6] "R1"[1]
Switch 8 "L1"
[1] "h2"[1]
[2] "h3"[1]
[5] "R0"[2]
Switch 8 "R0"
[1] "L0"[5]
[2] "L1"[5]
Switch 8 "R1"
[1] "L0"[6]
)";

// Two leaves, each with two parallel cables to one spine.
constexpr const char* kParallelNet = R"(
Hca 1 "a1"
[1] "LA"[1]
Hca 1 "a2"
[1] "LA"[2]
Hca 1 "b1"
[1] "LB"[1]
Hca 1 "b2"
[1] "LB"[2]
Switch 8 "LA"
[1] "a1"[1]
[2] "a2"[1]
[5] "SP"[1]
[6] "SP"[2]
Switch 8 "LB"
[1] "b1"[1]
[2] "b2"[1]
[5] "SP"[3]
[6] "SP"[4]
Switch 8 "SP"
[1] "LA"[5]
[2] "LA"[6]
[3] "LB"[5]
[4] "LB"[6]
)";

// Two spines over three leaves; leaf "LZ" has no hosts (its nodes down), so
// counted from the hosts up it would be the one root.
constexpr const char* kHostlessLeafNet = R"(
Hca 1 "a1"
[1] "LA"[1]
Hca 1 "a2"
[1] "LA"[2]
Hca 1 "b1"
[1] "LB"[1]
Hca 1 "b2"
[1] "LB"[2]
Switch 8 "LA"
[1] "a1"[1]
[2] "a2"[1]
[5] "S0"[1]
[6] "S1"[1]
Switch 8 "LB"
[1] "b1"[1]
[2] "b2"[1]
[5] "S0"[2]
[6] "S1"[2]
Switch 8 "LZ"
[5] "S0"[3]
[6] "S1"[3]
Switch 8 "S0"
[1] "LA"[5]
[2] "LB"[5]
[3] "LZ"[5]
Switch 8 "S1"
[1] "LA"[6]
[2] "LB"[6]
[3] "LZ"[6]
)";

// Runs `text` (a config) with its agents; the net files beside it.
RunOutput run(const std::string& text) {
  const fs::path dir =
      fs::temp_directory_path() / ("ebb-every-message-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "irregular.net") << kIrregularNet;
  std::ofstream(dir / "missing_cable.net") << kMissingCableNet;
  std::ofstream(dir / "parallel.net") << kParallelNet;
  std::ofstream(dir / "hostless_leaf.net") << kHostlessLeafNet;
  // Hosts 0, 1 send to 2, 3 and back across the spine at 0.9 flits/cycle
  // (64-byte messages of 16 flits every 17.78 ns at 1 ns cycles).
  std::ofstream cross(dir / "cross.txt");
  for (int i = 0; i < 400; ++i) {
    for (int src = 0; src < 4; ++src)
      cross << fmt::format("{:.3f} {} {} 64\n", i * 17.78, src, (src + 2) % 4);
  }
  cross.close();
  auto cfg = config::parseTextConfig(text, "test");
  EXPECT_TRUE(cfg) << cfg.status().toString();
  const fabric::Topology topo = topologyFromConfig(cfg->fabric(), dir.string()).value();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  const RunSpec spec = buildRunSpec(*cfg, dir.string()).value();
  Result<RunOutput> out = runEmulation(spec, topo, mt, true, {});
  fs::remove_all(dir);
  EXPECT_TRUE(out) << out.status().toString();
  return std::move(out).value();
}

void expectEveryMessageAccountedFor(const results::RunSummary& s) {
  EXPECT_GT(s.messages_generated(), 0u);
  EXPECT_EQ(s.messages_delivered() + s.faults().lost_messages(), s.messages_generated())
      << "delivered " << s.messages_delivered() << ", lost " << s.faults().lost_messages();
  EXPECT_EQ(s.faults().violations(), 0u) << s.faults().first_violation();
  EXPECT_EQ(s.packets_stranded(), 0u) << s.stranded_where();
}

// A drain that keeps delivering goes on past its span (the larger of a fifth
// of the workload and 100 check periods): every host sends to one hot host at
// 7.5 times what its link carries, a backlog of about 260 000 cycles against
// a span of 200 000.
TEST(EveryMessage, ADrainThatKeepsDeliveringGoesOnPastItsSpan) {
  const RunOutput out = run(R"(
    fabric { kary_n_tree { k: 4 n: 2 } }
    workload { uniform { rate: 0.5 duration_cycles: 40000 } hotspot { hosts: 1 fraction: 1 } }
    gating { policy: ALL_ON })");
  const results::RunSummary& s = out.summary;
  EXPECT_EQ(s.packets_stranded(), 0u) << s.stranded_where();
  EXPECT_EQ(s.messages_delivered(), s.messages_generated());
}

// What the drain's bound (ten spans) leaves in the network is counted and
// located, not left for the reader to infer from delivered < generated: the
// same overload with 200-cycle check periods, a span of 20 000 cycles.
TEST(EveryMessage, PacketsLeftWhenTheDrainEndsAreReportedWithWhereTheyWait) {
  const RunOutput out = run(R"(
    fabric { kary_n_tree { k: 4 n: 2 } }
    workload { uniform { rate: 0.5 duration_cycles: 40000 } hotspot { hosts: 1 fraction: 1 } }
    gating { policy: ALL_ON check_period_cycles: 200 turn_on_cycles: 100 turn_off_cycles: 100 })");
  const results::RunSummary& s = out.summary;
  EXPECT_GT(s.packets_stranded(), 0u);
  // One packet per 64-byte message, none lost.
  EXPECT_EQ(s.packets_stranded(), s.messages_generated() - s.messages_delivered());
  EXPECT_NE(s.stranded_where().find("packets wait on"), std::string::npos) << s.stranded_where();
  results::Report report;
  *report.mutable_run() = s;
  EXPECT_NE(formatSummary(report).find("packets still in the network when the drain ended"),
            std::string::npos);
  EXPECT_NE(formatSummary(report).find(fmt::format("! {} of {} messages not delivered",
                                                   s.packets_stranded(), s.messages_generated())),
            std::string::npos)
      << formatSummary(report);
}

// A summary never shows a latency nobody measured, and says when messages
// went undelivered whatever the reason.
TEST(EveryMessage, TheSummaryShowsNoUnmeasuredLatencyAndNamesWhatWasNotDelivered) {
  results::Report report;
  results::RunSummary& s = *report.mutable_run();
  s.set_policy("dynamic");
  s.set_messages_generated(40);
  s.set_messages_delivered(0);
  const std::string text = formatSummary(report);
  EXPECT_NE(text.find("latency mean      n/a p50     n/a p99      n/a cycles"), std::string::npos)
      << text;
  EXPECT_NE(text.find("! 40 of 40 messages not delivered"), std::string::npos) << text;
  s.set_messages_delivered(40);
  s.set_latency_messages(40);
  s.set_mean_latency_cycles(32);
  const std::string ok = formatSummary(report);
  EXPECT_NE(ok.find("latency mean     32.0"), std::string::npos) << ok;
  EXPECT_EQ(ok.find("not delivered"), std::string::npos) << ok;
}

constexpr const char* kModels[] = {"OUTPUT_QUEUED", "INPUT_QUEUED"};

TEST(EveryMessage, IrregularTreeWhoseTreeSwitchParentsAnotherLeaf) {
  for (const char* model : kModels) {
    for (const char* policy : {"DYNAMIC", "STATIC u_off: 0.05 u_on: 0.15"}) {
      SCOPED_TRACE(std::string(model) + " " + policy);
      const RunOutput out = run(std::string(R"(
        fabric { topology_file { path: "irregular.net" format: IBSIM_NET } }
        workload { uniform { rate: 0.05 duration_cycles: 20000 } }
        emulator { switch_model: )") +
                                model + R"( }
        gating { policy: )" + policy +
                                " }");
      expectEveryMessageAccountedFor(out.summary);
      EXPECT_LT(out.summary.relative_power_switch_links(), 1.0);  // it did gate
    }
  }
}

// A leaf switch without hosts, with the roots named: both models gate the
// spines' links and deliver every message, also across a cable failure.
TEST(EveryMessage, ALeafWithoutHostsUnderNamedRoots) {
  for (const char* model : kModels) {
    SCOPED_TRACE(model);
    const RunOutput out = run(fmt::format(R"(
      fabric {{ topology_file {{ path: "hostless_leaf.net" roots: ["S0", "S1"] }} }}
      workload {{ uniform {{ rate: 0.05 duration_cycles: 30000 }} }}
      emulator {{ switch_model: {} }}
      gating {{ policy: DYNAMIC }}
      faults {{ event {{ at_cycles: 8000 action: FAIL switch_name: "LA" port: 5 }} }})",
                                          model));
    expectEveryMessageAccountedFor(out.summary);
    EXPECT_EQ(out.summary.messages_delivered(), out.summary.messages_generated());
    EXPECT_LT(out.summary.relative_power_switch_links(), 1.0);  // it did gate
  }
}

// With every link on and no fault, nothing is lost: up routing never takes a
// packet to a root with no way down to its leaf.
TEST(EveryMessage, ATreeWithAMissingCableLosesNothing) {
  for (const char* model : kModels) {
    for (const char* routing : {"RANDOM", "ADAPTIVE", "D_MOD_K"}) {
      SCOPED_TRACE(std::string(model) + " " + routing);
      const RunOutput out = run(fmt::format(R"(
        fabric {{ topology_file {{ path: "missing_cable.net" format: IBSIM_NET }} }}
        workload {{ uniform {{ rate: 0.2 duration_cycles: 20000 }} }}
        emulator {{ switch_model: {} up_routing: {} }}
        gating {{ policy: ALL_ON }})",
                                            model, routing));
      EXPECT_GT(out.summary.messages_generated(), 0u);
      EXPECT_EQ(out.summary.messages_delivered(), out.summary.messages_generated());
    }
  }
}

// Parallel cables down to a leaf share its traffic (one cable alone carries
// at most 1 flit/cycle, half of what the two leaves' hosts send across), and
// when one fails the other carries on: nothing is lost.
TEST(EveryMessage, ParallelCablesShareTheLoadAndSurviveAFailure) {
  for (const char* model : kModels) {
    SCOPED_TRACE(model);
    const RunOutput shared = run(fmt::format(R"(
      fabric {{ topology_file {{ path: "parallel.net" format: IBSIM_NET }} }}
      workload {{ traffic_file: "cross.txt" }}
      emulator {{ switch_model: {} }}
      gating {{ policy: ALL_ON }})",
                                             model));
    EXPECT_EQ(shared.summary.messages_delivered(), shared.summary.messages_generated());
    EXPECT_GT(shared.summary.accepted_load(), 0.8) << shared.summary.offered_load();
    const RunOutput failed = run(fmt::format(R"(
      fabric {{ topology_file {{ path: "parallel.net" format: IBSIM_NET }} }}
      workload {{ uniform {{ rate: 0.1 duration_cycles: 30000 }} }}
      emulator {{ switch_model: {} }}
      gating {{ policy: ALL_ON }}
      faults {{ event {{ at_cycles: 5000 action: FAIL switch_name: "LA" port: 5 }} }})",
                                             model));
    expectEveryMessageAccountedFor(failed.summary);
    EXPECT_EQ(failed.summary.messages_delivered(), failed.summary.messages_generated());
  }
}

// A one-direction failure leaves in-flight packets where no on up link leads
// to their destination any more; routing queues them on an off up link, and
// that link's agent turns it on (it sees packets waiting there), instead of
// leaving them stranded while every host pair stays connected. The load
// swing and failure of a campaign scenario that stranded 18 (OQ) and 1 518
// (IQ) packets before.
TEST(EveryMessage, PacketsWaitingOnAnOffLinkAfterADirectionFailureAreDelivered) {
  for (const char* model : kModels) {
    SCOPED_TRACE(model);
    const RunOutput out = run(std::string(R"(
      fabric { kary_n_tree { k: 2 n: 5 } }
      gating { policy: DYNAMIC u_on: 0.15 }
      workload { rate_points {
        point { rate: 0.2443 } point { at_cycles: 6236 rate: 0.0501 }
        point { at_cycles: 17431 rate: 0.0444 } point { at_cycles: 26742 rate: 0.0444 }
        point { at_cycles: 26743 rate: 0.0293 } point { at_cycles: 34720 rate: 0.0293 }
        point { at_cycles: 34721 rate: 0.261 } point { at_cycles: 45877 rate: 0.227 }
        point { at_cycles: 48000 rate: 0.227 } } }
      seed: 16065523922850094435
      emulator { switch_model: )") +
                              model + R"( }
      faults { event { at_cycles: 32486 action: FAIL scope: DOWN_DIRECTION
                       switch_name: "S1_0_0_0_0" port: 3 } })");
    expectEveryMessageAccountedFor(out.summary);
    bool turnedOnForWaiting = false;
    for (const agent::DecisionRecord& d : out.decisions)
      turnedOnForWaiting = turnedOnForWaiting || d.source == "packets-waiting";
    // On the output-queued model this run queues packets on an off link.
    if (std::string(model) == "OUTPUT_QUEUED") {
      EXPECT_TRUE(turnedOnForWaiting);
    }
  }
}

TEST(EveryMessage, CableFailureUnderGatingOnASmallTree) {
  for (const char* model : kModels) {
    for (int at : {20000, 32486}) {
      SCOPED_TRACE(std::string(model) + " at " + std::to_string(at));
      const RunOutput out =
          run(std::string(R"(
        fabric { kary_n_tree { k: 2 n: 3 } }
        workload { uniform { rate: 0.1 duration_cycles: 48000 } }
        emulator { switch_model: )") +
              model + R"( }
        gating { policy: DYNAMIC }
        faults { event { at_cycles: )" +
              std::to_string(at) + " action: FAIL switch_name: \"S1_0_1\" port: 3 } }");
      expectEveryMessageAccountedFor(out.summary);
    }
  }
}

TEST(EveryMessage, OneDirectionFailsAndItsOtherDirectionStillConnects) {
  for (const char* model : kModels) {
    SCOPED_TRACE(model);
    const RunOutput out = run(std::string(R"(
      fabric { xgft { m: [4, 4, 4] w: [1, 2, 1] } }
      workload { uniform { rate: 0.02 duration_cycles: 40000 } }
      emulator { switch_model: )") +
                              model + R"( }
      gating { policy: DYNAMIC }
      faults {
        event { at_cycles: 4000 action: FAIL switch_name: "S2_2_2" port: 6 }
        event { at_cycles: 8000 action: FAIL scope: DOWN_DIRECTION switch_name: "S1_0_0" port: 5 }
      })");
    expectEveryMessageAccountedFor(out.summary);
  }
}

}  // namespace
}  // namespace ebb::replay
