#include "sim_backend/synthetic_traffic.h"

#include <gtest/gtest.h>

#include <set>

#include "agent/virtual_scheduler.h"
#include "fabric/kary_tree.h"
#include "sim_backend/fabric_emulator.h"

namespace ebb::sim {
using namespace ebb::workload;  // the traces and collectives replayed here
namespace {

TEST(RateProfile, AlonsoRampShape) {
  const RateProfile r = RateProfile::alonsoRamp(1000);
  EXPECT_DOUBLE_EQ(r.at(0), 0.01);
  EXPECT_DOUBLE_EQ(r.at(59'999'000), 0.01);
  EXPECT_NEAR(r.at(120'000'000), 0.305, 1e-12);
  EXPECT_DOUBLE_EQ(r.at(200'000'000), 0.60);
  EXPECT_NEAR(r.at(360'000'000), 0.305, 1e-12);
  EXPECT_EQ(r.end(), 420'000'000);
  EXPECT_DOUBLE_EQ(r.at(420'000'000), 0.0);
  EXPECT_TRUE(r.rising(100'000'000));
  EXPECT_FALSE(r.rising(350'000'000));
  EXPECT_TRUE(r.validate().isOk());
  EXPECT_FALSE(RateProfile({{0, -0.1}}).validate().isOk());
  EXPECT_FALSE(RateProfile({{10, 0.1}, {5, 0.1}}).validate().isOk());
}

// Uniform traffic: any host but the source, every other host reached.
TEST(SyntheticTraffic, UniformNeverSendsToTheSourceAndReachesEveryOtherHost) {
  const fabric::Topology topo = fabric::KAryNTree::make(2, 3).value().build();
  agent::VirtualScheduler sched;
  EmulatorConfig cfg;
  FabricEmulator emu(topo, cfg, sched);
  SyntheticSpec spec;
  spec.rate = RateProfile::constant(0.2, 200'000 * cfg.cyclePs);
  SyntheticTraffic traffic(emu, spec);
  std::vector<std::set<std::uint32_t>> reached(topo.numHosts());
  std::uint64_t delivered = 0;
  emu.onDelivery([&](const Delivery& d) {
    ++delivered;
    EXPECT_NE(d.src, d.dst);
    reached[d.src.value()].insert(d.dst.value());
  });
  traffic.start();
  sched.runAll();
  EXPECT_EQ(delivered, traffic.generated());
  EXPECT_GT(delivered, 1000u);
  for (std::size_t h = 0; h < reached.size(); ++h) {
    EXPECT_EQ(reached[h].size(), topo.numHosts() - 1) << "host " << h;
  }
}

}  // namespace
}  // namespace ebb::sim
