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

// A flat profile (uniform traffic) is one curve: rising throughout, as a
// workload without a profile; one that only falls is falling throughout.
TEST(RateProfile, AFlatProfileIsOneCurveAndAFallingOneFalls) {
  const RateProfile flat({{0, 0.3}, {5'000'000, 0.3}});
  EXPECT_TRUE(flat.rising(0));
  EXPECT_TRUE(flat.rising(4'000'000));
  const RateProfile falling({{0, 0.5}, {5'000'000, 0.1}});
  EXPECT_FALSE(falling.rising(0));
  EXPECT_FALSE(falling.rising(4'000'000));
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

// A rate too small to draw (a probability whose log(1 - p) rounds to 0)
// sends nothing, Bernoulli or Poisson, rather than one message per cycle.
// include_self draws from every host, as BookSim2's uniform pattern: about 1
// message in N goes to its own source, through its leaf switch and back (one
// hop up the host link, one down), on both switch models.
TEST(SyntheticTraffic, IncludeSelfSendsOneInNToTheSourceThroughItsLeaf) {
  const fabric::Topology topo = fabric::KAryNTree::make(2, 3).value().build();
  for (SwitchModel model : {SwitchModel::kOutputQueued, SwitchModel::kInputQueued}) {
    SCOPED_TRACE(model == SwitchModel::kOutputQueued ? "output-queued" : "input-queued");
    agent::VirtualScheduler sched;
    EmulatorConfig cfg;
    cfg.switchModel = model;
    FabricEmulator emu(topo, cfg, sched);
    SyntheticSpec spec;
    spec.rate = RateProfile::constant(0.2, 200'000 * cfg.cyclePs);
    spec.includeSelf = true;
    SyntheticTraffic traffic(emu, spec);
    std::uint64_t delivered = 0, self = 0;
    std::set<std::uint32_t> selfSenders;
    emu.onDelivery([&](const Delivery& d) {
      ++delivered;
      if (d.src == d.dst) {
        ++self;
        selfSenders.insert(d.src.value());
      }
    });
    traffic.start();
    sched.runAll();
    EXPECT_EQ(delivered, traffic.generated());
    EXPECT_EQ(emu.packetsInNetwork(), 0u);
    // 1 in 8: about 2 500 of 20 000, binomial spread about 47.
    const double share = static_cast<double>(self) / static_cast<double>(delivered);
    EXPECT_NEAR(share, 1.0 / 8, 0.01) << self << " of " << delivered;
    EXPECT_EQ(selfSenders.size(), topo.numHosts());
  }
}

TEST(SyntheticTraffic, ATinyRateSendsNothing) {
  const fabric::Topology topo = fabric::KAryNTree::make(2, 1).value().build();
  for (Arrivals arrivals : {Arrivals::kBernoulli, Arrivals::kPoisson}) {
    agent::VirtualScheduler sched;
    EmulatorConfig cfg;
    FabricEmulator emu(topo, cfg, sched);
    SyntheticSpec spec;
    spec.arrivals = arrivals;
    spec.rate = RateProfile::constant(1e-17, 3'000 * cfg.cyclePs);
    SyntheticTraffic traffic(emu, spec);
    traffic.start();
    sched.runAll();
    EXPECT_EQ(traffic.generated(), 0u);
  }
}

// A rate counts the flits a link carries: whole flits per packet, so
// messages smaller than a flit (or not a multiple of it) are not undercounted.
TEST(SyntheticTraffic, RateCountsWholeFlitsOfEachPacket) {
  EmulatorConfig cfg;  // 4-byte flits, 64-byte packets
  EXPECT_EQ(cfg.messageFlits(0), 1);
  EXPECT_EQ(cfg.messageFlits(1), 1);
  EXPECT_EQ(cfg.messageFlits(64), 16);
  EXPECT_EQ(cfg.messageFlits(65), 17);
  EXPECT_EQ(cfg.messageFlits(130), 33);  // 64 + 64 + 2 bytes
  const fabric::Topology topo = fabric::KAryNTree::make(2, 2).value().build();
  agent::VirtualScheduler sched;
  FabricEmulator emu(topo, cfg, sched);
  SyntheticSpec spec;
  spec.messageBytes = 1;
  constexpr std::int64_t kCycles = 20'000;
  spec.rate = RateProfile::constant(0.2, kCycles * cfg.cyclePs);
  SyntheticTraffic traffic(emu, spec);
  traffic.start();
  sched.runAll();
  // 0.2 one-flit messages per cycle per host (about 16 000), not 0.8.
  const double expected = 0.2 * kCycles * static_cast<double>(topo.numHosts());
  EXPECT_NEAR(static_cast<double>(traffic.generated()), expected, 0.05 * expected);
  EXPECT_EQ(emu.stats().flitsSent, traffic.generated());
  EXPECT_EQ(emu.stats().flitsDelivered, traffic.generated());
}

// Hot spots: about `fraction` of the messages go to the hot hosts on top of
// their uniform share, never to the source itself; the others stay uniform.
TEST(SyntheticTraffic, HotspotSendsItsShareToTheHotHosts) {
  const fabric::Topology topo = fabric::KAryNTree::make(2, 3).value().build();  // 8 hosts
  agent::VirtualScheduler sched;
  EmulatorConfig cfg;
  FabricEmulator emu(topo, cfg, sched);
  SyntheticSpec spec;
  spec.rate = RateProfile::constant(0.1, 200'000 * cfg.cyclePs);
  spec.hotspot.fraction = 0.5;
  spec.hotspot.hostNames = {"H2", "H6"};
  SyntheticTraffic traffic(emu, spec);
  ASSERT_EQ(traffic.hotHosts(), (std::vector<std::uint32_t>{2, 6}));
  std::uint64_t delivered = 0, toHot = 0, fromH2 = 0, h2ToH6 = 0;
  std::set<std::uint32_t> coldReached;
  emu.onDelivery([&](const Delivery& d) {
    ++delivered;
    EXPECT_NE(d.src, d.dst);
    const std::uint32_t dst = d.dst.value();
    if (dst == 2 || dst == 6) ++toHot;
    if (dst != 2 && dst != 6) coldReached.insert(dst);
    if (d.src.value() == 2) {
      ++fromH2;
      h2ToH6 += dst == 6 ? 1 : 0;
    }
  });
  traffic.start();
  sched.runAll();
  ASSERT_GT(delivered, 2000u);
  // Expected share: 0.5 + 0.5 x 2/7 of the others' messages, about 0.64.
  const double share = static_cast<double>(toHot) / static_cast<double>(delivered);
  EXPECT_GT(share, 0.58);
  EXPECT_LT(share, 0.70);
  EXPECT_EQ(coldReached.size(), 6u);  // the rest is still uniform
  // The hot source H2 sends its hot share to the other hot host, H6.
  EXPECT_GT(static_cast<double>(h2ToH6) / static_cast<double>(fromH2), 0.45);
}

// Without hot spots the stream is exactly the one of before (no extra draw).
TEST(SyntheticTraffic, NoHotspotKeepsTheUniformStream) {
  const fabric::Topology topo = fabric::KAryNTree::make(2, 3).value().build();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs[2];
  for (int run = 0; run < 2; ++run) {
    agent::VirtualScheduler sched;
    EmulatorConfig cfg;
    FabricEmulator emu(topo, cfg, sched);
    SyntheticSpec spec;
    spec.rate = RateProfile::constant(0.1, 20'000 * cfg.cyclePs);
    // The second run asks for hot spots with share 0: off.
    if (run == 1) spec.hotspot.hostNames = {"H1"};
    SyntheticTraffic traffic(emu, spec);
    EXPECT_TRUE(traffic.hotHosts().empty());
    emu.onDelivery(
        [&](const Delivery& d) { pairs[run].emplace_back(d.src.value(), d.dst.value()); });
    traffic.start();
    sched.runAll();
  }
  EXPECT_FALSE(pairs[0].empty());
  EXPECT_EQ(pairs[0], pairs[1]);
}

}  // namespace
}  // namespace ebb::sim
