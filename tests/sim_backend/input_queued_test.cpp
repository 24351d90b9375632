// The input-queued VC router model (docs/emulator.md, "Switch models"): the
// zero-load pipeline formula to the picosecond, wormhole packets holding a
// buffer on every hop they span, credits conserved over long random runs,
// and determinism per seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "fabric/kary_tree.h"
#include "sim_backend/fabric_emulator.h"
#include "sim_backend/synthetic_traffic.h"
#include "tests/sim_backend/tree_links.h"

namespace ebb::sim {
namespace {

using fabric::Direction;
using fabric::HostId;
using fabric::LinkId;

EmulatorConfig iqConfig() {
  EmulatorConfig cfg;
  cfg.switchModel = SwitchModel::kInputQueued;
  cfg.upRouting = UpRouting::kRandom;
  return cfg;
}

struct IqRig {
  IqRig(int k, int n, const EmulatorConfig& cfg)
      : tree(fabric::KAryNTree::make(k, n).value()), topo(tree.build()), emu(topo, cfg, sched) {
    emu.onDelivery([this](const Delivery& d) { deliveries.push_back(d); });
  }
  fabric::KAryNTree tree;
  fabric::Topology topo;
  agent::VirtualScheduler sched;
  FabricEmulator emu;
  std::vector<Delivery> deliveries;
};

// Head: I + L to the first switch, then R + VA + SA + X + L per switch; the
// tail F - 1 cycles behind it (BookSim2's defaults: 5H + 17 for 16 flits).
TEST(InputQueued, ZeroLoadLatencyIsThePipelineFormula) {
  EmulatorConfig slow = iqConfig();
  slow.routingDelayPs = 2000;
  slow.vcAllocCycles = 0;
  slow.swAllocCycles = 2;
  slow.crossbarCycles = 1;
  slow.linkLatencyPs = 3000;
  slow.injectionCycles = 0;
  for (const EmulatorConfig& cfg : {iqConfig(), slow}) {
    IqRig r(4, 3, cfg);
    const std::int64_t l = cfg.linkLatencyPs / cfg.cyclePs;
    const std::int64_t perSwitch = cfg.routingDelayPs / cfg.cyclePs + cfg.vcAllocCycles +
                                   cfg.swAllocCycles + cfg.crossbarCycles + l;
    for (auto [a, b] : {std::pair{0u, 1u}, std::pair{0u, 5u}, std::pair{0u, 63u},
                        std::pair{17u, 40u}, std::pair{9u, 8u}}) {
      for (std::int64_t bytes : {cfg.packetBytes, std::int64_t{4}, std::int64_t{20}}) {
        r.deliveries.clear();
        const TimePs t0 = r.sched.now();
        r.emu.sendMessage(HostId(a), HostId(b), bytes);
        r.sched.runAll();
        ASSERT_EQ(r.deliveries.size(), 1u);
        const int h = linksBetween(r.tree, HostId(a), HostId(b));
        const std::int64_t cycles =
            cfg.injectionCycles + l + (h - 1) * perSwitch + cfg.flitsOf(bytes) - 1;
        EXPECT_EQ(r.deliveries[0].delivered - t0, cycles * cfg.cyclePs)
            << a << "->" << b << " links " << h << " bytes " << bytes;
      }
    }
  }
}

// A message sent between cycle boundaries starts at the next one.
TEST(InputQueued, AMessageBetweenCyclesStartsAtTheNextCycle) {
  const EmulatorConfig cfg = iqConfig();
  IqRig r(2, 2, cfg);
  r.sched.at(1500, agent::Phase::kControl,
             [&] { r.emu.sendMessage(HostId(0), HostId(1), cfg.packetBytes); });
  r.sched.runAll();
  ASSERT_EQ(r.deliveries.size(), 1u);
  // Starts at 2000 ps; same leaf: I + L + 5 + 15 cycles.
  EXPECT_EQ(r.deliveries[0].delivered, 2000 + (1 + 1 + 5 + 15) * 1000);
}

// Buffers of 4 flits, 16-flit packets: a packet whose last link is off
// stretches back over every hop it spans, each input buffer on its path full,
// and moves on when the link comes back. With whole-packet buffers the same
// packet sits in the last switch alone.
// Closed loop: a send made from a delivery callback, inside a cycle's tick,
// joins that cycle; it must not start a second tick (which would run the
// switches twice per cycle and make every later message faster).
TEST(InputQueued, ASendFromADeliveryKeepsOneTickPerCycle) {
  IqRig r(4, 3, iqConfig());
  std::vector<TimePs> latency;
  r.emu.onDelivery([&](const Delivery& d) {
    latency.push_back(d.delivered - d.created);
    if (latency.size() < 50) r.emu.sendMessage(d.dst, d.src, 64, d.tag + 1);
  });
  r.emu.sendMessage(HostId(0), HostId(63), 64, 0);
  r.sched.runAll();
  ASSERT_EQ(latency.size(), 50u);
  for (std::size_t i = 1; i < latency.size(); ++i)
    EXPECT_EQ(latency[i], latency[0]) << "message " << i;
  // Ticks: about one per cycle the ping-pong took, not a growing multiple.
  const auto cycles = static_cast<std::uint64_t>(r.sched.now() / r.emu.config().cyclePs);
  EXPECT_LE(r.emu.stats().events, cycles + 3 * latency.size());
}

TEST(InputQueued, AWormholePacketBlockedAtItsHeadHoldsEveryHopItSpans) {
  for (const std::int64_t buffer : {16, 64}) {
    EmulatorConfig cfg = iqConfig();
    cfg.vcBufferBytes = buffer;  // 4 flits (wormhole) or a whole packet
    IqRig r(2, 3, cfg);
    // Host 0 to host 7: host link, leaf, middle, root, middle, leaf, host link.
    const LinkId last = r.topo.host(HostId(7)).link;
    r.emu.initDirection(last, Direction::kDown, false);
    r.emu.sendMessage(HostId(0), HostId(7), cfg.packetBytes);
    r.sched.runUntil(1'000'000);
    EXPECT_TRUE(r.deliveries.empty());
    // Only this packet is in the network: every buffered flit is its own.
    std::uint32_t held = 0, full = 0, hops = 0;
    for (std::uint32_t l = 0; l < r.topo.numLinks(); ++l) {
      for (Direction d : {Direction::kUp, Direction::kDown}) {
        const std::uint32_t flits = r.emu.bufferedFlits(LinkId(l), d);
        held += flits;
        full += flits == static_cast<std::uint32_t>(buffer / cfg.flitBytes) ? 1u : 0u;
        hops += flits > 0 ? 1u : 0u;
      }
    }
    if (buffer == 16) {
      EXPECT_EQ(full, 4u) << "four 4-flit buffers hold the 16 flits";
      EXPECT_EQ(hops, 4u);
      EXPECT_EQ(held, 16u);
    } else {
      EXPECT_EQ(hops, 1u) << "cut-through: the whole packet in the last switch";
      EXPECT_EQ(held, 16u);
    }
    EXPECT_TRUE(r.emu.checkCredits().isOk()) << r.emu.checkCredits().toString();
    r.emu.setDirection(last, Direction::kDown, true);
    r.sched.runAll();
    EXPECT_EQ(r.deliveries.size(), 1u);
    EXPECT_TRUE(r.emu.checkCredits().isOk()) << r.emu.checkCredits().toString();
  }
}

// A host puts its next packet on the first free VC that has room, as
// BookSim2's injection does: a packet blocked in the first switch, filling its
// VC, does not hold up the host's later packets to other destinations.
TEST(InputQueued, AHostSkipsAVcWhoseBufferIsFull) {
  const EmulatorConfig cfg = iqConfig();  // 3 VCs of one packet each
  IqRig r(4, 1, cfg);                     // one switch, hosts 0-3
  const LinkId blocked = r.topo.host(HostId(1)).link;
  r.emu.initDirection(blocked, Direction::kDown, false);
  r.emu.sendMessage(HostId(0), HostId(1), cfg.packetBytes, 1);  // VC 0, stays in the switch
  for (std::uint32_t tag = 2; tag <= 4; ++tag)                  // VCs 1, 2, then 1 again
    r.emu.sendMessage(HostId(0), HostId(3), cfg.packetBytes, tag);
  r.sched.runUntil(1'000'000);
  ASSERT_EQ(r.deliveries.size(), 3u) << "the packets to host 3 pass the blocked one";
  for (const Delivery& d : r.deliveries)
    EXPECT_NE(d.tag, 1u);
  EXPECT_TRUE(r.emu.checkCredits().isOk()) << r.emu.checkCredits().toString();
  r.emu.setDirection(blocked, Direction::kDown, true);
  r.sched.runAll();
  ASSERT_EQ(r.deliveries.size(), 4u);
  EXPECT_EQ(r.deliveries.back().tag, 1u);
  EXPECT_TRUE(r.emu.checkCredits().isOk()) << r.emu.checkCredits().toString();
}

// VC allocation: two heads asking for one output in the same cycle. iSLIP
// (BookSim2's): every free output VC grants the same head (all pointers at
// the start), which accepts one, so the second head gets its VC a cycle
// later; round robin gives each head a VC at once.
TEST(InputQueued, IslipVcAllocationMatchesOneHeadPerOutputInTheFirstCycle) {
  for (Allocator allocator : {Allocator::kIslip, Allocator::kRoundRobin}) {
    SCOPED_TRACE(allocator == Allocator::kIslip ? "iSLIP" : "round robin");
    EmulatorConfig cfg = iqConfig();
    cfg.allocator = allocator;
    IqRig r(4, 1, cfg);  // one switch, hosts 0-3
    const LinkId to3 = r.topo.host(HostId(3)).link;
    r.emu.sendMessage(HostId(0), HostId(3), cfg.packetBytes);
    r.emu.sendMessage(HostId(1), HostId(3), cfg.packetBytes);
    std::vector<std::uint32_t> held;  // per cycle, until both hold one
    while (held.empty() || held.back() < 2) {
      ASSERT_LT(held.size(), 50u);
      r.sched.runUntil(r.sched.now() + cfg.cyclePs);
      const std::uint32_t now = r.emu.heldOutputVcs(to3, Direction::kDown);
      if (now > 0 || !held.empty()) held.push_back(now);
    }
    if (allocator == Allocator::kIslip) {
      EXPECT_EQ(held, (std::vector<std::uint32_t>{1, 2}));
    } else {
      EXPECT_EQ(held, (std::vector<std::uint32_t>{2}));
    }
    r.sched.runAll();
    EXPECT_EQ(r.deliveries.size(), 2u);
  }
}

// The two switch allocators (iSLIP: an input asks every output one of its VCs
// may go to; input first: it offers one VC) schedule a saturated switch
// differently, and both deliver everything with credits conserved.
TEST(InputQueued, BothSwitchAllocatorsDeliverEverythingTheirOwnWay) {
  for (int k : {4, 8, 16}) {
    const auto makespan = [k](Allocator allocator) {
      EmulatorConfig cfg = iqConfig();
      cfg.allocator = allocator;
      IqRig r(k, 1, cfg);  // one switch
      std::mt19937_64 rng(7);
      const auto hosts = static_cast<std::uint32_t>(k);
      for (std::uint32_t i = 0; i < 200; ++i) {
        for (std::uint32_t h = 0; h < hosts; ++h) {
          const auto d = static_cast<std::uint32_t>((h + 1 + rng() % (hosts - 1)) % hosts);
          r.emu.sendMessage(HostId(h), HostId(d), cfg.packetBytes);
        }
      }
      r.sched.runAll();
      EXPECT_EQ(r.deliveries.size(), 200u * hosts);
      EXPECT_TRUE(r.emu.checkCredits().isOk()) << r.emu.checkCredits().toString();
      TimePs last = 0;
      for (const Delivery& d : r.deliveries)
        last = std::max(last, d.delivered);
      // At most one flit per cycle into each host.
      EXPECT_GE(last, 200 * cfg.flitsOf(cfg.packetBytes) * cfg.cyclePs);
      return last;
    };
    EXPECT_NE(makespan(Allocator::kIslip), makespan(Allocator::kRoundRobin)) << "k " << k;
  }
}

// Checked every 500 cycles of a long random run with wormhole buffers, speedup
// and packet-granular crossbars: no credit is created or lost.
TEST(InputQueued, CreditsAreConservedOverALongRandomRun) {
  for (int variant = 0; variant < 3; ++variant) {
    EmulatorConfig cfg = iqConfig();
    cfg.vcBufferBytes = variant == 0 ? 16 : 64;
    cfg.speedup = variant == 1 ? 2 : 1;
    cfg.holdSwitchForPacket = variant == 2;
    cfg.allocator = variant == 2 ? Allocator::kRoundRobin : Allocator::kIslip;
    cfg.seed = 7 + static_cast<std::uint64_t>(variant);
    IqRig r(4, 3, cfg);
    workload::SyntheticSpec spec;
    spec.rate = workload::RateProfile::constant(0.45, 20'000 * cfg.cyclePs);
    spec.messageBytes = 100;  // 2 packets, the second short
    spec.seed = 3;
    SyntheticTraffic traffic(r.emu, spec);
    traffic.start();
    int checks = 0;
    for (TimePs t = 500'000; t <= 20'000'000; t += 500'000) {
      r.sched.at(t, agent::Phase::kAgent, [&] {
        const Status s = r.emu.checkCredits();
        EXPECT_TRUE(s.isOk()) << "variant " << variant << ": " << s.toString();
        ++checks;
      });
    }
    r.sched.runAll();
    EXPECT_EQ(checks, 40);
    EXPECT_GT(traffic.generated(), 10'000u);
    EXPECT_EQ(r.deliveries.size(), traffic.generated());
    EXPECT_EQ(r.emu.packetsInNetwork(), 0u);
    EXPECT_TRUE(r.emu.checkCredits().isOk()) << r.emu.checkCredits().toString();
  }
}

std::vector<TimePs> iqDeliveryTimes(std::uint64_t seed) {
  EmulatorConfig cfg = iqConfig();
  cfg.seed = seed;
  IqRig r(4, 3, cfg);
  workload::SyntheticSpec spec;
  spec.rate = workload::RateProfile::constant(0.4, 5'000 * cfg.cyclePs);
  spec.seed = 11;
  SyntheticTraffic traffic(r.emu, spec);
  traffic.start();
  r.sched.runAll();
  std::vector<TimePs> t;
  for (const Delivery& d : r.deliveries)
    t.push_back(d.delivered * 1000 + d.src.value());
  return t;
}

TEST(InputQueued, RunsAreDeterministicPerSeed) {
  EXPECT_EQ(iqDeliveryTimes(5), iqDeliveryTimes(5));
  EXPECT_NE(iqDeliveryTimes(5), iqDeliveryTimes(6)) << "random up routing draws from the seed";
}

// Under deep-sleep low-power idle a wormhole packet's head pays the wake-up of
// each idle hop in turn while its body holds the links behind it, so a host's
// backlog drains one packet per few wake-ups (the slow drain of a 2-ary
// 5-tree at light load with gating.wait_on: 0.05, docs/emulator.md). Nothing is
// lost, and a drain cut short says what holds it: the wake-up at the front
// of the chain and the packets queued at the host.
TEST(InputQueued, AWaitOnAWakeUpAndAHostsBacklogAreNamed) {
  EmulatorConfig cfg = iqConfig();
  cfg.vcBufferBytes = 4 * cfg.flitBytes;  // wormhole: a packet spans four hops
  cfg.lpi = policies::LpiParams::table6(policies::LpiMode::kDeepSleep, 1);
  IqRig r(2, 3, cfg);
  r.sched.runUntil(20'000'000);  // every link deep asleep
  const TimePs t0 = r.sched.now();
  for (int i = 0; i < 3; ++i)
    r.emu.sendMessage(HostId(0), HostId(7), cfg.packetBytes);
  // The host's link has woken, the head waits for its leaf's up link to.
  r.sched.runUntil(t0 + cfg.lpi.wakeDeepSleep + 2'000'000);
  const std::string where = r.emu.describeWaiting();
  EXPECT_NE(where.find("(up), waking from low-power idle ("), std::string::npos) << where;
  EXPECT_NE(where.find("2 packets wait on H0"), std::string::npos) << where;
  EXPECT_NE(where.find("behind the packet being sent"), std::string::npos) << where;
  r.sched.runAll();
  EXPECT_EQ(r.deliveries.size(), 3u);
  EXPECT_EQ(r.emu.packetsInNetwork(), 0u);
  EXPECT_EQ(r.emu.describeWaiting(), "no packet waits in the network");
}

}  // namespace
}  // namespace ebb::sim
