// Gating and low-power idle on extended generalised fat trees (docs/fabric.md,
// "Generalised fat trees"): tapered and mixed-radix XGFTs from the config run
// the same agents, keep every message, switch links off and stay within the
// oracle's rules; bad XGFTs in a config name the field and the rule.
#include <gtest/gtest.h>

#include "configs/config_loader.h"
#include "fabric/minimal_tree.h"
#include "replay/fabric_from_config.h"
#include "replay/run_spec.h"
#include "replay/runner.h"

namespace ebb::replay {
namespace {

Result<fabric::Topology> xgftOf(const std::string& fabric) {
  auto cfg = config::parseTextConfig("fabric { " + fabric + " }", "test");
  if (!cfg) return cfg.status();
  return topologyFromConfig(cfg->fabric(), "");
}

TEST(XgftReplay, GatingAndLowPowerIdleRunUnchangedOnTaperedAndMixedTrees) {
  for (const char* shape : {"xgft { m: [8, 4] w: [1, 2] }", "xgft { m: [6, 3, 2] w: [1, 2, 3] }",
                            "xgft { m: [4, 4, 4] w: [1, 2, 2] ports: 12 }"}) {
    SCOPED_TRACE(shape);
    const fabric::Topology topo = xgftOf(shape).value();
    const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
    auto cfg = config::parseTextConfig(
        std::string("fabric { ") + shape +
            " } workload { alonso_ramp { time_scale: 0.05 } } "
            "gating { policy: PROPORTIONAL u_on: 0.15 } lpi { mode: FAST_WAKE hold_ts: 1 }",
        "test");
    ASSERT_TRUE(cfg) << cfg.status().toString();
    const RunSpec spec = buildRunSpec(*cfg).value();
    const RunOutput out = runEmulation(spec, topo, mt, true, {}).value();
    const results::RunSummary& s = out.summary;
    EXPECT_EQ(s.messages_delivered(), s.messages_generated());
    EXPECT_GT(s.messages_generated(), 0u);
    EXPECT_LT(s.relative_power_switch_links(), 1.0);  // links went off at low load
    EXPECT_LT(s.lpi_relative_power(), 1.0);           // and idled
    ASSERT_TRUE(s.has_oracle());
    EXPECT_TRUE(s.oracle().unavailable().empty()) << s.oracle().unavailable();
    EXPECT_GE(s.oracle().switch_link_power(), s.oracle().free_directions_power());
    EXPECT_GT(s.link_transitions(), 0u);
  }
}

TEST(XgftReplay, BadTreesInAConfigNameTheFieldAndTheRule) {
  const std::pair<const char*, const char*> cases[] = {
      {"xgft { m: [4, 4] w: [2, 4] }", "fabric.xgft: w_1 = 2"},
      {"xgft { m: [4, 4] w: [1] }", "m has 2 entries and w 1"},
      {"xgft { m: [4, 0] w: [1, 4] }", "m_2 = 0"},
      {"xgft { m: [4, 4] w: [1, 4] ports: 7 }", "ports = 7"},
      {"xgft { m: [4, 4] w: [1, 4] max_switches: 0 }", "fabric.xgft.max_switches: must be > 0"},
      {"xgft { m: [4, 4] w: [1, 4] ports: 0 }", "fabric.xgft.ports: must be > 0"},
      {"xgft { }", "needs at least one level"},
  };
  for (const auto& [text, what] : cases) {
    const Result<fabric::Topology> t = xgftOf(text);
    ASSERT_FALSE(t) << text;
    EXPECT_NE(t.status().message().find(what), std::string::npos)
        << text << ": " << t.status().message();
  }
}

}  // namespace
}  // namespace ebb::replay
