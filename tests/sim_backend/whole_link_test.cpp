// SimBackend gating a link as one unit (GatingUnit::kLink), as InfiniBand
// does: the in-band mode of the emulator (docs/emulator.md, "In-band mode").
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "fabric/topology_builder.h"
#include "sim_backend/fabric_emulator.h"
#include "sim_backend/sim_backend.h"

namespace ebb::sim {
namespace {

using fabric::Direction;
using fabric::HostId;
using fabric::LinkId;
using fabric::PortId;
using policies::LinkPowerState;

struct Changed {
  TimePs at;
  PortId port;
  LinkPowerState state;
  bool operator==(const Changed&) const = default;
};

class Recorder final : public agent::BackendCallback {
 public:
  explicit Recorder(agent::VirtualScheduler& s) : sched_(s) {}
  void onLinkStateChanged(PortId port, LinkPowerState state) override {
    changes.push_back({sched_.now(), port, state});
  }
  void onPortDown(PortId) override {}
  void onPortUp(PortId) override {}
  void onDirectionDown(fabric::LinkId, fabric::Direction) override {}
  void onDirectionUp(fabric::LinkId, fabric::Direction) override {}
  void onBackendError(const Status&) override {}
  std::vector<Changed> changes;

 private:
  agent::VirtualScheduler& sched_;
};

struct Rig {
  explicit Rig(GatingUnit unit, SwitchModel model = SwitchModel::kOutputQueued)
      : Rig(fabric::KAryNTree::make(2, 2).value().build(), unit, model) {}
  Rig(fabric::Topology t, GatingUnit unit, SwitchModel model)
      : topo(std::move(t)), emu(topo, cfg(model), sched), backend(emu, unit), recorder(sched) {
    backend.setCallback(&recorder);
    const fabric::Switch& leaf = topo.sw(topo.leafOf(HostId(0)));
    link = leaf.ports[leaf.upPorts[0]].link;
  }
  // Runs until `link` started sending up (the packet chose it and climbs).
  void runUntilSentUp(LinkId l) {
    while (emu.counters(l, Direction::kUp).txPackets == 0 && sched.now() < 1'000'000'000)
      sched.runUntil(sched.now() + 1'000);
  }
  static EmulatorConfig cfg(SwitchModel model = SwitchModel::kOutputQueued) {
    EmulatorConfig c;
    c.switchModel = model;
    c.turnOnPs = 2'000'000;
    c.turnOffPs = 3'000'000;
    return c;
  }
  LinkPowerState apply(PortId port, bool on) {
    LinkPowerState applied = on ? LinkPowerState::kOff : LinkPowerState::kOn;
    backend.applyLinkState(port, on, [&](Result<LinkPowerState> s) { applied = s.value(); });
    sched.runUntil(sched.now());
    return applied;
  }
  fabric::Topology topo;
  agent::VirtualScheduler sched;
  FabricEmulator emu;
  SimBackend backend;
  Recorder recorder;
  LinkId link;
};

TEST(WholeLink, CapabilitiesSayWhetherDirectionsAreGatedApart) {
  EXPECT_TRUE(Rig(GatingUnit::kDirection).backend.capabilities().perDirectionGating);
  EXPECT_FALSE(Rig(GatingUnit::kLink).backend.capabilities().perDirectionGating);
}

TEST(WholeLink, AnUpPortTurnsBothDirectionsOffAndOnWithTheEmulatorsTiming) {
  Rig r(GatingUnit::kLink);
  const fabric::Link& l = r.topo.link(r.link);
  r.sched.runUntil(1'000);
  EXPECT_EQ(r.apply(l.lower, false), LinkPowerState::kTurningOff);
  for (Direction d : {Direction::kUp, Direction::kDown}) {
    EXPECT_FALSE(r.emu.usable(r.link, d));  // unusable at once, both ways
    EXPECT_EQ(r.emu.directionState(r.link, d), LinkPowerState::kTurningOff);
  }
  r.sched.runUntil(1'000 + Rig::cfg().turnOffPs);
  for (Direction d : {Direction::kUp, Direction::kDown})
    EXPECT_EQ(r.emu.directionState(r.link, d), LinkPowerState::kOff);
  // The lower switch hears its up port, the upper switch its down port: a
  // down port follows its link.
  const TimePs off = 1'000 + Rig::cfg().turnOffPs;
  EXPECT_EQ(r.recorder.changes, (std::vector<Changed>{{off, l.lower, LinkPowerState::kOff},
                                                      {off, l.upper, LinkPowerState::kOff}}));

  // Off draws nothing in either direction: both count the same time off.
  r.sched.runUntil(20'000'000);
  for (Direction d : {Direction::kUp, Direction::kDown})
    EXPECT_EQ(r.emu.directionTimes(r.link, d).off, 20'000'000 - off);

  r.recorder.changes.clear();
  EXPECT_EQ(r.apply(l.lower, true), LinkPowerState::kTurningOn);
  for (Direction d : {Direction::kUp, Direction::kDown}) {
    EXPECT_FALSE(r.emu.usable(r.link, d));
    EXPECT_EQ(r.emu.directionState(r.link, d), LinkPowerState::kTurningOn);
  }
  r.sched.runAll();
  const TimePs on = 20'000'000 + Rig::cfg().turnOnPs;
  for (Direction d : {Direction::kUp, Direction::kDown})
    EXPECT_TRUE(r.emu.usable(r.link, d));
  EXPECT_EQ(r.recorder.changes, (std::vector<Changed>{{on, l.lower, LinkPowerState::kOn},
                                                      {on, l.upper, LinkPowerState::kOn}}));
}

TEST(WholeLink, ADownPortGatesTheWholeLinkToo) {
  // InfiniBand disables a port at either end; the link goes down both ways.
  Rig r(GatingUnit::kLink);
  const fabric::Link& l = r.topo.link(r.link);
  EXPECT_EQ(r.apply(l.upper, false), LinkPowerState::kTurningOff);
  r.sched.runAll();
  for (Direction d : {Direction::kUp, Direction::kDown})
    EXPECT_EQ(r.emu.directionState(r.link, d), LinkPowerState::kOff);
}

TEST(WholeLink, DiscoveryShowsBothDirectionsOfAGatedLinkOff) {
  Rig r(GatingUnit::kLink);
  const fabric::Link& l = r.topo.link(r.link);
  r.apply(l.lower, false);
  r.sched.runAll();
  for (PortId end : {l.lower, l.upper}) {
    std::vector<agent::PortDescription> ports;
    r.backend.discoverPorts(end.sw, [&](auto d) { ports = d.value(); });
    r.sched.runAll();
    bool seen = false;
    for (const agent::PortDescription& p : ports) {
      if (p.index != end.index) continue;
      seen = true;
      EXPECT_EQ(p.transmit, LinkPowerState::kOff);
      EXPECT_EQ(p.receive, LinkPowerState::kOff);
    }
    EXPECT_TRUE(seen);
  }
}

// A subnet manager routes around a disabled link: the ascent avoids an upper
// switch whose way down is gated off, instead of waiting there for a link
// the lower switch keeps off.
TEST(WholeLink, TheAscentAvoidsAnUpperSwitchWhoseWayDownIsOff) {
  Rig r(GatingUnit::kLink);
  std::vector<Delivery> delivered;
  r.emu.onDelivery([&](const Delivery& d) { delivered.push_back(d); });
  // Leaf of hosts 2 and 3: its link to the upper switch of r.link goes off.
  const fabric::SwitchId upper = r.topo.link(r.link).upper.sw;
  const fabric::Switch& leaf1 = r.topo.sw(r.topo.leafOf(HostId(2)));
  ASSERT_NE(r.topo.leafOf(HostId(2)), r.topo.leafOf(HostId(0)));
  fabric::LinkId cut;
  for (std::uint16_t up : leaf1.upPorts) {
    if (r.topo.link(leaf1.ports[up].link).upper.sw == upper) cut = leaf1.ports[up].link;
  }
  ASSERT_TRUE(cut.valid());
  r.apply(r.topo.link(cut).lower, false);
  r.sched.runAll();
  for (std::uint32_t i = 0; i < 40; ++i)
    r.emu.sendMessage(HostId(i % 2), HostId(2 + i % 2), 256, i);
  r.sched.runAll();
  EXPECT_EQ(delivered.size(), 40u);
  EXPECT_EQ(r.emu.packetsInNetwork(), 0u);
  EXPECT_EQ(r.emu.counters(r.link, Direction::kUp).txBytes, 0u);  // nothing went up to a dead end
}

// The race the ascent cannot avoid: the way down goes off after the packet
// chose to climb towards it. No agent turns a link on for a packet waiting
// on it, and a packet waiting for ever holds its buffers: so it is dropped,
// as an InfiniBand switch drops packets for a disabled port, on both models.
TEST(WholeLink, APacketWhoseWayDownWentOffAsItClimbedIsDroppedNotStranded) {
  for (SwitchModel model : {SwitchModel::kOutputQueued, SwitchModel::kInputQueued}) {
    SCOPED_TRACE(model == SwitchModel::kOutputQueued ? "output-queued" : "input-queued");
    Rig r(GatingUnit::kLink, model);
    std::vector<Drop> dropped;
    r.emu.onDrop([&](const Drop& d) { dropped.push_back(d); });
    // Host 0's leaf keeps one way up (r.link); host 2's leaf is below it.
    const fabric::Switch& leaf0 = r.topo.sw(r.topo.leafOf(HostId(0)));
    r.apply(r.topo.link(leaf0.ports[leaf0.upPorts[1]].link).lower, false);
    r.sched.runAll();
    const fabric::SwitchId upper = r.topo.link(r.link).upper.sw;
    const fabric::Switch& leaf1 = r.topo.sw(r.topo.leafOf(HostId(2)));
    fabric::LinkId wayDown;
    for (std::uint16_t up : leaf1.upPorts) {
      if (r.topo.link(leaf1.ports[up].link).upper.sw == upper) wayDown = leaf1.ports[up].link;
    }
    ASSERT_TRUE(wayDown.valid());
    r.emu.sendMessage(HostId(0), HostId(2), 64, 1);
    r.runUntilSentUp(r.link);
    ASSERT_EQ(r.emu.counters(r.link, Direction::kUp).txPackets, 1u);
    r.apply(r.topo.link(wayDown).lower, false);
    r.sched.runAll();
    EXPECT_EQ(r.emu.packetsInNetwork(), 0u);
    EXPECT_EQ(r.emu.stats().packetsDroppedGated, 1u);
    EXPECT_EQ(r.emu.stats().packetsDropped, 1u);
    EXPECT_EQ(r.emu.stats().packetsReascended, 0u);  // the upper switch is a root
    ASSERT_EQ(dropped.size(), 1u);
    EXPECT_EQ(dropped[0].message.tag, 1u);
    // One cause per loss: gating's, none of the faults' (the reports split them).
    EXPECT_TRUE(dropped[0].gated);
    EXPECT_EQ(r.emu.stats().messagesDroppedGated, 1u);
    EXPECT_EQ(r.emu.stats().packetsDroppedByFaults(), 0u);
    EXPECT_EQ(r.emu.stats().messagesDroppedByFaults(), 0u);
  }
}

// Where an upper switch has another way down (an irregular tree), the packet
// climbs on instead: leaf A hangs on M1 only, leaf B on M1 and M2, both
// middles on the top T. A packet from A to B at M1 whose link to B went off
// goes up to T and down through M2.
TEST(WholeLink, APacketWhoseWayDownWentOffClimbsOnWhereAnotherWayIsOn) {
  fabric::TopologyBuilder b;
  const fabric::SwitchId t = b.addSwitch("T", 0x10, 2);
  const fabric::SwitchId m1 = b.addSwitch("M1", 0x11, 3), m2 = b.addSwitch("M2", 0x12, 2);
  const fabric::SwitchId a = b.addSwitch("A", 0x20, 2), bl = b.addSwitch("B", 0x21, 3);
  ASSERT_TRUE(b.connectSwitches({m1, 0}, {t, 0}).isOk());
  ASSERT_TRUE(b.connectSwitches({m2, 0}, {t, 1}).isOk());
  ASSERT_TRUE(b.connectSwitches({a, 1}, {m1, 1}).isOk());
  ASSERT_TRUE(b.connectSwitches({bl, 1}, {m1, 2}).isOk());
  ASSERT_TRUE(b.connectSwitches({bl, 2}, {m2, 1}).isOk());
  ASSERT_TRUE(b.connectHost(b.addHost("ha", 0x100), 0, {a, 0}).isOk());
  ASSERT_TRUE(b.connectHost(b.addHost("hb", 0x101), 0, {bl, 0}).isOk());
  for (SwitchModel model : {SwitchModel::kOutputQueued, SwitchModel::kInputQueued}) {
    SCOPED_TRACE(model == SwitchModel::kOutputQueued ? "output-queued" : "input-queued");
    Rig r(b.build().value(), GatingUnit::kLink, model);
    std::vector<Delivery> delivered;
    r.emu.onDelivery([&](const Delivery& d) { delivered.push_back(d); });
    const fabric::Switch& leafA = r.topo.sw(r.topo.leafOf(HostId(0)));
    const LinkId aUp = leafA.ports[leafA.upPorts[0]].link;
    const fabric::Switch& mid1 = r.topo.sw(r.topo.link(aUp).upper.sw);
    LinkId m1ToB;
    for (const fabric::Port& p : mid1.ports) {
      if (p.link.valid() && r.topo.link(p.link).lower.sw == r.topo.leafOf(HostId(1)))
        m1ToB = p.link;
    }
    ASSERT_TRUE(m1ToB.valid());
    r.emu.sendMessage(HostId(0), HostId(1), 64, 7);
    r.runUntilSentUp(aUp);
    r.apply(r.topo.link(m1ToB).lower, false);
    r.sched.runAll();
    ASSERT_EQ(delivered.size(), 1u);
    EXPECT_EQ(delivered[0].tag, 7u);
    EXPECT_EQ(r.emu.stats().packetsReascended, 1u);
    EXPECT_EQ(r.emu.stats().packetsDropped, 0u);
    EXPECT_EQ(r.emu.packetsInNetwork(), 0u);
  }
}

// The probe's irregular tree (8 hosts, parallel cables, two tops) gated to
// its minimal tree: leaf L1's one way up is M0, whose cable to L3 is off;
// M0 must climb on (T0, M1, L3) for every packet from H1 to H6 and back.
// Before, the ascent saw no up link leading down the tables' way and sent
// them up a link that was off, where they were dropped.
TEST(WholeLink, TheMinimalTreesPathOfAnIrregularTreeCarriesEveryPair) {
  fabric::TopologyBuilder b;
  std::map<std::string, fabric::SwitchId> sw;
  std::map<std::string, std::uint16_t> used;
  std::uint64_t guid = 0x100;
  for (const auto& [name, ports] : std::vector<std::pair<std::string, int>>{
           {"T0", 3}, {"T1", 3}, {"M0", 7}, {"M1", 7}, {"L0", 3}, {"L1", 5}, {"L2", 4}, {"L3", 4}})
    sw[name] = b.addSwitch(name, ++guid, ports);
  const auto cable = [&](const std::string& lower, const std::string& upper) {
    ASSERT_TRUE(b.connectSwitches({sw[lower], used[lower]++}, {sw[upper], used[upper]++}).isOk());
  };
  const std::vector<std::pair<std::string, int>> hosts = {
      {"L0", 1}, {"L1", 3}, {"L2", 2}, {"L3", 2}};
  int h = 0;
  for (const auto& [leaf, n] : hosts) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(
          b.connectHost(b.addHost(fmt::format("H{}", h++), ++guid), 0, {sw[leaf], used[leaf]++})
              .isOk());
    }
  }
  for (const auto& [lower, upper] : std::vector<std::pair<std::string, std::string>>{{"L0", "M0"},
                                                                                     {"L0", "M0"},
                                                                                     {"L1", "M0"},
                                                                                     {"L1", "M1"},
                                                                                     {"L2", "M1"},
                                                                                     {"L2", "M1"},
                                                                                     {"L3", "M1"},
                                                                                     {"L3", "M0"},
                                                                                     {"M0", "T0"},
                                                                                     {"M0", "T0"},
                                                                                     {"M1", "T0"},
                                                                                     {"M1", "T1"},
                                                                                     {"M1", "T1"},
                                                                                     {"M0", "T1"}})
    cable(lower, upper);
  const fabric::Topology topo = b.build().value();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  for (SwitchModel model : {SwitchModel::kOutputQueued, SwitchModel::kInputQueued}) {
    SCOPED_TRACE(model == SwitchModel::kOutputQueued ? "output-queued" : "input-queued");
    Rig r(topo, GatingUnit::kLink, model);
    for (std::uint32_t l = 0; l < r.topo.numLinks(); ++l) {
      const fabric::Link& link = r.topo.link(LinkId(l));
      if (!link.lowerIsHost && !mt.containsLink(LinkId(l))) r.apply(link.lower, false);
    }
    r.sched.runAll();
    std::uint32_t tag = 0;
    for (std::uint32_t src = 0; src < r.topo.numHosts(); ++src) {
      for (std::uint32_t dst = 0; dst < r.topo.numHosts(); ++dst) {
        if (src != dst) r.emu.sendMessage(HostId(src), HostId(dst), 64, ++tag);
      }
    }
    r.sched.runAll();
    EXPECT_EQ(r.emu.stats().messagesDelivered, tag);
    EXPECT_EQ(r.emu.stats().packetsDropped, 0u);
    EXPECT_EQ(r.emu.stats().packetsDroppedGated, 0u);
    EXPECT_GT(r.emu.stats().packetsReascended, 0u);
  }
}

TEST(WholeLink, PerDirectionGatingLeavesTheOtherDirectionOn) {
  Rig r(GatingUnit::kDirection);
  const fabric::Link& l = r.topo.link(r.link);
  r.apply(l.lower, false);
  r.sched.runAll();
  EXPECT_EQ(r.emu.directionState(r.link, Direction::kUp), LinkPowerState::kOff);
  EXPECT_EQ(r.emu.directionState(r.link, Direction::kDown), LinkPowerState::kOn);
  EXPECT_EQ(r.recorder.changes,
            (std::vector<Changed>{{Rig::cfg().turnOffPs, l.lower, LinkPowerState::kOff}}));
}

}  // namespace
}  // namespace ebb::sim
