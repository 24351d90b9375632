// Link, direction and switch failures in the emulator, and their reporting
// through SimBackend (docs/emulator.md, "Faults").
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "fabric/ibnetdiscover.h"
#include "fabric/kary_tree.h"
#include "sim_backend/fabric_emulator.h"
#include "sim_backend/mpi_replay.h"
#include "sim_backend/sim_backend.h"
#include "workload/mpi_trace.h"

namespace ebb::sim {
namespace {

using fabric::Direction;
using fabric::HostId;
using fabric::LinkId;
using fabric::SwitchId;
using policies::LinkPowerState;

// The input-queued model's flow control is whole: every buffer slot is a
// credit, a flit or an item on a wire, and the stage masks match.
void expectCreditsWhole(const FabricEmulator& emu) {
  const Status s = emu.checkCredits();
  EXPECT_TRUE(s.isOk()) << s.toString();
}

struct Rig {
  explicit Rig(int k, int n, EmulatorConfig cfg = {})
      : topo(fabric::KAryNTree::make(k, n).value().build()), emu(topo, cfg, sched) {
    emu.onDelivery([this](const Delivery& d) { delivered.push_back(d); });
    emu.onDrop([this](const Drop& d) { dropped.push_back(d); });
  }
  // The link from the leaf of `h` to its `i`-th up neighbour.
  LinkId leafUp(HostId h, std::size_t i) const {
    const fabric::Switch& leaf = topo.sw(topo.leafOf(h));
    return leaf.ports[leaf.upPorts[i]].link;
  }
  // Runs until `pred` holds (false if the network went idle first).
  template <class Pred>
  bool runUntil(Pred pred) {
    while (!pred()) {
      if (!sched.runOne()) return false;
    }
    return true;
  }
  fabric::Topology topo;
  agent::VirtualScheduler sched;
  FabricEmulator emu;
  std::vector<Delivery> delivered;
  std::vector<Drop> dropped;
};

// The switch models under test (docs/emulator.md, "Switch models"): every
// fault rule holds on each.
enum class Model { kOutputQueued, kInputQueued, kWormhole };

class FaultsOnEachModel : public ::testing::TestWithParam<Model> {
 protected:
  EmulatorConfig model(EmulatorConfig cfg = {}) const {
    if (GetParam() == Model::kOutputQueued) return cfg;
    cfg.switchModel = SwitchModel::kInputQueued;
    // Wormhole: 4-flit VC buffers, so a 16-flit packet spans several hops.
    if (GetParam() == Model::kWormhole) cfg.vcBufferBytes = 4 * cfg.flitBytes;
    return cfg;
  }
};

INSTANTIATE_TEST_SUITE_P(Models, FaultsOnEachModel,
                         ::testing::Values(Model::kOutputQueued, Model::kInputQueued,
                                           Model::kWormhole),
                         [](const ::testing::TestParamInfo<Model>& i) {
                           return i.param == Model::kOutputQueued  ? "OutputQueued"
                                  : i.param == Model::kInputQueued ? "InputQueued"
                                                                   : "Wormhole";
                         });

TEST_P(FaultsOnEachModel, AFailedLinkCarriesNothingAndItsTimeCountsAsOff) {
  Rig r(2, 2, model());
  const LinkId failedLink = r.leafUp(HostId(0), 0);
  const LinkId other = r.leafUp(HostId(0), 1);
  r.emu.failLink(failedLink);
  EXPECT_TRUE(r.emu.failed(failedLink, Direction::kUp));
  EXPECT_TRUE(r.emu.failed(failedLink, Direction::kDown));
  EXPECT_FALSE(r.emu.usable(failedLink, Direction::kUp));
  EXPECT_TRUE(r.emu.linkDown(failedLink));
  EXPECT_EQ(r.emu.directionState(failedLink, Direction::kUp), LinkPowerState::kOff);
  for (std::uint32_t i = 0; i < 50; ++i) {
    r.emu.sendMessage(HostId(i % 2), HostId(2 + i % 2), 256, i);
    r.emu.sendMessage(HostId(2 + i % 2), HostId(i % 2), 256, 100 + i);
  }
  r.sched.runAll();
  EXPECT_EQ(r.delivered.size(), 100u);
  EXPECT_EQ(r.emu.stats().packetsDropped, 0u);
  for (Direction d : {Direction::kUp, Direction::kDown}) {
    EXPECT_EQ(r.emu.counters(failedLink, d).txPackets, 0u);
    EXPECT_GT(r.emu.counters(other, d).txPackets, 0u);
  }
  const TimePs end = r.sched.now() + 1'000'000;
  r.sched.runUntil(end);
  const policies::DirectionTimes t = r.emu.directionTimes(failedLink, Direction::kUp);
  EXPECT_EQ(t.off, end);  // failed since 0: unpowered the whole time
  EXPECT_EQ(t.total(), end);
  EXPECT_EQ(r.emu.failedTime(failedLink, Direction::kUp), end);
  EXPECT_EQ(r.emu.directionTimes(other, Direction::kUp).off, 0);
  EXPECT_EQ(r.emu.directionTimes(other, Direction::kUp).total(), end);
}

TEST(FaultInjection, PacketsQueuedAtAFailedUpLinkTakeAnotherAndAllArrive) {
  Rig r(2, 2);
  const LinkId link = r.leafUp(HostId(0), 0);
  // Two senders into one host: the host link is the bottleneck, so packets
  // back up to the leaf's up links and wait there for credits.
  for (std::uint32_t i = 0; i < 40; ++i) {
    r.emu.sendMessage(HostId(0), HostId(2), 512, i);
    r.emu.sendMessage(HostId(1), HostId(2), 512, 100 + i);
  }
  // Fail it while packets are queued and none is on its wire.
  ASSERT_TRUE(r.runUntil([&] {
    return r.emu.queuedPackets(link, Direction::kUp) >= 2 &&
           !r.emu.transmitting(link, Direction::kUp) && r.sched.now() > 0;
  }));
  const std::uint32_t queued = r.emu.queuedPackets(link, Direction::kUp);
  std::vector<std::pair<LinkId, Direction>> unusable;
  r.emu.onUsability([&](LinkId l, Direction d, bool usable) {
    if (!usable) unusable.emplace_back(l, d);
  });
  r.emu.failLink(link);
  ASSERT_EQ(unusable.size(), 2u);  // both directions were usable
  EXPECT_EQ(r.emu.queuedPackets(link, Direction::kUp), 0u);
  EXPECT_EQ(r.emu.stats().packetsRerouted, queued);
  EXPECT_GE(r.emu.stats().messagesRerouted, 1u);
  r.sched.runAll();
  EXPECT_EQ(r.delivered.size(), 80u);
  EXPECT_EQ(r.emu.stats().messagesDelivered, r.emu.stats().messagesSent);
  EXPECT_EQ(r.emu.stats().packetsDropped, 0u);
  EXPECT_TRUE(r.dropped.empty());
  EXPECT_EQ(r.emu.packetsInNetwork(), 0u);
}

// A failed down direction is avoided at the ascent: no packet climbs to a
// switch that can no longer descend to its destination.
TEST_P(FaultsOnEachModel, AscentAvoidsASwitchWhoseWayDownFailed) {
  Rig r(2, 3, model());
  // The second leaf's link to its first parent: that parent can no longer
  // reach hosts 2 and 3 (its only way down to their leaf).
  const LinkId link = r.leafUp(HostId(2), 0);
  r.emu.failDirection(link, Direction::kDown);
  EXPECT_TRUE(r.emu.usable(link, Direction::kUp));
  for (std::uint32_t i = 0; i < 64; ++i)
    r.emu.sendMessage(HostId(i % 8), HostId(2 + i % 2), 128, i);
  r.sched.runAll();
  EXPECT_EQ(r.emu.stats().messagesDelivered, 64u);
  EXPECT_EQ(r.emu.stats().packetsDropped, 0u);
  EXPECT_EQ(r.emu.counters(link, Direction::kDown).txPackets, 0u);
}

// An ibsim net file of `hosts` (host, leaf) and `cables` (lower switch,
// upper switch), ports numbered in the order given.
std::string netOf(const std::vector<std::pair<std::string, std::string>>& hosts,
                  const std::vector<std::pair<std::string, std::string>>& cables) {
  std::map<std::string, std::vector<std::string>> ports;  // node -> "peer"[port] per port
  const auto cable = [&](const std::string& a, const std::string& b) {
    ports[a].push_back(b);
    ports[b].push_back(a);
  };
  for (const auto& [h, leaf] : hosts)
    cable(h, leaf);
  for (const auto& [lower, upper] : cables)
    cable(lower, upper);
  const auto portOf = [&](const std::string& node, const std::string& peer, std::size_t nth) {
    for (std::size_t p = 0, seen = 0; p < ports[node].size(); ++p) {
      if (ports[node][p] == peer && seen++ == nth) return p + 1;
    }
    return std::size_t{0};
  };
  std::string text;
  for (const auto& [node, peers] : ports) {
    const bool host = node[0] == 'H';
    text += fmt::format("{} {} \"{}\"\n", host ? "Hca" : "Switch", peers.size(), node);
    std::map<std::string, std::size_t> nth;
    for (std::size_t p = 0; p < peers.size(); ++p) {
      const std::size_t k = nth[peers[p]]++;
      text += fmt::format("[{}] \"{}\"[{}]\n", p + 1, peers[p], portOf(peers[p], node, k));
    }
  }
  return text;
}

fabric::Topology irregularOf(const std::string& net) {
  std::istringstream in(net);
  return fabric::parseIbnetdiscover(in, "net").value();
}

// An irregular tree where leaf L1 hangs below M1 alone and L0 below M0 and
// M1: with the cable M1-L0 failed, H1's packets reach M1 climbing and must
// climb on (T0, M0, L0) rather than go down the failed cable. All arrive.
TEST_P(FaultsOnEachModel, APacketWhoseWayDownFailedClimbsOnInAnIrregularTree) {
  const fabric::Topology topo =
      irregularOf(netOf({{"H0", "L0"}, {"H1", "L1"}},
                        {{"L0", "M0"}, {"L0", "M1"}, {"L1", "M1"}, {"M0", "T0"}, {"M1", "T0"}}));
  agent::VirtualScheduler sched;
  FabricEmulator emu(topo, model(), sched);
  const fabric::SwitchId m1 = *topo.findSwitch("M1");
  LinkId failed;
  for (const fabric::Port& p : topo.sw(m1).ports) {
    if (p.link.valid() && topo.link(p.link).lower.sw == *topo.findSwitch("L0")) failed = p.link;
  }
  ASSERT_TRUE(failed.valid());
  emu.failLink(failed);
  for (std::uint32_t i = 0; i < 40; ++i)
    emu.sendMessage(HostId(i % 2), HostId(1 - i % 2), 256, i);
  sched.runAll();
  EXPECT_EQ(emu.stats().messagesDelivered, 40u);
  EXPECT_EQ(emu.stats().packetsDropped, 0u);
  EXPECT_GT(emu.stats().packetsRerouted, 0u);  // H1's, at M1
}

TEST_P(FaultsOnEachModel, FailingTheOnlyPathDropsAndCountsEveryLostMessage) {
  Rig r(2, 2, model());
  const LinkId hostLink = r.topo.host(HostId(3)).link;
  for (std::uint32_t i = 0; i < 30; ++i) {
    r.emu.sendMessage(HostId(i % 3), HostId(3), 300, i);
  }
  r.sched.runUntil(1'000'000);
  ASSERT_GT(r.emu.packetsInNetwork(), 0u);
  ASSERT_GT(r.delivered.size(), 0u);
  r.emu.failLink(hostLink);
  for (std::uint32_t i = 30; i < 35; ++i)  // sent after: lost at the destination's leaf
    r.emu.sendMessage(HostId(0), HostId(3), 64, i);
  r.emu.sendMessage(HostId(3), HostId(0), 64, 99);  // lost at the source: its only link
  r.sched.runAll();
  const EmulatorStats& s = r.emu.stats();
  EXPECT_GT(s.messagesDropped, 5u);
  EXPECT_EQ(s.messagesDropped, r.dropped.size());
  EXPECT_EQ(s.messagesDelivered + s.messagesDropped, s.messagesSent);
  EXPECT_GE(s.packetsDropped, s.messagesDropped);
  std::set<std::uint32_t> tags;
  for (const Delivery& d : r.delivered)
    tags.insert(d.tag);
  for (const Drop& d : r.dropped) {
    EXPECT_EQ(tags.count(d.message.tag), 0u) << "tag " << d.message.tag << " delivered and lost";
    EXPECT_EQ(d.message.delivered, -1);
    EXPECT_GE(d.droppedAt, 1'000'000);
    tags.insert(d.message.tag);
  }
  EXPECT_EQ(tags.size(), 36u);
  EXPECT_EQ(tags.count(99), 1u);
  EXPECT_EQ(r.emu.packetsInNetwork(), 0u);
  EXPECT_EQ(r.emu.queuedAtHosts(), 0u);
  expectCreditsWhole(r.emu);
}

// Credits of lost packets come back: after a repair the same link carries a
// full load again without a stall.
TEST_P(FaultsOnEachModel, LostPacketsReleaseTheirCredits) {
  EmulatorConfig cfg = model();
  cfg.turnOnPs = 10'000;
  Rig r(2, 2, cfg);
  const LinkId hostLink = r.topo.host(HostId(3)).link;
  for (std::uint32_t i = 0; i < 200; ++i)
    r.emu.sendMessage(HostId(i % 3), HostId(3), 256, i);
  r.sched.runUntil(100'000);
  r.emu.failLink(hostLink);
  r.sched.runAll();
  r.emu.repairLink(hostLink);
  r.sched.runUntil(r.sched.now() + cfg.turnOnPs);
  const std::uint64_t before = r.emu.stats().messagesDelivered;
  for (std::uint32_t i = 0; i < 200; ++i)
    r.emu.sendMessage(HostId(i % 3), HostId(3), 256, 1000 + i);
  r.sched.runAll();
  EXPECT_EQ(r.emu.stats().messagesDelivered, before + 200);
  EXPECT_EQ(r.emu.packetsInNetwork(), 0u);
  expectCreditsWhole(r.emu);
}

TEST_P(FaultsOnEachModel, RepairRestoresUsabilityTOnLaterAndGatedOffStaysOff) {
  EmulatorConfig cfg = model();
  Rig r(2, 2, cfg);
  const LinkId link = r.leafUp(HostId(0), 0);
  const LinkId gated = r.leafUp(HostId(0), 1);
  r.emu.initDirection(gated, Direction::kUp, false);
  std::vector<std::pair<TimePs, bool>> changes;
  std::vector<std::pair<TimePs, bool>> linkEvents;
  r.emu.onUsability([&](LinkId l, Direction d, bool usable) {
    if (l == link && d == Direction::kUp) changes.emplace_back(r.sched.now(), usable);
  });
  r.emu.onLinkFault([&](LinkId l, bool up) {
    if (l == link) linkEvents.emplace_back(r.sched.now(), up);
  });
  r.sched.runUntil(5'000);
  r.emu.failLink(link);
  r.emu.failLink(gated);
  r.sched.runUntil(50'000);
  r.emu.repairLink(link);
  r.emu.repairLink(gated);
  EXPECT_FALSE(r.emu.failed(link, Direction::kUp));
  EXPECT_EQ(r.emu.directionState(link, Direction::kUp), LinkPowerState::kTurningOn);
  r.sched.runUntil(50'000 + cfg.turnOnPs - 1);
  EXPECT_FALSE(r.emu.usable(link, Direction::kUp));
  EXPECT_TRUE(r.emu.linkDown(link));
  r.sched.runUntil(50'000 + cfg.turnOnPs);
  EXPECT_TRUE(r.emu.usable(link, Direction::kUp));
  EXPECT_FALSE(r.emu.linkDown(link));
  EXPECT_FALSE(r.emu.usable(gated, Direction::kUp));
  EXPECT_EQ(r.emu.directionState(gated, Direction::kUp), LinkPowerState::kOff);
  EXPECT_TRUE(r.emu.usable(gated, Direction::kDown));  // gating had it on
  const std::vector<std::pair<TimePs, bool>> expected{{5'000, false},
                                                      {50'000 + cfg.turnOnPs, true}};
  EXPECT_EQ(changes, expected);
  EXPECT_EQ(linkEvents, expected);
  const policies::DirectionTimes t = r.emu.directionTimes(link, Direction::kUp);
  EXPECT_EQ(t.off, 45'000);  // failed
  EXPECT_EQ(t.turningOn, cfg.turnOnPs);
  EXPECT_EQ(t.total(), r.sched.now());
  EXPECT_EQ(r.emu.failedTime(link, Direction::kUp), 45'000);
}

struct RecordingCallback final : agent::BackendCallback {
  explicit RecordingCallback(agent::VirtualScheduler& s) : sched(s) {}
  void onLinkStateChanged(fabric::PortId, LinkPowerState) override {}
  void onPortDown(fabric::PortId p) override { events.push_back({sched.now(), p, false}); }
  void onPortUp(fabric::PortId p) override { events.push_back({sched.now(), p, true}); }
  void onDirectionDown(LinkId l, Direction d) override {
    directions.push_back({sched.now(), l, d, false});
  }
  void onDirectionUp(LinkId l, Direction d) override {
    directions.push_back({sched.now(), l, d, true});
  }
  void onBackendError(const Status&) override {}
  struct DirectionEvent {
    TimePs at;
    LinkId link;
    Direction dir;
    bool up;
    bool operator==(const DirectionEvent&) const = default;
  };
  std::vector<DirectionEvent> directions;
  struct Event {
    TimePs at;
    fabric::PortId port;
    bool up;
    bool operator==(const Event&) const = default;
  };
  agent::VirtualScheduler& sched;
  std::vector<Event> events;
};

// A 2-ary 2-tree whose SimBackend reports to a RecordingCallback, with a
// detection delay (3 us) longer than T_on (2 us).
struct Reporting {
  explicit Reporting(EmulatorConfig c)
      : cfg(withDelays(c)), r(2, 2, cfg), backend(r.emu), cb(r.sched) {
    backend.setCallback(&cb);
  }
  static EmulatorConfig withDelays(EmulatorConfig c) {
    c.faultDetectionPs = 3'000'000;
    c.turnOnPs = 2'000'000;
    return c;
  }
  EmulatorConfig cfg;
  Rig r;
  SimBackend backend;
  RecordingCallback cb;
};

TEST_P(FaultsOnEachModel, PortDownReachesBothEndsAfterTheDetectionDelay) {
  Reporting rep(model());
  const EmulatorConfig& cfg = rep.cfg;
  Rig& r = rep.r;
  RecordingCallback& cb = rep.cb;
  const LinkId link = r.leafUp(HostId(0), 0);
  const fabric::Link& l = r.topo.link(link);
  r.sched.runUntil(1'000);
  r.emu.failLink(link);
  r.sched.runUntil(1'000 + cfg.faultDetectionPs - 1);
  EXPECT_TRUE(cb.events.empty());
  r.sched.runUntil(1'000 + cfg.faultDetectionPs);
  using E = RecordingCallback::Event;
  const TimePs down = 1'000 + cfg.faultDetectionPs;
  EXPECT_EQ(cb.events, (std::vector<E>{{down, l.lower, false}, {down, l.upper, false}}));
  r.sched.runUntil(10'000'000);
  r.emu.repairLink(link);
  r.sched.runAll();
  const TimePs up = 10'000'000 + cfg.turnOnPs;
  EXPECT_EQ(cb.events, (std::vector<E>{{down, l.lower, false},
                                       {down, l.upper, false},
                                       {up, l.lower, true},
                                       {up, l.upper, true}}));

  // A host link: only the switch end is an agent.
  cb.events.clear();
  const LinkId hostLink = r.topo.host(HostId(1)).link;
  r.emu.failLink(hostLink);
  r.sched.runAll();
  ASSERT_EQ(cb.events.size(), 1u);
  EXPECT_EQ(cb.events[0].port, r.topo.link(hostLink).upper);

  // Down and back up before detection: a switch reports nothing.
  cb.events.clear();
  r.emu.failLink(link);
  r.emu.repairLink(link);  // up T_on = 2 µs later, before the 3 µs detection
  r.sched.runAll();
  EXPECT_TRUE(cb.events.empty());
}

// One direction down is reported as that direction (its other one still
// carries), after the detection delay; the other direction failing as well
// is reported as the second direction; a whole repair as the ports up. The
// port transmitting on a failed direction reads failed, its peer does not.
TEST_P(FaultsOnEachModel, ADirectionDownIsReportedAsThatDirectionOnly) {
  Reporting rep(model());
  const EmulatorConfig& cfg = rep.cfg;
  Rig& r = rep.r;
  SimBackend& backend = rep.backend;
  RecordingCallback& cb = rep.cb;
  const LinkId link = r.leafUp(HostId(0), 0);
  const fabric::Link& l = r.topo.link(link);
  using D = RecordingCallback::DirectionEvent;
  r.emu.failDirection(link, Direction::kDown);
  r.sched.runUntil(cfg.faultDetectionPs);
  EXPECT_TRUE(cb.events.empty());
  EXPECT_EQ(cb.directions, (std::vector<D>{{cfg.faultDetectionPs, link, Direction::kDown, false}}));
  const auto failedAt = [&](fabric::PortId p) {
    bool failed = false;
    backend.discoverPorts(p.sw, [&](Result<std::vector<agent::PortDescription>> ports) {
      for (const agent::PortDescription& d : ports.value())
        if (d.index == p.index) failed = d.failed;
    });
    r.sched.runUntil(r.sched.now());
    return failed;
  };
  EXPECT_TRUE(failedAt(l.upper));   // it transmits down
  EXPECT_FALSE(failedAt(l.lower));  // its up direction works
  EXPECT_TRUE(r.emu.usable(link, Direction::kUp));
  const TimePs second = 10'000'000;
  r.sched.runUntil(second);
  r.emu.failDirection(link, Direction::kUp);
  r.sched.runUntil(second + cfg.faultDetectionPs);
  EXPECT_EQ(cb.directions,
            (std::vector<D>{{cfg.faultDetectionPs, link, Direction::kDown, false},
                            {second + cfg.faultDetectionPs, link, Direction::kUp, false}}));
  EXPECT_TRUE(cb.events.empty());
  r.emu.repairLink(link);
  r.sched.runAll();
  using E = RecordingCallback::Event;
  const TimePs up = second + cfg.faultDetectionPs + cfg.turnOnPs;
  EXPECT_EQ(cb.events, (std::vector<E>{{up, l.lower, true}, {up, l.upper, true}}));
  EXPECT_EQ(cb.directions.size(), 2u);
  EXPECT_FALSE(failedAt(l.upper));
}

TEST_P(FaultsOnEachModel, SimBackendShowsAFailedDirectionOffAndKeepsGatingsWish) {
  Rig r(2, 2, model());
  SimBackend backend(r.emu);
  const LinkId link = r.leafUp(HostId(0), 0);
  const fabric::PortId lower = r.topo.link(link).lower;
  r.emu.failLink(link);
  LinkPowerState applied = LinkPowerState::kOn;
  backend.applyLinkState(lower, false, [&](Result<LinkPowerState> s) { applied = s.value(); });
  r.sched.runAll();
  EXPECT_EQ(applied, LinkPowerState::kOff);
  r.emu.repairLink(link);  // gating asked off meanwhile: it stays off
  r.sched.runAll();
  EXPECT_FALSE(r.emu.linkDown(link));
  EXPECT_EQ(r.emu.directionState(link, Direction::kUp), LinkPowerState::kOff);
  EXPECT_TRUE(r.emu.usable(link, Direction::kDown));
}

TEST_P(FaultsOnEachModel, AWholeSwitchFailureDropsOnlyWhatItHeldAndTrafficGoesAround) {
  Rig r(4, 2, model());
  const SwitchId root = r.topo.switchesAtLevel(0)[0];
  // Steady traffic between every pair of leaves.
  std::uint32_t tag = 0;
  for (std::uint32_t i = 0; i < 400; ++i)
    r.emu.sendMessage(HostId(i % 16), HostId((i * 7 + 3) % 16), 128, tag++);
  r.sched.runUntil(300'000);
  r.emu.failSwitch(root);
  for (const fabric::Port& port : r.topo.sw(root).ports) {
    if (port.role == fabric::PortRole::kUnused) continue;
    EXPECT_TRUE(r.emu.failed(port.link, Direction::kUp));
    EXPECT_TRUE(r.emu.failed(port.link, Direction::kDown));
  }
  r.sched.runAll();
  const std::uint64_t lostAtFailure = r.emu.stats().messagesDropped;
  EXPECT_GT(lostAtFailure, 0u);  // what was on its links
  EXPECT_EQ(r.emu.stats().messagesDelivered + lostAtFailure, 400u);
  // After: everything goes around the failed root.
  for (std::uint32_t i = 0; i < 400; ++i)
    r.emu.sendMessage(HostId(i % 16), HostId((i * 5 + 1) % 16), 128, tag++);
  r.sched.runAll();
  EXPECT_EQ(r.emu.stats().messagesDropped, lostAtFailure);
  EXPECT_EQ(r.emu.stats().messagesDelivered + lostAtFailure, 800u);
  expectCreditsWhole(r.emu);
  for (const fabric::Port& port : r.topo.sw(root).ports) {
    if (port.role != fabric::PortRole::kUnused) {
      EXPECT_TRUE(r.emu.linkDown(port.link));
    }
  }
  // A link failed on its own stays failed when the switch is repaired.
  const LinkId own = r.topo.sw(root).ports[r.topo.sw(root).downPorts[0]].link;
  r.emu.failLink(own);
  r.emu.repairSwitch(root);
  r.sched.runAll();
  EXPECT_TRUE(r.emu.failed(own, Direction::kDown));
  const LinkId other = r.topo.sw(root).ports[r.topo.sw(root).downPorts[1]].link;
  EXPECT_FALSE(r.emu.linkDown(other));
  EXPECT_TRUE(r.emu.usable(other, Direction::kDown));
}

workload::MpiTrace pingPong(int rounds) {
  workload::MpiTrace t;
  t.ranks.resize(2);
  for (int i = 0; i < rounds; ++i) {
    workload::MpiOp send{workload::MpiOpKind::kSend, 0, 1, 1024, i, 0};
    workload::MpiOp recv{workload::MpiOpKind::kRecv, 0, 1, 1024, i, 0};
    t.ranks[0].push_back(send);
    t.ranks[0].push_back(recv);
    recv.peer = 0;
    send.peer = 0;
    t.ranks[1].push_back(recv);
    t.ranks[1].push_back(send);
  }
  t.countOps();
  return t;
}

struct ClosedLoopRun {
  bool done = false;
  TimePs runtime = 0;
  std::uint64_t retransmissions = 0;
  std::uint64_t messagesDropped = 0;
  std::uint64_t matched = 0;
  std::uint64_t events = 0;
};

// Ranks 0 and 1 on hosts 0 and 5; the link of host 5 fails mid-run for 50 µs.
ClosedLoopRun pingPongAcrossAFailure(const EmulatorConfig& cfg) {
  Rig r(2, 3, cfg);
  const workload::MpiTrace trace = pingPong(200);
  MpiReplay mpi(r.emu, trace, {HostId(0), HostId(5)});
  mpi.setRetransmitTimeout(20'000'000);
  r.emu.onDelivery([&](const Delivery& d) { mpi.onDelivery(d); });
  r.emu.onDrop([&](const Drop& d) { EXPECT_TRUE(mpi.onDrop(d)); });
  const LinkId hostLink = r.topo.host(HostId(5)).link;
  r.sched.at(30'000, agent::Phase::kControl, [&] { r.emu.failLink(hostLink); });
  r.sched.at(80'000'000, agent::Phase::kControl, [&] { r.emu.repairLink(hostLink); });
  mpi.start();
  while (!mpi.done() && r.sched.runOne()) {
  }
  return {mpi.done(),
          mpi.runtime(),
          mpi.retransmissions(),
          r.emu.stats().messagesDropped,
          mpi.messagesMatched(),
          r.emu.stats().events};
}

TEST_P(FaultsOnEachModel, ClosedLoopReplayRetransmitsLostMessagesAndCompletes) {
  const ClosedLoopRun run = pingPongAcrossAFailure(model());
  EXPECT_TRUE(run.done);
  EXPECT_EQ(run.matched, 400u);
  EXPECT_GT(run.retransmissions, 0u);
  // Every lost message is sent again (the last retransmission got through).
  EXPECT_EQ(run.retransmissions, run.messagesDropped);
  EXPECT_GT(run.runtime, 80'000'000);  // waited for the repair
}

TEST_P(FaultsOnEachModel, AmgReplayWithALinkAndASwitchFailureCompletes) {
  auto trace = workload::readAmgCsv(std::string(EBB_TRACES_DIR) + "/amg2013-27/amg27_events.csv");
  ASSERT_TRUE(trace) << trace.status().toString() << " (set -DEBB_TRACES_DIR)";
  const fabric::Topology topo = fabric::KAryNTree::make(4, 3).value().build();
  agent::VirtualScheduler sched;
  FabricEmulator emu(topo, model(), sched);
  std::vector<HostId> placement;
  for (std::uint32_t i = 0; i < trace->ranks.size(); ++i)
    placement.push_back(HostId(i));
  MpiReplay mpi(emu, *trace, placement);
  // Mid-run, after the 5000th delivery: a root fails for good, and the link
  // of the host that just received fails for 1 ms (its next messages are lost).
  const SwitchId root = topo.switchesAtLevel(0)[0];
  std::uint64_t deliveries = 0;
  emu.onDelivery([&](const Delivery& d) {
    mpi.onDelivery(d);
    if (++deliveries != 5000) return;
    const LinkId hostLink = topo.host(d.dst).link;
    sched.at(sched.now(), agent::Phase::kControl, [&emu, root, hostLink] {
      emu.failSwitch(root);
      emu.failLink(hostLink);
    });
    sched.at(sched.now() + 1'000'000'000, agent::Phase::kControl,
             [&emu, hostLink] { emu.repairLink(hostLink); });
  });
  emu.onDrop([&](const Drop& d) { mpi.onDrop(d); });
  mpi.start();
  while (!mpi.done() && sched.runOne()) {
  }
  EXPECT_TRUE(mpi.done());
  EXPECT_EQ(mpi.messagesMatched(), trace->sends);
  EXPECT_GT(emu.stats().messagesDropped, 0u);
  EXPECT_EQ(mpi.retransmissions(), emu.stats().messagesDropped);
  expectCreditsWhole(emu);
}

TEST_P(FaultsOnEachModel, SameFailuresGiveTheSameRun) {
  const ClosedLoopRun a = pingPongAcrossAFailure(model());
  const ClosedLoopRun b = pingPongAcrossAFailure(model());
  EXPECT_EQ(a.runtime, b.runtime);
  EXPECT_EQ(a.retransmissions, b.retransmissions);
  EXPECT_EQ(a.messagesDropped, b.messagesDropped);
  EXPECT_EQ(a.events, b.events);

  // And an open-loop burst with a failure and a repair, delivery by delivery.
  const auto burst = [this] {
    Rig r(4, 2, model());
    for (std::uint32_t i = 0; i < 300; ++i)
      r.emu.sendMessage(HostId(i % 16), HostId((i * 7 + 3) % 16), 200, i);
    r.sched.runUntil(20'000);
    r.emu.failLink(r.leafUp(HostId(0), 1));
    r.emu.failSwitch(r.topo.switchesAtLevel(0)[2]);
    r.sched.runUntil(40'000);
    r.emu.repairLink(r.leafUp(HostId(0), 1));
    r.sched.runAll();
    std::vector<std::pair<std::uint32_t, TimePs>> out;
    for (const Delivery& d : r.delivered)
      out.emplace_back(d.tag, d.delivered);
    for (const Drop& d : r.dropped)
      out.emplace_back(d.message.tag, -d.droppedAt);
    return out;
  };
  const auto first = burst();
  EXPECT_EQ(first, burst());
  EXPECT_EQ(first.size(), 300u);
}

// Wormhole: a packet spans several hops when a link in the middle of its path
// fails. It is lost whole; every buffer slot and VC it held comes back, so
// after the repair the same paths carry a full load again.
TEST(FaultInjectionWormhole, ACutPacketIsLostWholeAndFreesEveryBufferItHeld) {
  EmulatorConfig cfg;
  cfg.switchModel = SwitchModel::kInputQueued;
  cfg.vcBufferBytes = 4 * cfg.flitBytes;
  cfg.turnOnPs = 10'000;
  Rig r(2, 3, cfg);
  // Every host to the far half of the tree: all cross the roots.
  const auto burst = [&](std::uint32_t firstTag) {
    for (std::uint32_t i = 0; i < 160; ++i)
      r.emu.sendMessage(HostId(i % 4), HostId(4 + (i * 3) % 4), 1024, firstTag + i);
  };
  burst(0);
  // A level-1 switch's link to a root, cut while packets stretch across it.
  const fabric::Switch& mid = r.topo.sw(r.topo.switchesAtLevel(1)[0]);
  const LinkId link = mid.ports[mid.upPorts[0]].link;
  ASSERT_TRUE(r.runUntil(
      [&] { return r.emu.transmitting(link, Direction::kUp) && r.sched.now() > 200'000; }));
  const TimePs cutAt = r.sched.now();
  const std::uint64_t carried = r.emu.counters(link, Direction::kUp).txPackets;
  const std::size_t deliveredBefore = r.delivered.size();
  r.emu.failLink(link);
  expectCreditsWhole(r.emu);
  r.sched.runAll();
  const EmulatorStats& s = r.emu.stats();
  EXPECT_GT(s.packetsDropped, 0u);
  EXPECT_LT(s.messagesDropped, 20u);                        // only what crossed the cut
  EXPECT_EQ(s.packetsDroppedByFaults(), s.packetsDropped);  // none is gating's
  EXPECT_EQ(s.messagesDroppedGated, 0u);
  EXPECT_EQ(r.emu.counters(link, Direction::kUp).txPackets, carried);
  EXPECT_GT(r.delivered.size(), deliveredBefore + 100);  // the rest went around
  for (const Drop& d : r.dropped)
    EXPECT_EQ(d.droppedAt, cutAt);
  EXPECT_EQ(s.messagesDelivered + s.messagesDropped, 160u);
  EXPECT_EQ(s.messagesDropped, r.dropped.size());
  EXPECT_EQ(r.emu.packetsInNetwork(), 0u);
  for (std::uint32_t ch = 0; ch < 2 * r.topo.numLinks(); ++ch)
    EXPECT_EQ(r.emu.bufferedFlits(LinkId(ch / 2), static_cast<Direction>(ch % 2)), 0u);
  expectCreditsWhole(r.emu);
  r.emu.repairLink(link);
  r.sched.runUntil(r.sched.now() + cfg.turnOnPs);
  const std::uint64_t dropped = s.messagesDropped, delivered = s.messagesDelivered;
  burst(1000);
  r.sched.runAll();
  EXPECT_EQ(s.messagesDropped, dropped);
  EXPECT_EQ(s.messagesDelivered, delivered + 160);
  EXPECT_GT(r.emu.counters(link, Direction::kUp).txPackets, 0u);  // in use again
  expectCreditsWhole(r.emu);
}

}  // namespace
}  // namespace ebb::sim
