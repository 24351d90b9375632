// workload.rate_points and workload.hotspot: parsed, validated with errors
// naming the field, and run through the emulator.
#include <gtest/gtest.h>

#include "configs/config_loader.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "fabric/topology_builder.h"
#include "replay/run_spec.h"
#include "replay/runner.h"
#include "workload/hotspot.h"

namespace ebb::replay {
namespace {

Result<RunSpec> specOf(const std::string& text) {
  auto cfg = config::parseTextConfig(text, "test");
  EXPECT_TRUE(cfg) << cfg.status().toString();
  return buildRunSpec(*cfg);
}

std::string errorOf(const std::string& text) {
  Result<RunSpec> s = specOf(text);
  EXPECT_FALSE(s) << text;
  return s ? "" : s.status().message();
}

TEST(RatePoints, StepsAndRampsBecomeThePiecewiseProfile) {
  Result<RunSpec> s = specOf(R"(workload { rate_points {
      point { at_cycles: 0 rate: 0.01 } point { at_cycles: 1000 rate: 0.01 }
      point { at_cycles: 1000 rate: 0.4 } point { at_cycles: 3000 rate: 0.2 }
      point { at_cycles: 4000 rate: 0.2 } } })");
  ASSERT_TRUE(s) << s.status().toString();
  const workload::RateProfile& r = s->workload.rate;
  EXPECT_DOUBLE_EQ(r.at(500'000), 0.01);
  EXPECT_DOUBLE_EQ(r.at(999'000), 0.01);
  EXPECT_DOUBLE_EQ(r.at(1'000'000), 0.4);    // the step
  EXPECT_NEAR(r.at(2'000'000), 0.3, 1e-12);  // half-way down the ramp
  EXPECT_DOUBLE_EQ(r.at(3'500'000), 0.2);
  EXPECT_EQ(r.end(), 4'000'000);
  EXPECT_DOUBLE_EQ(r.max(), 0.4);
  EXPECT_NE(s->workloadName.find("rate points"), std::string::npos) << s->workloadName;
}

TEST(RatePoints, BadPointsAreRejectedNamingTheField) {
  EXPECT_NE(errorOf("workload { rate_points { point { at_cycles: 10 rate: 0.1 } } }")
                .find("workload.rate_points: needs at least 2 points (has 1)"),
            std::string::npos);
  EXPECT_NE(errorOf("workload { rate_points { point { at_cycles: 10 rate: 0.1 } "
                    "point { at_cycles: 5 rate: 0.1 } } }")
                .find("workload.rate_points.point[1].at_cycles: times must not decrease"),
            std::string::npos);
  EXPECT_NE(errorOf("workload { rate_points { point { at_cycles: 0 rate: 0.1 } "
                    "point { at_cycles: 50 rate: -0.2 } } }")
                .find("workload.rate_points.point[1].rate: must be >= 0"),
            std::string::npos);
  EXPECT_NE(errorOf("workload { rate_points { point { at_cycles: -1 rate: 0.1 } "
                    "point { at_cycles: 50 rate: 0.2 } } }")
                .find("workload.rate_points.point[0].at_cycles"),
            std::string::npos);
  EXPECT_NE(errorOf("workload { rate_points { point { at_cycles: 0 rate: 0.1 } "
                    "point { at_cycles: 0 rate: 0.2 } } }")
                .find("the last point must come after 0 cycles"),
            std::string::npos);
}

TEST(Hotspot, ValidatedNamingTheField) {
  const std::string uniform = "workload { uniform { rate: 0.1 duration_cycles: 1000 } ";
  EXPECT_NE(errorOf(uniform + "hotspot { hosts: 2 } }").find("workload.hotspot.fraction"),
            std::string::npos);
  EXPECT_NE(errorOf(uniform + "hotspot { hosts: 2 fraction: 1.5 } }")
                .find("workload.hotspot.fraction: must be in (0, 1]"),
            std::string::npos);
  EXPECT_NE(errorOf(uniform + "hotspot { hosts: 2 host: \"H0\" fraction: 0.5 } }").find("not both"),
            std::string::npos);
  EXPECT_NE(errorOf(uniform + "hotspot { fraction: 0.5 } }").find("workload.hotspot: needs"),
            std::string::npos);
  EXPECT_NE(errorOf("workload { traffic_file: \"x.txt\" hotspot { hosts: 1 fraction: 0.5 } }")
                .find("workload.hotspot: applies to synthetic traffic only"),
            std::string::npos);
  Result<RunSpec> ok = specOf(uniform + "hotspot { host: \"H3\" host: \"H5\" fraction: 0.5 } }");
  ASSERT_TRUE(ok) << ok.status().toString();
  EXPECT_DOUBLE_EQ(ok->workload.hotspot.fraction, 0.5);
  EXPECT_EQ(ok->workload.hotspot.hostNames, (std::vector<std::string>{"H3", "H5"}));
}

TEST(Hotspot, ResolvedAgainstTheFabric) {
  const fabric::Topology topo = fabric::KAryNTree::make(2, 3).value().build();  // 8 hosts
  workload::Hotspot spot;
  spot.fraction = 0.5;
  spot.hostNames = {topo.hosts()[5].name, topo.hosts()[2].name};
  Result<std::vector<std::uint32_t>> named = workload::resolveHotspot(spot, topo, 1);
  ASSERT_TRUE(named) << named.status().toString();
  EXPECT_EQ(*named, (std::vector<std::uint32_t>{2, 5}));
  spot.hostNames = {topo.hosts()[1].name, "nosuchhost"};
  Result<std::vector<std::uint32_t>> unknown = workload::resolveHotspot(spot, topo, 1);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.status().message().find("workload.hotspot.host[1]: no host named 'nosuchhost'"),
            std::string::npos);
  spot.hostNames = {topo.hosts()[1].name, topo.hosts()[1].name};
  EXPECT_FALSE(workload::resolveHotspot(spot, topo, 1));
  // A count: drawn with the seed, the same for the same seed.
  spot.hostNames.clear();
  spot.count = 3;
  Result<std::vector<std::uint32_t>> a = workload::resolveHotspot(spot, topo, 7);
  Result<std::vector<std::uint32_t>> b = workload::resolveHotspot(spot, topo, 7);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->size(), 3u);
  EXPECT_TRUE(std::is_sorted(a->begin(), a->end()));
  EXPECT_LT(a->back(), 8u);
  bool differs = false;
  for (std::uint64_t seed = 8; seed < 20 && !differs; ++seed)
    differs = *workload::resolveHotspot(spot, topo, seed) != *a;
  EXPECT_TRUE(differs) << "the seed must choose the hot hosts";
  spot.count = 8;  // every host hot: no cold host left
  Result<std::vector<std::uint32_t>> all = workload::resolveHotspot(spot, topo, 1);
  ASSERT_FALSE(all);
  EXPECT_NE(all.status().message().find("workload.hotspot.hosts: must be in 1..7"),
            std::string::npos);
}

// A run with an unknown hot host fails before anything runs, naming the host.
TEST(Hotspot, UnknownHostFailsTheRun) {
  const fabric::Topology topo = fabric::KAryNTree::make(2, 3).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  Result<RunSpec> s = specOf(
      "workload { uniform { rate: 0.1 duration_cycles: 4000 } hotspot { host: \"H99\" "
      "fraction: 0.5 } } report { skip_baseline: true }");
  ASSERT_TRUE(s) << s.status().toString();
  Result<RunOutput> run = runEmulation(*s, topo, mt, true, {});
  ASSERT_FALSE(run);
  EXPECT_NE(run.status().message().find("workload.hotspot.host[0]: no host named 'H99'"),
            std::string::npos)
      << run.status().toString();
}

// A fabric of one host (read from a file) has no destination for synthetic
// traffic: the run fails naming the rule, never picks a host that is not there.
TEST(SyntheticWorkload, OneHostFabricIsRefused) {
  fabric::TopologyBuilder b;
  const fabric::SwitchId leaf = b.addSwitch("leaf", 0x100, 4);
  ASSERT_TRUE(b.connectHost(b.addHost("h0", 0x200), 0, {leaf, 0}).isOk());
  const fabric::Topology topo = b.build().value();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  Result<RunSpec> s = specOf("workload { uniform { rate: 0.1 duration_cycles: 4000 } }");
  ASSERT_TRUE(s) << s.status().toString();
  Result<RunOutput> run = runEmulation(*s, topo, mt, true, {});
  ASSERT_FALSE(run);
  EXPECT_NE(run.status().message().find("needs at least 2 hosts; the fabric has 1"),
            std::string::npos)
      << run.status().toString();
}

}  // namespace
}  // namespace ebb::replay
