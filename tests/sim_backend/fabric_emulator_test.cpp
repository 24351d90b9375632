#include "sim_backend/fabric_emulator.h"

#include <gtest/gtest.h>

#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "sim_backend/sim_backend.h"
#include "sim_backend/synthetic_traffic.h"
#include "tests/sim_backend/tree_links.h"

namespace ebb::sim {
using namespace ebb::workload;  // the traces and collectives replayed here
namespace {

using fabric::Direction;
using fabric::HostId;
using fabric::LinkId;

struct Rig {
  explicit Rig(int k, int n, EmulatorConfig cfg = {})
      : topo(fabric::KAryNTree::make(k, n).value().build()), emu(topo, cfg, sched) {
    emu.onDelivery([this](const Delivery& d) { deliveries.push_back(d); });
  }
  fabric::Topology topo;
  agent::VirtualScheduler sched;
  FabricEmulator emu;
  std::vector<Delivery> deliveries;
};

// Credit wait, the emulator's PortXmitWait: an incast backs packets up until
// the senders' up links wait for credit; SimBackend reports it per port, the
// wait in progress included, and the agents' congestion trigger reads it.
TEST(FabricEmulator, CreditWaitGrowsUnderBackPressureAndReachesTheAgents) {
  EmulatorConfig wormhole;
  wormhole.switchModel = SwitchModel::kInputQueued;
  wormhole.vcBufferBytes = 16;
  for (const EmulatorConfig& cfg : {EmulatorConfig{}, wormhole}) {
    SCOPED_TRACE(cfg.switchModel == SwitchModel::kInputQueued ? "input-queued" : "output-queued");
    Rig r(2, 2, cfg);
    for (std::uint32_t i = 0; i < 200; ++i) {
      r.emu.sendMessage(HostId(0), HostId(2), 512, i);
      r.emu.sendMessage(HostId(1), HostId(2), 512, 1000 + i);
    }
    r.sched.runUntil(200'000);
    const fabric::SwitchId leaf = r.topo.leafOf(HostId(0));
    SimBackend backend(r.emu);
    std::vector<agent::PortCounters> ports;
    std::vector<TimePs> now;
    backend.requestCounters(leaf, [&](Result<agent::CounterSample> s) {
      ports = s.value().ports;
      for (const agent::PortCounters& c : ports) {
        const fabric::Port& p = r.topo.sw(leaf).ports[c.index];
        const Direction tx = p.role == fabric::PortRole::kUp ? Direction::kUp : Direction::kDown;
        now.push_back(r.emu.creditWaitNow(p.link, tx));
      }
    });
    r.sched.runUntil(r.sched.now() + 1);
    ASSERT_EQ(ports.size(), now.size());
    TimePs upWait = 0;
    for (std::size_t i = 0; i < ports.size(); ++i) {
      EXPECT_EQ(ports[i].xmitWait, now[i]) << "port " << ports[i].index;
      if (r.topo.sw(leaf).ports[ports[i].index].role == fabric::PortRole::kUp) {
        upWait += ports[i].xmitWait;
      }
    }
    EXPECT_GT(upWait, 0) << "the incast never made the leaf's up links wait";
    r.sched.runAll();
    EXPECT_EQ(r.deliveries.size(), 400u);
    for (const fabric::Port& p : r.topo.sw(leaf).ports) {
      if (p.role != fabric::PortRole::kUp) continue;
      // No wait in progress once everything arrived: the counter holds it all.
      EXPECT_EQ(r.emu.creditWaitNow(p.link, Direction::kUp),
                r.emu.counters(p.link, Direction::kUp).creditWait);
    }
  }
}

// A stranded run says where its packets wait: on the input-queued model the
// input VC, the direction its packet is bound for and why it does not move;
// packets only in flight are said to be so, not "nothing waits".
TEST(FabricEmulator, TheWaitingDescriptionNamesDirectionsOnBothModelsAndFlightsToo) {
  for (SwitchModel model : {SwitchModel::kOutputQueued, SwitchModel::kInputQueued}) {
    SCOPED_TRACE(model == SwitchModel::kOutputQueued ? "output-queued" : "input-queued");
    EmulatorConfig cfg;
    cfg.switchModel = model;
    Rig r(2, 2, cfg);
    // Every way down to host 2's leaf off: the packet climbs and waits above it.
    const fabric::Switch& leaf1 = r.topo.sw(r.topo.leafOf(HostId(2)));
    for (std::uint16_t up : leaf1.upPorts)
      r.emu.setDirection(leaf1.ports[up].link, Direction::kDown, false);
    r.sched.runUntil(10'000'000);
    r.emu.sendMessage(HostId(0), HostId(2), 64, 1);
    r.sched.runUntil(20'000'000);
    ASSERT_EQ(r.emu.packetsInNetwork(), 1u);
    const std::string where = r.emu.describeWaiting();
    EXPECT_NE(where.find("(down)"), std::string::npos) << where;
    EXPECT_NE(where.find("direction off"), std::string::npos) << where;
    if (model == SwitchModel::kInputQueued) {
      EXPECT_NE(where.find("bound for"), std::string::npos) << where;
    }
  }
  EmulatorConfig slow;
  slow.linkLatencyPs = 1'000'000;  // a packet spends a microsecond on each link
  Rig r(2, 2, slow);
  r.emu.sendMessage(HostId(0), HostId(2), 64, 1);
  r.sched.runUntil(500'000);
  EXPECT_EQ(r.emu.describeWaiting(),
            "1 packets in flight on links or in a route stage, none queued");
}

TEST(FabricEmulator, ZeroLoadLatencyIsTheAnalyticValue) {
  EmulatorConfig cfg;
  Rig r(4, 3, cfg);
  const auto tree = fabric::KAryNTree::make(4, 3).value();
  const TimePs perHop = cfg.serializationPs(1) + cfg.linkLatencyPs + cfg.routingDelayPs;
  for (auto [a, b] :
       {std::pair{0u, 1u}, std::pair{0u, 5u}, std::pair{0u, 63u}, std::pair{17u, 40u}}) {
    r.deliveries.clear();
    const TimePs t0 = r.sched.now();
    r.emu.sendMessage(HostId(a), HostId(b), cfg.packetBytes);
    r.sched.runAll();
    ASSERT_EQ(r.deliveries.size(), 1u);
    const int h = linksBetween(tree, HostId(a), HostId(b));
    const TimePs expected =
        (h - 1) * perHop + cfg.serializationPs(cfg.packetBytes) + cfg.linkLatencyPs;
    EXPECT_EQ(r.deliveries[0].delivered - t0, expected) << a << "->" << b << " hops " << h;
  }
}

// A delivery callback may send at once (a ping-pong reply): the record it was
// given must stay intact although the message slot is reused by the reply.
TEST(FabricEmulator, DeliveryRecordSurvivesASendInsideTheCallback) {
  agent::VirtualScheduler sched;
  const fabric::Topology topo = fabric::KAryNTree::make(2, 2).value().build();
  FabricEmulator emu(topo, EmulatorConfig{}, sched);
  std::vector<Delivery> seen;
  emu.onDelivery([&](const Delivery& d) {
    const TimePs created = d.created;
    const std::int64_t bytes = d.bytes;
    if (seen.size() < 3) emu.sendMessage(d.dst, d.src, d.bytes + 100, d.tag + 1);
    // Read after the send: still this message, not the reply.
    EXPECT_EQ(d.created, created);
    EXPECT_EQ(d.bytes, bytes);
    seen.push_back(d);
  });
  emu.sendMessage(HostId(0), HostId(3), 64, 7);
  sched.runAll();
  ASSERT_EQ(seen.size(), 4u);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].tag, 7u + i);
    EXPECT_EQ(seen[i].bytes, static_cast<std::int64_t>(64 + 100 * i));
    EXPECT_LT(seen[i].created, seen[i].delivered);
    if (i > 0) {
      EXPECT_EQ(seen[i].created, seen[i - 1].delivered);
    }
  }
}

TEST(FabricEmulator, MultiPacketMessagePipelines) {
  EmulatorConfig cfg;
  Rig r(2, 2, cfg);
  r.emu.sendMessage(HostId(0), HostId(1), 10 * cfg.packetBytes);
  r.sched.runAll();
  ASSERT_EQ(r.deliveries.size(), 1u);
  // Same leaf: 2 links. The last packet leaves the host after 10 serializations.
  const TimePs perHop = cfg.serializationPs(1) + cfg.linkLatencyPs + cfg.routingDelayPs;
  EXPECT_EQ(r.deliveries[0].delivered,
            perHop + 10 * cfg.serializationPs(cfg.packetBytes) + cfg.linkLatencyPs);
  EXPECT_EQ(r.emu.stats().packetsDelivered, 10u);
}

// The link counters count bytes on the wire: a packet's flits, whole. A
// 1-byte message keeps each link it crosses as busy as a full flit does, and
// the agents must read it so (a probe saw links gated off under load that
// small messages carried). Both switch models.
TEST(FabricEmulator, LinkCountersCountWholeFlits) {
  EmulatorConfig iq;
  iq.switchModel = SwitchModel::kInputQueued;
  for (const EmulatorConfig& cfg : {EmulatorConfig{}, iq}) {
    SCOPED_TRACE(cfg.switchModel == SwitchModel::kInputQueued ? "input-queued" : "output-queued");
    Rig r(2, 2, cfg);
    r.emu.sendMessage(HostId(0), HostId(3), 1);
    r.emu.sendMessage(HostId(0), HostId(3), cfg.flitBytes + 1);
    r.sched.runAll();
    ASSERT_EQ(r.deliveries.size(), 2u);
    const LinkId hostLink = r.topo.host(HostId(0)).link;
    EXPECT_EQ(r.emu.counters(hostLink, Direction::kUp).txBytes,
              static_cast<std::uint64_t>(3 * cfg.flitBytes));
    EXPECT_EQ(r.emu.counters(hostLink, Direction::kUp).txPackets, 2u);
  }
}

TEST(FabricEmulator, ConservesPacketsUnderHeavyLoadWithFiniteCredits) {
  EmulatorConfig cfg;
  Rig r(4, 3, cfg);
  SyntheticSpec spec;
  spec.rate = RateProfile::constant(0.9, 20'000 * cfg.cyclePs);  // beyond saturation
  spec.messageBytes = cfg.packetBytes;
  SyntheticTraffic traffic(r.emu, spec);
  traffic.start();
  r.sched.runAll();
  EXPECT_GT(traffic.generated(), 10'000u);
  EXPECT_EQ(r.emu.stats().messagesDelivered, traffic.generated());
  EXPECT_EQ(r.emu.stats().bytesDelivered, traffic.bytesGenerated());
  EXPECT_EQ(r.emu.packetsInNetwork(), 0u);
  // Credits never went negative and are all back: a new packet still flows.
  r.deliveries.clear();
  r.emu.sendMessage(HostId(3), HostId(60), 64);
  r.sched.runAll();
  EXPECT_EQ(r.deliveries.size(), 1u);
  // Somebody waited for credits under this load.
  TimePs wait = 0;
  for (LinkId::rep_type l = 0; l < r.topo.numLinks(); ++l) {
    wait += r.emu.counters(LinkId(l), Direction::kUp).creditWait;
  }
  EXPECT_GT(wait, 0);
}

TEST(FabricEmulator, AcceptedEqualsOfferedBelowSaturation) {
  EmulatorConfig cfg;
  Rig r(4, 3, cfg);
  SyntheticSpec spec;
  const TimePs end = 40'000 * cfg.cyclePs;
  spec.rate = RateProfile::constant(0.2, end);
  spec.messageBytes = cfg.packetBytes;
  SyntheticTraffic traffic(r.emu, spec);
  traffic.start();
  r.sched.runUntil(end);
  const double offered = static_cast<double>(traffic.bytesGenerated());
  const double accepted = static_cast<double>(r.emu.stats().bytesDelivered);
  EXPECT_NEAR(offered / (64.0 * 40'000 * 4), 0.2, 0.01);  // the generator hits its rate
  EXPECT_GT(accepted / offered, 0.995);                   // only the last few cycles are in flight
}

TEST(FabricEmulator, DeterministicForASeedAndDifferentAcrossSeeds) {
  auto run = [](std::uint64_t seed) {
    EmulatorConfig cfg;
    cfg.seed = seed;
    Rig r(4, 2, cfg);
    SyntheticSpec spec;
    spec.rate = RateProfile::constant(0.5, 5'000 * cfg.cyclePs);
    spec.seed = seed;
    SyntheticTraffic traffic(r.emu, spec);
    traffic.start();
    r.sched.runAll();
    TimePs sum = 0;
    for (const auto& d : r.deliveries)
      sum += d.delivered - d.created;
    return std::make_tuple(r.sched.executed(), r.emu.stats().packetHops, sum);
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
}

TEST(FabricEmulator, GatedDirectionCarriesNothingAndTurnsOnAfterTOn) {
  EmulatorConfig cfg;
  Rig r(2, 2, cfg);
  const auto& leaf = r.topo.sw(r.topo.leafOf(HostId(0)));
  const LinkId up0 = leaf.ports[leaf.upPorts[0]].link;
  const LinkId up1 = leaf.ports[leaf.upPorts[1]].link;
  EXPECT_EQ(r.emu.setDirection(up1, Direction::kUp, false), cfg.turnOffPs);
  EXPECT_FALSE(r.emu.usable(up1, Direction::kUp));
  EXPECT_EQ(r.emu.directionState(up1, Direction::kUp), policies::LinkPowerState::kTurningOff);
  for (int i = 0; i < 50; ++i)
    r.emu.sendMessage(HostId(0), HostId(3), 64);
  r.sched.runAll();
  EXPECT_EQ(r.deliveries.size(), 50u);
  EXPECT_EQ(r.emu.counters(up1, Direction::kUp).txPackets, 0u);
  EXPECT_EQ(r.emu.counters(up0, Direction::kUp).txPackets, 50u);
  EXPECT_EQ(r.emu.directionState(up1, Direction::kUp), policies::LinkPowerState::kOff);
  const TimePs t = r.sched.now();
  EXPECT_EQ(r.emu.setDirection(up1, Direction::kUp, true), t + cfg.turnOnPs);
  r.sched.runUntil(t + cfg.turnOnPs - 1);
  EXPECT_FALSE(r.emu.usable(up1, Direction::kUp));
  r.sched.runUntil(t + cfg.turnOnPs);
  EXPECT_TRUE(r.emu.usable(up1, Direction::kUp));
  // Power accounting: on, turning off for T_off, off, turning on for T_on.
  const auto times = r.emu.directionTimes(up1, Direction::kUp);
  EXPECT_EQ(times.turningOff, cfg.turnOffPs);
  EXPECT_EQ(times.turningOn, cfg.turnOnPs);
  EXPECT_EQ(times.off, t - cfg.turnOffPs);
  EXPECT_EQ(times.total(), r.sched.now());
}

// Lossless gating: an up direction switched off while it holds packets that
// have nowhere else to go sends them first, then turns off; here it was still
// turning on (the AMG + deep-sleep hang: packets stranded for good on a
// direction that never came on).
TEST(FabricEmulator, DirectionSwitchedOffWithQueuedPacketsDrainsThenTurnsOff) {
  EmulatorConfig cfg;
  Rig r(2, 2, cfg);
  const auto& leaf = r.topo.sw(r.topo.leafOf(HostId(0)));
  const LinkId up0 = leaf.ports[leaf.upPorts[0]].link;
  const LinkId up1 = leaf.ports[leaf.upPorts[1]].link;
  r.emu.initDirection(up0, Direction::kUp, false);
  r.emu.initDirection(up1, Direction::kUp, false);
  r.emu.setDirection(up0, Direction::kUp, true);
  constexpr std::size_t kMessages = 3;
  for (std::size_t i = 0; i < kMessages; ++i)
    r.emu.sendMessage(HostId(0), HostId(3), 64);
  r.sched.runUntil(cfg.turnOnPs / 2);
  // Every packet has reached the leaf and waits for up0 to come on.
  ASSERT_EQ(r.emu.queuedAtHosts(), 0u);
  ASSERT_EQ(r.emu.packetsInNetwork(), kMessages);
  r.emu.setDirection(up0, Direction::kUp, false);
  EXPECT_FALSE(r.emu.usable(up0, Direction::kUp));
  EXPECT_EQ(r.emu.directionState(up0, Direction::kUp), policies::LinkPowerState::kTurningOff);
  r.sched.runAll();
  EXPECT_EQ(r.deliveries.size(), kMessages);
  EXPECT_EQ(r.emu.packetsInNetwork(), 0u);
  EXPECT_EQ(r.emu.counters(up0, Direction::kUp).txPackets, kMessages);
  EXPECT_EQ(r.emu.directionState(up0, Direction::kUp), policies::LinkPowerState::kOff);
  EXPECT_EQ(r.emu.counters(up1, Direction::kUp).txPackets, 0u);
}

TEST(FabricEmulator, OnlyMinimalTreeLinksStillDeliverEverything) {
  EmulatorConfig cfg;
  Rig r(4, 3, cfg);
  const auto mt = fabric::MinimalTree::build(r.topo).value();
  for (LinkId::rep_type l = 0; l < r.topo.numLinks(); ++l) {
    if (!mt.containsLink(LinkId(l))) {
      r.emu.setDirection(LinkId(l), Direction::kUp, false);
      r.emu.setDirection(LinkId(l), Direction::kDown, false);
    }
  }
  for (std::uint32_t a = 0; a < 64; ++a) {
    r.emu.sendMessage(HostId(a),
                      HostId((a * 37 + 11) % 64 == a ? (a + 1) % 64 : (a * 37 + 11) % 64), 64);
  }
  r.sched.runAll();
  EXPECT_EQ(r.deliveries.size(), 64u);
  for (LinkId::rep_type l = 0; l < r.topo.numLinks(); ++l) {
    if (!mt.containsLink(LinkId(l))) {
      EXPECT_EQ(r.emu.counters(LinkId(l), Direction::kUp).txPackets, 0u);
      EXPECT_EQ(r.emu.counters(LinkId(l), Direction::kDown).txPackets, 0u);
    }
  }
}

TEST(FabricEmulator, LowPowerIdleWakeUpDelays) {
  for (auto mode : {policies::LpiMode::kDeepSleep, policies::LpiMode::kFastWake}) {
    EmulatorConfig cfg;
    cfg.lpi = policies::LpiParams::table6(mode, 1);
    Rig r(2, 1, cfg);  // one switch, two hosts: two links
    // After a long idle both links sleep: the packet pays the wake-up twice.
    r.sched.runUntil(10'000'000'000);
    const TimePs t0 = r.sched.now();
    r.emu.sendMessage(HostId(0), HostId(1), 64);
    r.sched.runAll();
    ASSERT_EQ(r.deliveries.size(), 1u);
    const TimePs wake =
        mode == policies::LpiMode::kDeepSleep ? cfg.lpi.wakeDeepSleep : cfg.lpi.wakeFastWake;
    const TimePs base = cfg.serializationPs(1) + cfg.linkLatencyPs + cfg.routingDelayPs +
                        cfg.serializationPs(64) + cfg.linkLatencyPs;
    EXPECT_EQ(r.deliveries[0].delivered - t0, base + 2 * wake) << policies::toString(mode);
  }
}

}  // namespace
}  // namespace ebb::sim

namespace ebb::sim {
namespace {

// A burst behind a sleeping link pays the wake-up once, then goes back to back.
TEST(FabricEmulator, BurstPaysTheWakeUpOnce) {
  EmulatorConfig cfg;
  cfg.lpi = policies::LpiParams::table6(policies::LpiMode::kDeepSleep, 1);
  Rig r(2, 1, cfg);
  r.sched.runUntil(10'000'000'000);
  const TimePs t0 = r.sched.now();
  for (int i = 0; i < 100; ++i)
    r.emu.sendMessage(HostId(0), HostId(1), 64);
  r.sched.runAll();
  ASSERT_EQ(r.deliveries.size(), 100u);
  const TimePs last = r.deliveries.back().delivered - t0;
  // Host link: one wake, 100 packets back to back; switch link: one wake.
  const TimePs ideal = 2 * cfg.lpi.wakeDeepSleep + 100 * cfg.serializationPs(64) +
                       cfg.serializationPs(1) + 2 * cfg.linkLatencyPs + cfg.routingDelayPs;
  EXPECT_LE(last, ideal + 2 * cfg.lpi.wakeDeepSleep) << "last " << last << " ideal " << ideal;
}

// With a zero hold, packets queued together still go out back to back on
// both switch models: the input-queued router's next packet needs a few
// pipeline cycles to claim the output, and its link does not fall asleep in
// between (once it was a wake-up per packet, and throughput collapsed).
TEST(FabricEmulator, ZeroHoldBurstPaysOneWakeUpPerLinkOnBothModels) {
  for (SwitchModel model : {SwitchModel::kOutputQueued, SwitchModel::kInputQueued}) {
    SCOPED_TRACE(model == SwitchModel::kInputQueued ? "input-queued" : "output-queued");
    EmulatorConfig cfg;
    cfg.switchModel = model;
    cfg.lpi = policies::LpiParams::table6(policies::LpiMode::kDeepSleep, 0);
    Rig r(2, 1, cfg);
    r.sched.runUntil(10'000'000'000);
    for (int i = 0; i < 20; ++i)
      r.emu.sendMessage(HostId(0), HostId(1), 64);
    r.sched.runAll();
    ASSERT_EQ(r.deliveries.size(), 20u);
    const LinkId in = r.topo.host(HostId(0)).link, out = r.topo.host(HostId(1)).link;
    EXPECT_EQ(r.emu.lpiCounters(in, Direction::kUp).wakeups, 1u);
    EXPECT_EQ(r.emu.lpiCounters(out, Direction::kDown).wakeups, 1u);
    EXPECT_EQ(r.emu.lpiCounters(in, Direction::kUp).packets, 20u);
  }
}

// The low-power-idle counters mean the same on both models: one packet per
// packet sent on a direction, also where the input-queued router interleaves
// packets of several VCs on one busy link (all to all, every host at once).
TEST(FabricEmulator, LpiCountsEveryPacketSentOnBothModels) {
  for (SwitchModel model : {SwitchModel::kOutputQueued, SwitchModel::kInputQueued}) {
    SCOPED_TRACE(model == SwitchModel::kInputQueued ? "input-queued" : "output-queued");
    EmulatorConfig cfg;
    cfg.switchModel = model;
    cfg.lpi = policies::LpiParams::table6(policies::LpiMode::kFastWake, 0);
    Rig r(2, 2, cfg);
    r.sched.runUntil(1'000'000'000);
    const auto hosts = static_cast<std::uint32_t>(r.topo.numHosts());
    for (int round = 0; round < 5; ++round) {
      for (std::uint32_t a = 0; a < hosts; ++a) {
        for (std::uint32_t b = 0; b < hosts; ++b) {
          if (a != b) r.emu.sendMessage(HostId(a), HostId(b), 256);
        }
      }
    }
    r.sched.runAll();
    std::uint64_t packets = 0;
    for (LinkId::rep_type l = 0; l < r.topo.numLinks(); ++l) {
      for (Direction d : {Direction::kUp, Direction::kDown})
        packets += r.emu.lpiCounters(LinkId(l), d).packets;
    }
    EXPECT_GT(r.emu.stats().packetHops, 0u);
    EXPECT_EQ(packets, r.emu.stats().packetHops);
  }
}

}  // namespace
}  // namespace ebb::sim

namespace ebb::sim {
namespace {

// Light periodic traffic on one host link: kLightPackets packets of 64 B,
// 20 us apart, the first once the link has idled `settle` plus one gap.
constexpr int kLightPackets = 50;
struct LightRun {
  policies::DirectionTimes times;  // of host 0's link, upward
  TimePs end = 0;
  std::size_t delivered = 0;
};
LightRun lightTraffic(const EmulatorConfig& cfg, TimePs settle) {
  Rig r(2, 1, cfg);
  const TimePs period = 20'000'000;
  const TimePs t0 = settle + period;
  for (int i = 0; i < kLightPackets; ++i) {
    r.sched.at(t0 + i * period, agent::Phase::kNetwork,
               [&r] { r.emu.sendMessage(HostId(0), HostId(1), 64); });
  }
  LightRun out;
  out.end = t0 + kLightPackets * period;
  r.sched.runUntil(out.end);
  out.delivered = r.deliveries.size();
  out.times = r.emu.directionTimes(r.topo.host(HostId(0)).link, Direction::kUp);
  return out;
}

// Light periodic traffic on one link: the measured time per LPI state, and so
// the power, equal the analytic timeline of Table II (deep-sleep).
TEST(FabricEmulator, LightTrafficSavingsMatchTheAnalyticTimeline) {
  EmulatorConfig cfg;
  cfg.lpi = policies::LpiParams::table6(policies::LpiMode::kDeepSleep, 1);
  // Start after the link has gone to sleep, so every packet sees the same cycle.
  const LightRun run = lightTraffic(cfg, cfg.lpi.hold + cfg.lpi.sleepSignal);
  ASSERT_EQ(run.delivered, static_cast<std::size_t>(kLightPackets));
  const auto& t = run.times;
  const TimePs end = run.end;
  const int packets = kLightPackets;
  const auto at = [&](policies::LpiState s) { return t.lpi[static_cast<std::size_t>(s)]; };
  const TimePs ser = cfg.serializationPs(64);
  EXPECT_EQ(at(policies::LpiState::kWaking), packets * cfg.lpi.wakeDeepSleep);
  EXPECT_EQ(at(policies::LpiState::kActive), packets * ser);
  // Each gap: hold, sleep signalling, then quiet (T_q = 1.8 ms: no refresh).
  EXPECT_EQ(at(policies::LpiState::kRefresh), 0);
  EXPECT_EQ(at(policies::LpiState::kSleepSignal), (packets + 1) * cfg.lpi.sleepSignal);
  const policies::PowerModel pm;
  const double measured = pm.relativePower(std::vector{t});
  const double quiet = static_cast<double>(end - packets * (cfg.lpi.wakeDeepSleep + ser) -
                                           (packets + 1) * (cfg.lpi.hold + cfg.lpi.sleepSignal));
  const double analytic =
      (static_cast<double>(end) - quiet + 0.1 * quiet) / static_cast<double>(end);
  EXPECT_NEAR(measured, analytic, 1e-9);
  EXPECT_LT(measured, 0.5);  // mostly asleep
}

// The same timeline in fast-wake (Table III): each gap is the hold at full
// power, then fast-wake at P_FW until the next packet, which pays T_w,FW.
TEST(FabricEmulator, LightTrafficFastWakeSavingsMatchTheAnalyticTimeline) {
  EmulatorConfig cfg;
  cfg.lpi = policies::LpiParams::table6(policies::LpiMode::kFastWake, 1);
  const LightRun run = lightTraffic(cfg, cfg.lpi.hold);
  ASSERT_EQ(run.delivered, static_cast<std::size_t>(kLightPackets));
  const auto& t = run.times;
  const TimePs end = run.end;
  const int packets = kLightPackets;
  const auto at = [&](policies::LpiState s) { return t.lpi[static_cast<std::size_t>(s)]; };
  const TimePs ser = cfg.serializationPs(64);
  EXPECT_EQ(at(policies::LpiState::kWaking), packets * cfg.lpi.wakeFastWake);
  EXPECT_EQ(at(policies::LpiState::kActive), packets * ser);
  EXPECT_EQ(at(policies::LpiState::kHold), (packets + 1) * cfg.lpi.hold);
  EXPECT_EQ(at(policies::LpiState::kSleepSignal), 0);
  EXPECT_EQ(at(policies::LpiState::kQuiet), 0);
  EXPECT_EQ(at(policies::LpiState::kRefresh), 0);
  const TimePs fw = end - packets * (cfg.lpi.wakeFastWake + ser) - (packets + 1) * cfg.lpi.hold;
  EXPECT_EQ(at(policies::LpiState::kFastWake), fw);
  const policies::PowerModel pm(cfg.lpi);
  const double measured = pm.relativePower(std::vector{t});
  const double analytic =
      (static_cast<double>(end - fw) + cfg.lpi.powerFastWake * static_cast<double>(fw)) /
      static_cast<double>(end);
  EXPECT_NEAR(measured, analytic, 1e-9);
  EXPECT_GT(measured, cfg.lpi.powerFastWake);
  EXPECT_LT(measured, 0.7);
}

}  // namespace
}  // namespace ebb::sim

namespace ebb::sim {
namespace {

// D-mod-K on a 4-ary 2-tree: four hosts of leaf 0 sending to destinations
// 5, 6, 7, 4 (one per residue mod 4) climb four different up links, one
// message each, on both switch models; the same destination always climbs
// the same way.
TEST(FabricEmulator, DestinationRoutingSpreadsDestinationsOverUpPorts) {
  for (SwitchModel model : {SwitchModel::kOutputQueued, SwitchModel::kInputQueued}) {
    EmulatorConfig cfg;
    cfg.upRouting = UpRouting::kDestination;
    cfg.switchModel = model;
    Rig r(4, 2, cfg);
    for (std::uint32_t h = 0; h < 4; ++h)
      r.emu.sendMessage(HostId(h), HostId(4 + (h + 1) % 4), cfg.packetBytes * 2);
    r.sched.runAll();
    ASSERT_EQ(r.deliveries.size(), 4u);
    const fabric::SwitchId leaf = r.topo.leafOf(HostId(0));
    for (std::uint16_t port : r.topo.sw(leaf).upPorts) {
      const LinkId l = r.topo.sw(leaf).ports[port].link;
      EXPECT_EQ(r.emu.counters(l, Direction::kUp).txPackets, 2u) << "port " << port;
    }
  }
}

}  // namespace
}  // namespace ebb::sim
namespace ebb::sim {
namespace {

// A burst wakes each transmitter it crosses once: the packets behind the first
// wait with it, uncharged, and the counts are per transmitter wake-up. With
// adaptive up routing the second packet may take the other up link, which
// then wakes too (a real wake-up); with d-mod-k both share one path: 4.
// Input-queued with a zero hold: the pipeline's bubble keeps every hop of a
// shared path awake between the packets of a burst (one wake-up per hop).
TEST(FabricEmulator, ABurstWakesEachTransmitterOnceOnBothModels) {
  for (const SwitchModel model : {SwitchModel::kOutputQueued, SwitchModel::kInputQueued}) {
    for (const UpRouting routing : {UpRouting::kDestination, UpRouting::kAdaptive}) {
      for (const int hold : {0, 1}) {
        SCOPED_TRACE(model == SwitchModel::kInputQueued ? "input-queued" : "output-queued");
        SCOPED_TRACE(routing == UpRouting::kDestination ? "d-mod-k" : "adaptive");
        SCOPED_TRACE(hold);
        EmulatorConfig cfg;
        cfg.switchModel = model;
        cfg.upRouting = routing;
        cfg.vcs = 1;
        cfg.vcBufferBytes = 4096;
        cfg.lpi = policies::LpiParams::table6(policies::LpiMode::kFastWake, hold);
        Rig r(2, 3, cfg);
        r.sched.at(5'000'000, agent::Phase::kNetwork, [&r] {
          for (int i = 0; i < 20; ++i)
            r.emu.sendMessage(HostId(0), HostId(7), 64);
        });
        r.sched.runAll();
        ASSERT_EQ(r.deliveries.size(), 20u);
        std::uint64_t wakeups = 0, packets = 0;
        for (LinkId::rep_type l = 0; l < r.topo.numLinks(); ++l) {
          for (Direction d : {Direction::kUp, Direction::kDown}) {
            const policies::LpiCounters c = r.emu.lpiCounters(LinkId(l), d);
            wakeups += c.wakeups;
            packets += c.packets;
            EXPECT_EQ(c.wakeDelay, static_cast<TimePs>(c.wakeups) * cfg.lpi.wakeFastWake);
          }
        }
        EXPECT_EQ(packets, 20u * 6);
        EXPECT_GE(wakeups, 6u);
        if (routing == UpRouting::kDestination) {
          EXPECT_EQ(wakeups, 6u);  // one per hop
        }
      }
    }
  }
}

}  // namespace
}  // namespace ebb::sim
