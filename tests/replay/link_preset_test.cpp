// emulator.link_preset (docs/emulator.md, "Link presets"): each preset's
// numbers agree with its link rate, the config enum and the table name the
// same presets, a preset sets its fields together and refuses them beside it,
// and a run on a preset carries the load it is offered.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "configs/config_loader.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "replay/run_spec.h"
#include "replay/runner.h"
#include "sim_backend/link_preset.h"

namespace ebb::replay {
namespace {

RunSpec presetSpec(const std::string& text) {
  Result<config::Config> cfg = config::parseTextConfig(text, "t");
  EXPECT_TRUE(cfg) << text;
  Result<RunSpec> s = buildRunSpec(*cfg);
  EXPECT_TRUE(s) << text << ": " << s.status().toString();
  return s ? *s : RunSpec{};
}

TEST(LinkPreset, EachPresetsFlitTimeIsItsDataRate) {
  for (const sim::LinkPreset& p : sim::linkPresets()) {
    // flit bits per cycle in Gb/s: bits / ps x 1000.
    const double gbps =
        static_cast<double>(p.flitBytes * 8) * 1000.0 / static_cast<double>(p.cyclePs);
    const double expected = p.lanes > 0 ? p.lanes * p.laneGbps : 32.0;
    EXPECT_DOUBLE_EQ(gbps, expected) << p.name;
    EXPECT_GT(p.packetBytes, 0) << p.name;
    sim::EmulatorConfig cfg;
    sim::applyLinkPreset(p, cfg);
    EXPECT_TRUE(cfg.validate().isOk()) << p.name << ": " << cfg.validate().toString();
  }
}

TEST(LinkPreset, TheConfigEnumAndTheTableNameTheSamePresets) {
  const auto* e = config::EmulatorSpec::LinkPreset_descriptor();
  std::set<std::string> inEnum, inTable;
  for (int i = 0; i < e->value_count(); ++i) {
    if (e->value(i)->number() != 0) inEnum.insert(e->value(i)->name());
  }
  for (const sim::LinkPreset& p : sim::linkPresets())
    inTable.insert(p.name);
  EXPECT_EQ(inEnum, inTable);
}

TEST(LinkPreset, APresetSetsRateMtuBufferAndWakeUpTogether) {
  const RunSpec hdr = presetSpec("emulator { link_preset: IB_HDR_4K }");
  EXPECT_EQ(hdr.emulator.cyclePs, 2560);
  EXPECT_EQ(hdr.emulator.flitBytes, 64);
  EXPECT_EQ(hdr.emulator.packetBytes, 4096);
  EXPECT_EQ(hdr.emulator.vcBufferBytes, 4096);
  EXPECT_EQ(hdr.workload.messageBytes, 4096) << "a message is one MTU unless it says otherwise";
  EXPECT_EQ(hdr.emulator.lpi.wakeDeepSleep, 5'500'000);
  EXPECT_EQ(hdr.emulator.lpi.wakeFastWake, 340'000);
  // Cycle counts keep their meaning in cycles of the preset's flit time.
  EXPECT_EQ(hdr.emulator.turnOnPs, 1000 * 2560);
  // Fields the preset leaves free stay free.
  const RunSpec deep =
      presetSpec("emulator { link_preset: IB_EDR_2K vc_buffer_bytes: 8192 vcs: 2 }");
  EXPECT_EQ(deep.emulator.vcBufferBytes, 8192);
  EXPECT_EQ(deep.emulator.vcs, 2);
  // Without a preset: the paper's units, as before presets existed.
  const RunSpec paper = presetSpec("");
  EXPECT_EQ(paper.emulator.cyclePs, 1000);
  EXPECT_EQ(paper.emulator.flitBytes, 4);
  EXPECT_EQ(paper.emulator.packetBytes, 64);
  const RunSpec named = presetSpec("emulator { link_preset: PAPER }");
  EXPECT_EQ(named.emulator.cyclePs, paper.emulator.cyclePs);
  EXPECT_EQ(named.emulator.packetBytes, paper.emulator.packetBytes);
  EXPECT_EQ(named.emulator.lpi.wakeDeepSleep, paper.emulator.lpi.wakeDeepSleep);
}

TEST(LinkPreset, FieldsThePresetSetsAreRefusedBesideIt) {
  const char* const cases[][2] = {
      {"emulator { link_preset: IB_NDR_4K cycle_ps: 1000 }", "emulator.cycle_ps"},
      {"emulator { link_preset: IB_NDR_4K flit_bytes: 4 }", "emulator.flit_bytes"},
      {"emulator { link_preset: ETH_100GBASE_R packet_bytes: 9000 }", "emulator.packet_bytes"},
      {"emulator { link_preset: PAPER } lpi { link_speed: \"25GBASE-R\" }", "lpi.link_speed"},
  };
  for (const auto& [text, field] : cases) {
    Result<config::Config> cfg = config::parseTextConfig(text, "t");
    ASSERT_TRUE(cfg) << text;
    Result<RunSpec> s = buildRunSpec(*cfg);
    ASSERT_FALSE(s) << text << " was accepted";
    EXPECT_EQ(s.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find(std::string(field) + ": set by emulator.link_preset"),
              std::string::npos)
        << s.status().message();
  }
}

// A number no preset has: the loader refuses it; a config built in code
// hears the number and the names, not an empty name.
TEST(LinkPreset, AnUnknownNumberIsNamedWithTheChoices) {
  config::Config cfg;
  cfg.mutable_emulator()->set_link_preset(static_cast<config::EmulatorSpec::LinkPreset>(99));
  Result<RunSpec> s = buildRunSpec(cfg);
  ASSERT_FALSE(s);
  EXPECT_NE(s.status().message().find("emulator.link_preset: unknown value 99 (expected one of "
                                      "PAPER"),
            std::string::npos)
      << s.status().message();
  EXPECT_FALSE(config::parseTextConfig("emulator { link_preset: 99 }", "t"));
}

TEST(LinkPreset, ARunOnEachPresetCarriesWhatItIsOffered) {
  const fabric::Topology topo = fabric::KAryNTree::make(2, 3).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  for (const sim::LinkPreset& p : sim::linkPresets()) {
    const RunSpec s = presetSpec(std::string("emulator { link_preset: ") + p.name +
                                 " } gating { policy: ALL_ON } workload { uniform { rate: 0.2 "
                                 "duration_cycles: 40000 } }");
    Result<RunOutput> out = runEmulation(s, topo, mt, false, {});
    ASSERT_TRUE(out) << p.name << ": " << out.status().toString();
    EXPECT_GT(out->summary.messages_generated(), 0u) << p.name;
    EXPECT_EQ(out->summary.messages_delivered(), out->summary.messages_generated()) << p.name;
    EXPECT_NEAR(out->summary.accepted_load(), 0.2, 0.04) << p.name;
    // Zero-load floor: at least one packet's serialization, in cycles.
    EXPECT_GE(out->summary.mean_latency_cycles(), static_cast<double>(p.packetBytes / p.flitBytes))
        << p.name;
  }
}

}  // namespace
}  // namespace ebb::replay
