// IbBackend over a scripted subnet (FakeFabric) in virtual time: discovery
// checked by GUID, whole-link Sets at the right end, routes around what is
// off, dark switches re-enabled through their gateway link, counters held or
// lost, dry run.
#include <infiniband/mad.h>

#include <gtest/gtest.h>

#include "fabric/minimal_tree.h"
#include "tests/ib_backend/ib_rig.h"

namespace ebb::ib {
namespace {

using agent::LinkPowerState;
using fabric::LinkId;
using fabric::PortId;
using fabric::SwitchId;
using testing::kMs;
using testing::nonMtUpPorts;
using testing::Rig;
using testing::tree;

TEST(IbBackend, DiscoversTheFabricAndChecksEveryGuid) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  for (std::uint32_t s = 0; s < tree().numSwitches(); ++s)
    EXPECT_TRUE(rig.backend->reachable(SwitchId(s)));
  const fabric::LinkStates ls = rig.backend->linkStates();
  for (std::uint32_t l = 0; l < tree().numLinks(); ++l)
    EXPECT_TRUE(ls.isFullyOn(LinkId(l)));

  Rig wrong;
  wrong.fab.wrongGuidFor = tree().sw(SwitchId(0)).guid;
  const Status s = wrong.init();
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find(tree().sw(SwitchId(0)).name), std::string::npos) << s.toString();
}

// Bandwidth from the speed each port reads; a LinkUp port with a speed
// code ebb does not know is an error naming the port, never a default.
TEST(IbBackend, PortBandwidthComesFromTheSpeedReadAndAnUnknownCodeIsAnError) {
  const SwitchId leaf = tree().switchesAtLevel(tree().depth() - 1).front();
  const PortId down = nonMtUpPorts(leaf).front();
  PortId up = down;
  for (std::uint16_t u : tree().sw(leaf).upPorts) {
    if (u != down.index) up = {leaf, u};
  }
  ASSERT_NE(up, down);
  Rig rig;
  rig.fab.speedActive = 2;                               // DDR
  rig.fab.speedActiveAt[{up.sw.value(), up.index}] = 1;  // one SDR port
  rig.fab.phys(down) = PhysState::kDisabled;
  ASSERT_TRUE(rig.init().isOk());
  Result<std::vector<agent::PortDescription>> ports = Status(ErrorCode::kInternal, "not done");
  rig.backend->discoverPorts(leaf, [&](auto r) { ports = std::move(r); });
  rig.sched.runAll();
  ASSERT_TRUE(ports) << ports.status().toString();
  for (const agent::PortDescription& d : *ports) {
    // 4x SDR = 8 Gb/s, 4x DDR = 16 Gb/s (1 Gb/s = 1/8000 bytes per ps); the
    // disabled port takes the fastest LinkUp port of its switch.
    const double gbps = d.index == up.index ? 8.0 : 16.0;
    EXPECT_DOUBLE_EQ(d.bandwidthBytesPerPs, gbps / 8000.0) << d.index;
  }

  Rig bad;
  bad.fab.speedActiveAt[{up.sw.value(), up.index}] = 3;  // not an IBA code
  const Status st = bad.init();
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find(tree().describePort(up)), std::string::npos) << st.toString();
  EXPECT_NE(st.message().find("LinkSpeedActive 3 is not a known speed"), std::string::npos)
      << st.toString();
}

TEST(IbBackend, StartsFromThePortStatesItReads) {
  Rig rig;
  const PortId p = nonMtUpPorts(tree().switchesAtLevel(1).front()).front();
  rig.fab.phys(p) = PhysState::kDisabled;
  ASSERT_TRUE(rig.init().isOk());
  EXPECT_FALSE(rig.backend->linkStates().isFullyOn(tree().sw(p.sw).ports[p.index].link));
}

TEST(IbBackend, DisablesAWholeLinkAtItsLowerEndAndRoutesAroundIt) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  const SwitchId leaf = tree().switchesAtLevel(2).front();
  const PortId p = nonMtUpPorts(leaf).front();
  auto r = rig.set(p, false);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(*r, LinkPowerState::kOff);
  EXPECT_EQ(rig.fab.phys(p), PhysState::kDisabled);
  EXPECT_EQ(rig.fab.sets, 1);
  ASSERT_FALSE(rig.cb.changes.empty());
  EXPECT_EQ(rig.cb.changes.back().second, LinkPowerState::kOff);
  // Every switch still answers: no directed route crosses the dead link.
  for (std::uint32_t s = 0; s < tree().numSwitches(); ++s)
    EXPECT_TRUE(rig.backend->reachable(SwitchId(s)));
  // Back on: Polling at the same end, LinkUp after training, both ends told.
  rig.fab.trainAfter = 3;
  rig.cb.changes.clear();
  r = rig.set(p, true);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(*r, LinkPowerState::kTurningOn);
  EXPECT_EQ(rig.fab.phys(p), PhysState::kLinkUp);
  EXPECT_TRUE(rig.backend->linkStates().isFullyOn(tree().sw(p.sw).ports[p.index].link));
  EXPECT_EQ(rig.cb.changes.size(), 2u);
  EXPECT_TRUE(rig.backend->disabledLinks().empty());
}

TEST(IbBackend, DryRunAndReadOnlySwitchesSendNoSet) {
  IbBackendOptions o = Rig::allowAll();
  o.dryRun = true;
  Rig dry(o);
  ASSERT_TRUE(dry.init().isOk());
  const PortId p = nonMtUpPorts(tree().switchesAtLevel(2).front()).front();
  auto r = dry.set(p, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, LinkPowerState::kOff);
  EXPECT_EQ(dry.mad->setsTransmitted(), 0u);
  EXPECT_EQ(dry.backend->stats().setsSuppressed, 1u);

  // Ports that do not exist: refused by name, nothing sent.
  for (const PortId bad : {PortId{p.sw, 200}, PortId{SwitchId(9999), 0}}) {
    auto e = dry.set(bad, false);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(e.status().message().find("not in the topology"), std::string::npos);
  }
  EXPECT_EQ(dry.mad->setsTransmitted(), 0u);

  IbBackendOptions none = Rig::allowAll();
  none.allowGuids.clear();
  Rig ro(none);
  ASSERT_TRUE(ro.init().isOk());
  r = ro.set(p, false);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(ro.mad->setsTransmitted(), 0u);
  EXPECT_TRUE(ro.backend->linkStates().isFullyOn(tree().sw(p.sw).ports[p.index].link));
}

// A level-1 switch off the minimal tree loses every link: its last one is
// set from the far end. Turning one of its links back on first re-enables
// that gateway, then the link itself at the end that was disabled.
// A level-1 switch off the minimal tree, and the ports that gate all its
// links in turn: its leaves' links to it (ascending), then its own up links.
std::pair<SwitchId, std::vector<PortId>> offTreeMiddleSwitch() {
  const auto mt = fabric::MinimalTree::build(tree()).value();
  SwitchId mid = tree().switchesAtLevel(1).front();
  for (SwitchId s : tree().switchesAtLevel(1)) {
    if (!mt.containsSwitch(s)) mid = s;
  }
  std::vector<PortId> order;
  for (std::uint16_t d : tree().sw(mid).downPorts)
    order.push_back(tree().link(tree().sw(mid).ports[d].link).lower);
  for (std::uint16_t u : tree().sw(mid).upPorts)
    order.push_back({mid, u});
  return {mid, order};
}

TEST(IbBackend, ADarkSwitchComesBackThroughItsGatewayLink) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  rig.fab.trainAfter = 2;
  const auto [mid, order] = offTreeMiddleSwitch();
  ASSERT_FALSE(fabric::MinimalTree::build(tree()).value().containsSwitch(mid));
  for (const PortId& p : order) {
    auto r = rig.set(p, false);
    ASSERT_TRUE(r) << tree().describePort(p) << ": " << r.status().toString();
  }
  EXPECT_FALSE(rig.backend->reachable(mid));
  // The last link went down from its upper end: the only end still reachable.
  const PortId last = order.back();
  const PortId lastUpper = tree().link(tree().sw(mid).ports[last.index].link).upper;
  EXPECT_EQ(rig.fab.phys(lastUpper), PhysState::kDisabled);
  EXPECT_EQ(rig.fab.phys(last), PhysState::kLinkUp);
  // A leaf turns its link to the dark switch back on: disabled at the dark end.
  const PortId leafUp = order.front();
  auto r = rig.set(leafUp, true);
  ASSERT_TRUE(r) << r.status().toString();
  rig.sched.runUntil(rig.sched.now() + 2000 * kMs);
  EXPECT_TRUE(rig.backend->reachable(mid));
  EXPECT_TRUE(rig.backend->linkStates().isFullyOn(tree().sw(leafUp.sw).ports[leafUp.index].link));
  // restoreAll brings back everything else, in waves.
  Status restored(ErrorCode::kInternal, "not done");
  rig.backend->restoreAll([&](Status s) { restored = s; });
  rig.sched.runUntil(rig.sched.now() + 5000 * kMs);
  EXPECT_TRUE(restored.isOk()) << restored.toString();
  EXPECT_TRUE(rig.backend->disabledLinks().empty());
  for (const PortId& p : order) {
    const PortId up = tree().link(tree().sw(p.sw).ports[p.index].link).upper;
    EXPECT_EQ(rig.fab.phys(p), PhysState::kLinkUp) << tree().describePort(p);
    EXPECT_EQ(rig.fab.phys(up), PhysState::kLinkUp) << tree().describePort(up);
  }
}

// SIGTERM while a turn-on waits for its dark end to come into reach: the
// restore's waves and the turn-on both bring the link back, but one Polling
// Set goes to each port (a second, landing on a trained link, would take it
// down again: ibsim does, hardware retrains).
TEST(IbBackend, ARestoreDuringATurnOnSendsOnePollingSetPerPort) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  rig.fab.trainAfter = 2;
  const auto [mid, order] = offTreeMiddleSwitch();
  for (const PortId& p : order)
    ASSERT_TRUE(rig.set(p, false)) << tree().describePort(p);
  ASSERT_FALSE(rig.backend->reachable(mid));
  rig.fab.pollingSets.clear();
  // A turn-on of the dark switch's own up link (gated at it), then at once
  // the stop's restore.
  const PortId own = {mid, tree().sw(mid).upPorts.front()};
  rig.backend->applyLinkState(own, true, [](Result<LinkPowerState>) {});
  Status restored(ErrorCode::kInternal, "not done");
  rig.backend->restoreAll([&](Status s) { restored = s; });
  rig.sched.runUntil(rig.sched.now() + 5000 * kMs);
  EXPECT_TRUE(restored.isOk()) << restored.toString();
  for (const auto& [port, n] : rig.fab.pollingSets) {
    EXPECT_EQ(n, 1) << tree().describePort(
        {SwitchId(port.first), static_cast<std::uint16_t>(port.second)});
  }
  for (const PortId& p : order) {
    const PortId up = tree().link(tree().sw(p.sw).ports[p.index].link).upper;
    EXPECT_EQ(rig.fab.phys(p), PhysState::kLinkUp) << tree().describePort(p);
    EXPECT_EQ(rig.fab.phys(up), PhysState::kLinkUp) << tree().describePort(up);
  }
}

// A recovery's turn-on while the stop's restore has that link's Polling Set
// on the wire (a real subnet takes its time): nothing more is sent. A probe
// on ibsim saw the late duplicate land on the trained link, take it down and
// leave 8 of 16 hosts cut off.
TEST(IbBackend, ATurnOnWhileTheRestoresSetIsOnTheWireSendsNothingMore) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  const PortId p = nonMtUpPorts(tree().switchesAtLevel(tree().depth() - 1).front()).front();
  ASSERT_TRUE(rig.set(p, false));
  rig.fab.pollingSets.clear();
  rig.holdIf = [](const MadAddress&, const MadBytes& m) {
    auto* raw = const_cast<std::uint8_t*>(m.data());
    return mad_get_field(raw, 0, IB_MAD_METHOD_F) == static_cast<std::uint32_t>(Method::kSet);
  };
  Status restored(ErrorCode::kInternal, "not done");
  rig.backend->restoreAll([&](Status s) { restored = s; });
  rig.sched.runUntil(rig.sched.now() + 1 * kMs);
  ASSERT_EQ(rig.held.size(), 1u) << "the restore's Set was not sent";
  Result<LinkPowerState> on = Status(ErrorCode::kInternal, "not done");
  rig.backend->applyLinkState(p, true, [&](Result<LinkPowerState> r) { on = r; });
  rig.sched.runUntil(rig.sched.now() + 20 * kMs);  // two poll periods
  EXPECT_EQ(rig.held.size(), 1u) << "a second Polling Set went out";
  ASSERT_TRUE(on) << on.status().toString();
  EXPECT_EQ(*on, LinkPowerState::kTurningOn);
  rig.holdIf = {};
  rig.release();
  rig.fab.trainAfter = 2;
  rig.sched.runUntil(rig.sched.now() + 2000 * kMs);
  EXPECT_TRUE(restored.isOk()) << restored.toString();
  EXPECT_EQ(rig.fab.pollingSets.size(), 1u);
  for (const auto& [port, n] : rig.fab.pollingSets)
    EXPECT_EQ(n, 1);
  EXPECT_TRUE(rig.backend->linkStates().isFullyOn(tree().sw(p.sw).ports[p.index].link));
}

// A turn-on whose Get reads the port LinkUp (another Set got there first
// and the link trained) sends nothing, and the link counts as up once it
// reads LinkUp: a Polling Set there would take the trained link down.
TEST(IbBackend, APortReadingLinkUpGetsNoPollingSetOnePollingDoes) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  const PortId p = nonMtUpPorts(tree().switchesAtLevel(tree().depth() - 1).front()).front();
  const LinkId l = tree().sw(p.sw).ports[p.index].link;
  ASSERT_TRUE(rig.set(p, false));
  const fabric::Link& L = tree().link(l);
  ASSERT_TRUE(rig.fab.phys(L.lower) == PhysState::kDisabled ||
              rig.fab.phys(L.upper) == PhysState::kDisabled);
  rig.fab.phys(L.lower) = PhysState::kLinkUp;
  rig.fab.phys(L.upper) = PhysState::kLinkUp;
  rig.fab.pollingSets.clear();
  std::vector<PortSetEvent> sets;
  rig.backend->setSetObserver([&](const PortSetEvent& e) { sets.push_back(e); });
  auto r = rig.set(p, true);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_TRUE(rig.fab.pollingSets.empty()) << "a Polling Set on a LinkUp port";
  EXPECT_TRUE(sets.empty()) << "a Set reported that was not sent";
  EXPECT_TRUE(rig.backend->linkStates().isFullyOn(l));
  EXPECT_TRUE(rig.backend->disabledLinks().empty());
  // A disabled port that reads Polling (its cable unplugged meanwhile, as
  // the ibsim rig does) gets its Set: harmless there, and what brings it back.
  ASSERT_TRUE(rig.set(p, false));
  const PortId end = rig.fab.phys(L.lower) == PhysState::kDisabled ? L.lower : L.upper;
  rig.fab.phys(end) = PhysState::kPolling;
  rig.fab.trainAfter = 2;
  r = rig.set(p, true);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(rig.fab.pollingSets[std::make_pair(end.sw.value(), std::uint32_t{end.index})], 1);
  EXPECT_TRUE(rig.backend->linkStates().isFullyOn(l));
}

IbBackendOptions widthMode(bool dryRun = false) {
  IbBackendOptions o = Rig::allowAll();
  o.action = GatingAction::kReduceWidth;
  o.dryRun = dryRun;
  return o;
}

// Width reduction: both ends narrowed to 1x after reading their widths, the
// link stays up (no route changes), and turning it on writes back exactly
// what was read at each end.
TEST(IbBackend, ReducesWidthAtBothEndsAndRestoresTheWidthsItRead) {
  Rig rig(widthMode());
  const PortId p = nonMtUpPorts(tree().switchesAtLevel(2).front()).front();
  const LinkId l = tree().sw(p.sw).ports[p.index].link;
  const PortId upper = tree().link(l).upper;
  rig.fab.widthEnabled(upper) = kWidth1x | kWidth4x | kWidth12x;  // differs from the lower end
  ASSERT_TRUE(rig.init().isOk());
  EXPECT_EQ(rig.fab.widthActive(p), kWidth4x);
  auto r = rig.set(p, false);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(*r, LinkPowerState::kOff);
  EXPECT_EQ(rig.fab.widthEnabled(p), kWidth1x);
  EXPECT_EQ(rig.fab.widthEnabled(upper), kWidth1x);
  EXPECT_EQ(rig.fab.widthActive(p), kWidth1x);
  EXPECT_EQ(rig.fab.phys(p), PhysState::kLinkUp);  // never disabled
  EXPECT_EQ(rig.fab.phys(upper), PhysState::kLinkUp);
  EXPECT_EQ(rig.fab.widthSets, 2);
  EXPECT_EQ(rig.backend->stats().widthReduced, 2u);
  EXPECT_FALSE(rig.backend->linkStates().isFullyOn(l));  // off for the agents
  EXPECT_EQ(rig.backend->gatedLinks().size(), 1u);
  EXPECT_TRUE(rig.backend->disabledLinks().empty());
  for (std::uint32_t s = 0; s < tree().numSwitches(); ++s)
    EXPECT_TRUE(rig.backend->reachable(SwitchId(s)));
  ASSERT_FALSE(rig.cb.changes.empty());
  EXPECT_EQ(rig.cb.changes.back().second, LinkPowerState::kOff);
  // Off again: nothing more to do, nothing sent.
  r = rig.set(p, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(rig.fab.widthSets, 2);

  r = rig.set(p, true);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(*r, LinkPowerState::kOn);
  EXPECT_EQ(rig.fab.widthEnabled(p), kWidth1x | kWidth4x);
  EXPECT_EQ(rig.fab.widthEnabled(upper), kWidth1x | kWidth4x | kWidth12x);
  EXPECT_EQ(rig.fab.widthActive(p), kWidth4x);
  EXPECT_EQ(rig.backend->stats().widthRestored, 2u);
  EXPECT_TRUE(rig.backend->linkStates().isFullyOn(l));
  EXPECT_TRUE(rig.backend->gatedLinks().empty());
  EXPECT_EQ(rig.cb.changes.back().second, LinkPowerState::kOn);
}

// Only the lower switch allow-listed: only its end is narrowed; the link
// trains to the widest width both ends enable, 1x.
TEST(IbBackend, ReducesOnlyTheEndsItMaySet) {
  const PortId p = nonMtUpPorts(tree().switchesAtLevel(2).front()).front();
  const PortId upper = tree().link(tree().sw(p.sw).ports[p.index].link).upper;
  IbBackendOptions o = widthMode();
  o.allowGuids = {tree().sw(p.sw).guid};
  Rig rig(o);
  ASSERT_TRUE(rig.init().isOk());
  auto r = rig.set(p, false);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(rig.fab.widthEnabled(p), kWidth1x);
  EXPECT_EQ(rig.fab.widthEnabled(upper), kWidth1x | kWidth4x);
  EXPECT_EQ(rig.fab.widthActive(upper), kWidth1x);
  EXPECT_EQ(rig.fab.widthSets, 1);
}

// State from the fabric: a link found at 1x while it supports more counts as
// reduced (off); it is restored to its far end's width, or to
// LinkWidthSupported when both ends were reduced. The disable mode ignores widths.
TEST(IbBackend, FindsReducedLinksAtStartAndInfersTheirWidth) {
  const auto ports = nonMtUpPorts(tree().switchesAtLevel(2).front());
  ASSERT_GE(ports.size(), 1u);
  const PortId oneEnd = ports.front();
  const LinkId l1 = tree().sw(oneEnd.sw).ports[oneEnd.index].link;
  const PortId mid = nonMtUpPorts(tree().switchesAtLevel(1).back()).front();
  const LinkId l2 = tree().sw(mid.sw).ports[mid.index].link;
  auto prepare = [&](Rig& rig) {
    rig.fab.widthEnabled(oneEnd) = kWidth1x;
    rig.fab.widthEnabled(mid) = kWidth1x;
    rig.fab.widthEnabled(tree().link(l2).upper) = kWidth1x;
  };
  Rig disable;
  prepare(disable);
  ASSERT_TRUE(disable.init().isOk());
  EXPECT_TRUE(disable.backend->linkStates().isFullyOn(l1));
  EXPECT_TRUE(disable.backend->narrowedLinks().empty());

  Rig rig(widthMode());
  prepare(rig);
  ASSERT_TRUE(rig.init().isOk());
  EXPECT_FALSE(rig.backend->linkStates().isFullyOn(l1));
  EXPECT_FALSE(rig.backend->linkStates().isFullyOn(l2));
  EXPECT_EQ(rig.backend->narrowedLinks().size(), 2u);
  EXPECT_TRUE(rig.backend->gatedLinks().empty()) << "found reduced: not this run's to restore";
  auto r = rig.set(oneEnd, true);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(rig.fab.widthEnabled(oneEnd), kWidth1x | kWidth4x);  // the far end's
  r = rig.set(mid, true);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(rig.fab.widthEnabled(mid), rig.fab.widthSupported);
  EXPECT_EQ(rig.fab.widthEnabled(tree().link(l2).upper), rig.fab.widthSupported);
  EXPECT_TRUE(rig.backend->linkStates().isFullyOn(l1));
  EXPECT_TRUE(rig.backend->linkStates().isFullyOn(l2));
}

// Dry run sends no width Set; restoreAll (fail-safe exit, SIGTERM) writes back
// every width this run reduced.
TEST(IbBackend, WidthDryRunSendsNothingAndRestoreAllBringsWidthsBack) {
  Rig dry(widthMode(true));
  ASSERT_TRUE(dry.init().isOk());
  const auto ports = nonMtUpPorts(tree().switchesAtLevel(2).front());
  auto r = dry.set(ports.front(), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, LinkPowerState::kOff);
  EXPECT_EQ(dry.mad->setsTransmitted(), 0u);
  EXPECT_EQ(dry.backend->stats().setsSuppressed, 1u);

  Rig rig(widthMode());
  ASSERT_TRUE(rig.init().isOk());
  std::vector<PortId> narrowed;
  for (SwitchId leaf : tree().switchesAtLevel(2)) {
    const PortId p = nonMtUpPorts(leaf).front();
    ASSERT_TRUE(rig.set(p, false));
    narrowed.push_back(p);
  }
  EXPECT_EQ(rig.backend->gatedLinks().size(), narrowed.size());
  std::vector<LinkId> told;
  Status restored(ErrorCode::kInternal, "not done");
  rig.backend->restoreAll([&](Status s) { restored = s; },
                          [&](LinkId l, PortId) { told.push_back(l); });
  rig.sched.runUntil(rig.sched.now() + 2000 * kMs);
  EXPECT_TRUE(restored.isOk()) << restored.toString();
  EXPECT_EQ(told.size(), narrowed.size());
  EXPECT_TRUE(rig.backend->gatedLinks().empty());
  for (const PortId& p : narrowed) {
    EXPECT_EQ(rig.fab.widthEnabled(p), kWidth1x | kWidth4x) << tree().describePort(p);
    EXPECT_EQ(rig.fab.widthActive(p), kWidth4x) << tree().describePort(p);
  }
}

// An OpenSM event makes the backend re-read a switch: what changed without
// ebb is taken in and told to the agents; what ebb did itself is not a change.
TEST(IbBackend, ReReadingASwitchTakesInWhatChangedWithoutEbb) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  const SwitchId leaf = tree().switchesAtLevel(2).front();
  const auto ports = nonMtUpPorts(leaf);
  ASSERT_GE(ports.size(), 1u);
  const PortId p = ports.front();
  const LinkId l = tree().sw(p.sw).ports[p.index].link;
  // Nothing changed: nothing reported.
  auto r = reread(rig, leaf);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_TRUE(r->empty());
  // A cable pulled (both ends leave LinkUp): down, agents told.
  rig.fab.phys(p) = PhysState::kPolling;
  rig.fab.phys(tree().link(l).upper) = PhysState::kPolling;
  r = reread(rig, leaf);
  ASSERT_TRUE(r) << r.status().toString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(r->front().port, p);
  EXPECT_EQ(r->front().what, "Polling");
  EXPECT_FALSE(rig.backend->linkStates().isFullyOn(l));
  ASSERT_FALSE(rig.cb.changes.empty());
  EXPECT_EQ(rig.cb.changes.back().second, LinkPowerState::kOff);
  // Back: up again.
  rig.fab.phys(p) = PhysState::kLinkUp;
  rig.fab.phys(tree().link(l).upper) = PhysState::kLinkUp;
  r = reread(rig, leaf);
  ASSERT_TRUE(r) << r.status().toString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(r->front().what, "LinkUp");
  EXPECT_TRUE(rig.backend->linkStates().isFullyOn(l));
  // A link ebb disabled reads Disabled: not a change.
  ASSERT_TRUE(rig.set(p, false));
  r = reread(rig, leaf);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_TRUE(r->empty());
  // ebb enables it; before its next poll the link trains and a trap comes:
  // on at once.
  IbBackendOptions slow = Rig::allowAll();
  slow.linkPollPs = 100'000 * kMs;  // the poll would come after 100 s
  Rig rig2(slow);
  ASSERT_TRUE(rig2.init().isOk());
  ASSERT_TRUE(rig2.set(p, false));
  Result<LinkPowerState> on = Status(ErrorCode::kInternal, "not done");
  rig2.backend->applyLinkState(p, true, [&](Result<LinkPowerState> x) { on = x; });
  rig2.sched.runUntil(rig2.sched.now() + 100 * kMs);
  ASSERT_TRUE(on) << on.status().toString();
  EXPECT_EQ(*on, LinkPowerState::kTurningOn);
  EXPECT_FALSE(rig2.backend->linkStates().isFullyOn(l));
  rig2.fab.phys(p) = PhysState::kLinkUp;  // trained
  r = reread(rig2, leaf);
  ASSERT_TRUE(r) << r.status().toString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(r->front().what, "LinkUp");
  EXPECT_TRUE(rig2.backend->linkStates().isFullyOn(l));
  EXPECT_EQ(rig2.backend->stats().portChanges, 1u);
}

// Width mode: a reduced width someone else reset (OpenSM's force_link_width)
// is found on a re-read; the link counts as on again.
TEST(IbBackend, ReReadingFindsAWidthSomeoneElseReset) {
  Rig rig(widthMode());
  ASSERT_TRUE(rig.init().isOk());
  const SwitchId leaf = tree().switchesAtLevel(2).front();
  const PortId p = nonMtUpPorts(leaf).front();
  const LinkId l = tree().sw(p.sw).ports[p.index].link;
  ASSERT_TRUE(rig.set(p, false));
  EXPECT_TRUE(reread(rig, leaf)->empty());
  rig.fab.widthEnabled(p) = rig.fab.widthSupported;  // what 255 does on hardware
  const auto r = reread(rig, leaf);
  ASSERT_TRUE(r) << r.status().toString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_NE(r->front().what.find("reset by someone else"), std::string::npos) << r->front().what;
  EXPECT_TRUE(rig.backend->linkStates().isFullyOn(l));
  EXPECT_TRUE(rig.backend->narrowedLinks().empty());
  EXPECT_EQ(rig.cb.changes.back().second, LinkPowerState::kOn);
  const auto lid = static_cast<std::uint16_t>(leaf.value() + 1);  // FakeFabric: LID = index + 1
  EXPECT_EQ(rig.backend->switchByLid(lid), leaf);
  EXPECT_FALSE(rig.backend->switchByLid(0).has_value());
}

TEST(IbBackend, CountersAreReadHeldOrLost) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  const SwitchId leaf = tree().switchesAtLevel(2).front();
  const std::uint16_t up = tree().sw(leaf).upPorts.front();
  rig.fab.xmitWords({leaf, up}) = 1000;
  std::vector<Result<agent::CounterSample>> got;
  auto read = [&] {
    rig.backend->requestCounters(leaf, [&](Result<agent::CounterSample> r) { got.push_back(r); });
    rig.sched.runUntil(rig.sched.now() + 200 * kMs);
  };
  read();
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0]) << got[0].status().toString();
  EXPECT_FALSE(got[0]->stale);
  bool found = false;
  for (const auto& c : got[0]->ports) {
    if (c.index == up) {
      EXPECT_EQ(c.txBytes, 4000u);  // PortXmitData counts 4-byte words
      found = true;
    }
  }
  EXPECT_TRUE(found);
  // No LID route (the SM's up/down rule): stale samples, then held while the
  // switch answers by directed route.
  rig.fab.pmaBlocked = true;
  for (int i = 0; i < 5; ++i)
    read();
  for (std::size_t i = 1; i < got.size(); ++i) {
    ASSERT_TRUE(got[i]) << i << ": " << got[i].status().toString();
    EXPECT_TRUE(got[i]->stale);
  }
  EXPECT_GE(rig.backend->stats().countersHeld, 1u);
  // Nothing answers at all: contact lost.
  rig.fab.dead = true;
  for (int i = 0; i < 4; ++i)
    read();
  ASSERT_FALSE(got.back());
  EXPECT_EQ(got.back().status().code(), ErrorCode::kTimeout);
  EXPECT_NE(got.back().status().message().find("directed route"), std::string::npos)
      << got.back().status().toString();
}

// No trap: a cable toward a switch fails and its counters stop answering by
// LID. The links toward it are read from their far ends at once, so the
// failed cable reaches the agents as a port down (they re-home) and the
// switch, now out of reach in ebb's view, is held rather than lost.
TEST(IbBackend, FailedCounterReadsFindTheFailedCableFromTheFarEnd) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  const SwitchId leaf = tree().switchesAtLevel(2).back();  // not where H0 attaches
  const PortId up{leaf, tree().sw(leaf).upPorts.front()};
  const LinkId l = tree().sw(leaf).ports[up.index].link;
  const PortId far = tree().link(l).upper;
  rig.fab.phys(up) = PhysState::kPolling;  // the cable is gone: both ends retrain
  rig.fab.phys(far) = PhysState::kPolling;
  rig.fab.pmaBlocked = true;
  std::vector<Result<agent::CounterSample>> got;
  rig.backend->requestCounters(leaf, [&](Result<agent::CounterSample> r) { got.push_back(r); });
  rig.sched.runUntil(rig.sched.now() + 200 * kMs);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0]) << got[0].status().toString();
  EXPECT_TRUE(got[0]->stale);
  // Both switch ends hear the port down; the link reads off.
  ASSERT_EQ(rig.cb.down.size(), 2u);
  EXPECT_TRUE((rig.cb.down[0] == up && rig.cb.down[1] == far) ||
              (rig.cb.down[0] == far && rig.cb.down[1] == up));
  EXPECT_FALSE(rig.backend->linkStates().isFullyOn(l));
  // A failed read of a switch whose cables are fine finds nothing.
  const SwitchId other = tree().switchesAtLevel(2).front();
  rig.backend->requestCounters(other, [&](Result<agent::CounterSample> r) { got.push_back(r); });
  rig.sched.runUntil(rig.sched.now() + 200 * kMs);
  EXPECT_EQ(rig.cb.down.size(), 2u);
}

// A Set that fails because a cable on its route failed unseen: the links
// along the route are read from their far ends, and the cable is a fault.
TEST(IbBackend, AFailedSetFindsTheFailedCableOnItsRoute) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  const SwitchId attach = *rig.backend->attachSwitch();
  const PortId attachUp{attach, tree().sw(attach).upPorts.front()};
  const LinkId cable = tree().sw(attach).ports[attachUp.index].link;
  const PortId far = tree().link(cable).upper;
  const SwitchId middle = far.sw;  // reached through `cable`
  rig.fab.phys(attachUp) = PhysState::kPolling;
  rig.fab.phys(far) = PhysState::kPolling;
  // Turning off one of the middle switch's up links: its Set takes the dead route.
  const PortId target{middle, tree().sw(middle).upPorts.back()};
  const auto r = rig.set(target, false);
  ASSERT_FALSE(r);
  ASSERT_EQ(rig.cb.down.size(), 2u) << r.status().toString();
  EXPECT_TRUE((rig.cb.down[0] == attachUp && rig.cb.down[1] == far) ||
              (rig.cb.down[0] == far && rig.cb.down[1] == attachUp));
  EXPECT_FALSE(rig.backend->linkStates().isFullyOn(cable));
  // The route is recomputed around it: the middle switch is reachable again.
  EXPECT_TRUE(rig.backend->reachable(middle));
}

}  // namespace
}  // namespace ebb::ib
