// emulator.switch_model (docs/emulator.md, "Switch models") through the run
// spec: the input-queued router's fields and their rules, the fidelity
// presets, and gating and low-power idle keeping their meaning on it.
#include <gtest/gtest.h>

#include <string>

#include "configs/config_loader.h"
#include "configs/overrides.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "replay/run_spec.h"
#include "replay/runner.h"

namespace ebb::replay {
namespace {

Result<RunSpec> modelSpec(const std::string& text) {
  Result<config::Config> cfg = config::parseTextConfig(text, "t");
  if (!cfg) return cfg.status();
  return buildRunSpec(*cfg);
}

TEST(SwitchModel, InputQueuedFieldsAndTheirRules) {
  const char* const refused[][2] = {
      {"emulator { vc_alloc_cycles: 2 }",
       "emulator.vc_alloc_cycles: belongs to emulator.switch_model INPUT_QUEUED"},
      {"emulator { speedup: 2 }", "emulator.speedup: belongs to"},
      {"emulator { allocator: ROUND_ROBIN }", "emulator.allocator: belongs to"},
      {"emulator { hold_switch_for_packet: true }", "emulator.hold_switch_for_packet: belongs to"},
      {"emulator { vc_buffer_bytes: 16 }", "virtual cut-through needs"},
      {"emulator { switch_model: INPUT_QUEUED speedup: 0 }", "emulator.speedup: must be in 1..16"},
      {"emulator { switch_model: INPUT_QUEUED sw_alloc_cycles: -1 }", "emulator.sw_alloc_cycles"},
      {"emulator { switch_model: INPUT_QUEUED routing_delay_cycles: 1001 }",
       "emulator.routing_delay_cycles: must be in 0..1000 (is 1001)"},
      {"emulator { switch_model: INPUT_QUEUED vc_buffer_bytes: 2 }", "cannot hold one flit"},
      {"emulator { switch_model: INPUT_QUEUED vc_buffer_bytes: 18 }",
       "emulator.vc_buffer_bytes: 18 is not a whole number of 4-byte flits"},
      // Sizes the model would allocate before it runs (once an abort on bad_alloc).
      {"emulator { switch_model: INPUT_QUEUED vc_buffer_bytes: 9223372036854775804 }",
       "emulator.vc_buffer_bytes: 9223372036854775804 is 2305843009213693951 flits"},
      {"emulator { switch_model: INPUT_QUEUED vc_buffer_bytes: 16388 }", "4096 flits per VC"},
      {"emulator { switch_model: INPUT_QUEUED link_latency_cycles: 1000000000 }",
       "emulator.link_latency_cycles: 1000000000 is more than the input-queued model's 100000"},
      {"emulator { switch_model: INPUT_QUEUED link_latency_cycles: 0 }",
       "emulator.link_latency_cycles: must be >= 1 with the input-queued model (is 0)"},
  };
  for (const auto& [text, says] : refused) {
    Result<RunSpec> s = modelSpec(text);
    ASSERT_FALSE(s) << text << " was accepted";
    EXPECT_NE(s.status().message().find(says), std::string::npos)
        << text << " -> " << s.status().message();
  }
  Result<RunSpec> wormhole = modelSpec(
      "emulator { switch_model: INPUT_QUEUED vc_buffer_bytes: 16 sw_alloc_cycles: 2 speedup: 2 "
      "allocator: ROUND_ROBIN hold_switch_for_packet: true }");
  ASSERT_TRUE(wormhole) << wormhole.status().toString();
  EXPECT_EQ(wormhole->emulator.vcBufferBytes, 16);
  EXPECT_EQ(wormhole->emulator.swAllocCycles, 2);
  EXPECT_EQ(wormhole->emulator.speedup, 2);
  EXPECT_EQ(wormhole->emulator.allocator, sim::Allocator::kRoundRobin);
  EXPECT_TRUE(wormhole->emulator.holdSwitchForPacket);
  // The default buffer is one packet in whole flits: a 1000-byte packet of
  // 64-byte flits takes 16 flits, so the router cuts through (not wormhole).
  Result<RunSpec> odd = modelSpec(
      "emulator { switch_model: INPUT_QUEUED flit_bytes: 64 packet_bytes: 1000 } "
      "workload { uniform { rate: 0.1 duration_cycles: 100 } message_bytes: 1000 }");
  ASSERT_TRUE(odd) << odd.status().toString();
  EXPECT_EQ(odd->emulator.vcBufferBytes, 1024);
}

// configs/fidelity: BookSim2's iq router, with the workload keys the
// comparison sets from the command line.
TEST(FidelityPresets, RunTheInputQueuedRouterWithRateAndDurationFromTheCommandLine) {
  for (const auto& [file, bufferBytes] :
       {std::pair{"booksim_iq_vc16.textproto", 64}, std::pair{"booksim_iq_vc4.textproto", 16}}) {
    Result<config::Config> cfg =
        config::loadConfigFile(std::string(EBB_SOURCE_DIR) + "/configs/fidelity/" + file);
    ASSERT_TRUE(cfg) << cfg.status().toString();
    for (const char* ov : {"workload.uniform.rate=0.25", "workload.uniform.duration_cycles=4000",
                           "fabric.kary_n_tree.n=2"}) {
      ASSERT_TRUE(config::applyOverride(*cfg, ov).isOk()) << ov;
    }
    Result<RunSpec> s = buildRunSpec(*cfg);
    ASSERT_TRUE(s) << s.status().toString();
    EXPECT_EQ(s->emulator.switchModel, sim::SwitchModel::kInputQueued) << file;
    EXPECT_EQ(s->emulator.vcBufferBytes, bufferBytes) << file;
    EXPECT_EQ(s->emulator.upRouting, sim::UpRouting::kRandom) << file;
    const fabric::Topology topo = fabric::KAryNTree::make(4, 2).value().build();
    const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
    Result<RunOutput> out = runEmulation(*s, topo, mt, false, {});
    ASSERT_TRUE(out) << out.status().toString();
    EXPECT_NEAR(out->summary.offered_load(), 0.25, 0.03) << file;
    EXPECT_EQ(out->summary.messages_delivered(), out->summary.messages_generated()) << file;
  }
}

// Gating and low-power idle on the input-queued router: the agents still
// save power without losing a message, and LPI still sleeps idle links.
TEST(SwitchModel, GatingAndLowPowerIdleKeepTheirMeaningOnTheInputQueuedRouter) {
  const fabric::Topology topo = fabric::KAryNTree::make(4, 3).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  for (const char* wormhole : {"vc_buffer_bytes: 64", "vc_buffer_bytes: 16"}) {
    Result<RunSpec> s = modelSpec(std::string("emulator { switch_model: INPUT_QUEUED ") + wormhole +
                                  " } workload { alonso_ramp { time_scale: 0.1 } }");
    ASSERT_TRUE(s) << s.status().toString();
    Result<RunOutput> gated = runEmulation(*s, topo, mt, true, {});
    ASSERT_TRUE(gated) << gated.status().toString();
    EXPECT_EQ(gated->summary.messages_delivered(), gated->summary.messages_generated()) << wormhole;
    EXPECT_GT(gated->summary.link_transitions(), 0u) << wormhole;
    EXPECT_LT(gated->summary.relative_power_switch_links(), 0.9) << wormhole;
    Result<RunSpec> lpi =
        modelSpec(std::string("emulator { switch_model: INPUT_QUEUED ") + wormhole +
                  " } gating { policy: ALL_ON } lpi { mode: FAST_WAKE } "
                  "workload { uniform { rate: 0.05 duration_cycles: 20000 } }");
    ASSERT_TRUE(lpi) << lpi.status().toString();
    Result<RunOutput> idle = runEmulation(*lpi, topo, mt, true, {});  // LPI is off in a baseline
    ASSERT_TRUE(idle) << idle.status().toString();
    EXPECT_EQ(idle->summary.messages_delivered(), idle->summary.messages_generated()) << wormhole;
    EXPECT_LT(idle->summary.lpi_relative_power(), 0.95) << wormhole;
    EXPECT_GT(idle->summary.lpi_relative_power(), 0.6) << wormhole << ": fast-wake is 60% at best";
  }
}

}  // namespace
}  // namespace ebb::replay
