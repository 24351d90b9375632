// Every message a run generates is delivered or counted lost, and a host pair
// the surviving cables connect is never left without a path: on irregular
// trees read from a file (a tree switch that is the parent of a leaf hanging
// on another switch), on a small k-ary n-tree whose cable fails under gating,
// and with a failure of one direction only, on both switch models.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "configs/config_loader.h"
#include "fabric/minimal_tree.h"
#include "replay/fabric_from_config.h"
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

// Runs `text` (a config) with its agents; the net file, if any, beside it.
RunOutput run(const std::string& text) {
  const fs::path dir =
      fs::temp_directory_path() / ("ebb-every-message-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "irregular.net") << kIrregularNet;
  auto cfg = config::parseTextConfig(text, "test");
  EXPECT_TRUE(cfg) << cfg.status().toString();
  const fabric::Topology topo = topologyFromConfig(cfg->fabric(), dir.string()).value();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  const RunSpec spec = buildRunSpec(*cfg).value();
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
