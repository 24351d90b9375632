// The management path's safety, over the scripted subnet in virtual time:
// a re-enable that cannot be delivered (the management path cut) stays
// pending, is retried with backoff and goes out before any turn-off once
// contact returns; a repaired cable whose trap was lost is found by a
// re-probe; the restore on exit reaches a switch such a repair brought back.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

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

IbBackendOptions shortRestore() {
  IbBackendOptions o = Rig::allowAll();
  o.restoreTimeoutPs = 200 * kMs;
  return o;
}

LinkId linkAt(PortId p) {
  return tree().sw(p.sw).ports[p.index].link;
}

// The cable at `p` fails (or is repaired) at both ends, telling no one.
void setCable(Rig& rig, PortId p, PhysState st) {
  const fabric::Link& L = tree().link(linkAt(p));
  rig.fab.phys(L.lower) = st;
  rig.fab.phys(L.upper) = st;
}

SwitchId leafAt(std::size_t i) {
  return tree().switchesAtLevel(tree().depth() - 1).at(i);
}

// Every up cable of `leaf` fails and ebb reads it from the spine end: the
// leaf is cut off. Returns its up ports.
std::vector<PortId> cutOff(Rig& rig, SwitchId leaf) {
  std::vector<PortId> ups;
  for (std::uint16_t u : tree().sw(leaf).upPorts)
    ups.push_back({leaf, u});
  for (const PortId& u : ups) {
    setCable(rig, u, PhysState::kPolling);
    EXPECT_TRUE(testing::reread(rig, tree().link(linkAt(u)).upper.sw));
  }
  return ups;
}

TEST(IbSafety, AReenableNotDeliveredStaysPendingIsRetriedWithBackoffAndGoesOutFirst) {
  Rig rig(shortRestore());
  ASSERT_TRUE(rig.init().isOk());
  std::vector<ReenableEvent> events;
  rig.backend->setReenableObserver([&](const ReenableEvent& e) { events.push_back(e); });
  const std::vector<PortId> ups = nonMtUpPorts(leafAt(2));
  const PortId p = ups.front();
  ASSERT_TRUE(rig.set(p, false));
  ASSERT_EQ(rig.fab.phys(p), PhysState::kDisabled);
  // The management path is cut: nothing answers.
  rig.fab.dead = true;
  const auto on = rig.set(p, true);
  ASSERT_FALSE(on) << "a Set nobody answered reported delivered";
  ASSERT_EQ(rig.backend->pendingReenables(), std::vector<LinkId>{linkAt(p)});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, ReenableEvent::Kind::kPending);
  // Ten seconds cut off: tried again, backing off (10 ms doubling to 5 s:
  // about ten tries, not a thousand), and still pending.
  const std::size_t before = rig.mad->transmitted();
  rig.sched.runUntil(rig.sched.now() + 10'000 * kMs);
  EXPECT_EQ(rig.backend->pendingReenables().size(), 1u);
  EXPECT_GT(rig.mad->transmitted(), before) << "never tried again";
  EXPECT_EQ(events.size(), 1u) << "said once, not per try";
  // Contact returns. A turn-off asked first is refused (the link stays on)
  // and the pending re-enable goes out at once.
  rig.fab.dead = false;
  const PortId other = nonMtUpPorts(leafAt(3)).front();
  Result<LinkPowerState> off = Status(ErrorCode::kInternal, "not done");
  rig.backend->applyLinkState(other, false, [&](Result<LinkPowerState> r) { off = r; });
  rig.sched.runUntil(rig.sched.now() + 50 * kMs);
  ASSERT_FALSE(off);
  EXPECT_EQ(off.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(off.status().message().find("not delivered yet"), std::string::npos)
      << off.status().message();
  EXPECT_EQ(rig.fab.phys(other), PhysState::kLinkUp);
  EXPECT_EQ(rig.fab.phys(p), PhysState::kPolling) << "the pending re-enable did not go out";
  EXPECT_TRUE(rig.backend->pendingReenables().empty());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].kind, ReenableEvent::Kind::kDelivered);
  EXPECT_GE(events[1].pendingPs, 10'000 * kMs);
  EXPECT_GE(events[1].attempts, 5);
  EXPECT_LE(events[1].attempts, 14) << "no backoff";
  // Nothing pending: turn-offs go again.
  EXPECT_TRUE(rig.set(other, false));
  EXPECT_EQ(rig.fab.phys(other), PhysState::kDisabled);
}

// A re-enable still under way (its Set unanswered, its end out of reach)
// is not delivered, before it becomes pending as after: a recovery's
// deadline must not take the link for one turned off again on purpose.
TEST(IbSafety, AReenableUnderWayIsNotDeliveredBeforeItIsPending) {
  Rig rig(shortRestore());
  ASSERT_TRUE(rig.init().isOk());
  const PortId p = nonMtUpPorts(leafAt(2)).front();
  ASSERT_TRUE(rig.set(p, false));
  rig.fab.dead = true;
  bool answered = false;
  rig.backend->applyLinkState(p, true, [&](Result<LinkPowerState>) { answered = true; });
  rig.sched.runUntil(rig.sched.now() + 1 * kMs);
  ASSERT_FALSE(answered);
  EXPECT_TRUE(rig.backend->pendingReenables().empty());
  EXPECT_EQ(rig.backend->reenablesNotDelivered(), std::vector<LinkId>{linkAt(p)});
  rig.sched.runUntil(rig.sched.now() + 1'000 * kMs);
  ASSERT_TRUE(answered);
  EXPECT_EQ(rig.backend->pendingReenables(), std::vector<LinkId>{linkAt(p)});
  EXPECT_EQ(rig.backend->reenablesNotDelivered(), std::vector<LinkId>{linkAt(p)});
  rig.fab.dead = false;
  rig.sched.runUntil(rig.sched.now() + 10'000 * kMs);
  EXPECT_EQ(rig.fab.phys(p), PhysState::kPolling);
  EXPECT_TRUE(rig.backend->reenablesNotDelivered().empty());
}

// A re-enable whose end is on a switch that failures cut off (it may be
// dead) stays pending for that switch but holds no turn-off elsewhere: the
// fabric goes on gating (a dead switch can stay dead for days).
TEST(IbSafety, AReenablePendingAtASwitchCutOffByFailuresHoldsNoOtherTurnOff) {
  Rig rig(shortRestore());
  ASSERT_TRUE(rig.init().isOk());
  const SwitchId leaf = leafAt(2);
  const std::vector<PortId> spares = nonMtUpPorts(leaf);
  ASSERT_FALSE(spares.empty());
  const PortId gated = spares.front();
  ASSERT_TRUE(rig.set(gated, false));
  ASSERT_EQ(rig.fab.phys(gated), PhysState::kDisabled) << "gated at the leaf's own end";
  // Every other up cable of the leaf fails: it is cut off, its gate with it.
  for (std::uint16_t u : tree().sw(leaf).upPorts) {
    const PortId p{leaf, u};
    if (p == gated) continue;
    setCable(rig, p, PhysState::kPolling);
    ASSERT_TRUE(testing::reread(rig, tree().link(linkAt(p)).upper.sw));
  }
  ASSERT_EQ(rig.backend->switchesCutOff(), std::vector<SwitchId>{leaf});
  EXPECT_FALSE(rig.set(gated, true)) << "its end is out of reach";
  ASSERT_EQ(rig.backend->pendingReenables(), std::vector<LinkId>{linkAt(gated)});
  // Elsewhere, gating goes on.
  const PortId other = nonMtUpPorts(leafAt(0)).front();
  auto off = rig.set(other, false);
  ASSERT_TRUE(off) << off.status().toString();
  EXPECT_EQ(rig.fab.phys(other), PhysState::kDisabled);
  EXPECT_EQ(rig.backend->pendingReenables(), std::vector<LinkId>{linkAt(gated)});
  // A cable of the leaf is repaired (a trap's re-read): the leaf is back in
  // reach and its pending re-enable goes at once, not at its backoff.
  rig.sched.runUntil(rig.sched.now() + 3'000 * kMs);  // the backoff is long by now
  PortId repaired = gated;
  for (std::uint16_t u : tree().sw(leaf).upPorts) {
    if (PortId{leaf, u} != gated) repaired = {leaf, u};
  }
  setCable(rig, repaired, PhysState::kLinkUp);
  ASSERT_TRUE(testing::reread(rig, tree().link(linkAt(repaired)).upper.sw));
  ASSERT_TRUE(rig.backend->reachable(leaf));
  rig.sched.runUntil(rig.sched.now() + 20 * kMs);
  EXPECT_EQ(rig.fab.phys(gated), PhysState::kPolling) << "not sent at once";
  EXPECT_TRUE(rig.backend->pendingReenables().empty());
}

// A cable dies with no trap to tell (its switch's traps could not reach the
// SM then): an agent later turns it off. The Get before the Set reads the
// port down: nothing is Set, and the link is taken in as the failure it is
// (both ends' agents hear a port down), not as a gate ebb holds.
TEST(IbSafety, ATurnOffOfACableThatDiedUnseenTakesInTheFailure) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  const PortId p = nonMtUpPorts(leafAt(1)).front();
  const LinkId l = linkAt(p);
  setCable(rig, p, PhysState::kPolling);  // no re-read: ebb still has it up
  ASSERT_TRUE(rig.backend->failedLinks().empty());
  const int setsBefore = rig.fab.sets;
  auto off = rig.set(p, false);
  ASSERT_TRUE(off) << off.status().toString();
  EXPECT_EQ(*off, LinkPowerState::kOff);
  EXPECT_EQ(rig.fab.sets, setsBefore) << "a Disabled Set to a dead cable";
  EXPECT_EQ(rig.backend->failedLinks(), std::vector<LinkId>{l});
  EXPECT_TRUE(rig.backend->disabledLinks().empty()) << "booked as ebb's gate";
  const fabric::Link& L = tree().link(l);
  EXPECT_NE(std::find(rig.cb.down.begin(), rig.cb.down.end(), L.lower), rig.cb.down.end());
  EXPECT_NE(std::find(rig.cb.down.begin(), rig.cb.down.end(), L.upper), rig.cb.down.end());
  EXPECT_EQ(rig.backend->stats().failuresFoundBeforeSet, 1u);
  // A live cable is gated as before.
  const PortId live = nonMtUpPorts(leafAt(3)).front();
  ASSERT_TRUE(rig.set(live, false));
  EXPECT_EQ(rig.fab.phys(live), PhysState::kDisabled);
}

// Both up cables of a leaf fail: it is cut off. They are repaired and no
// trap tells: only a re-probe (from the spine ends, in reach) sees it.
TEST(IbSafety, ARepairNoTrapToldOfIsFoundByAReprobe) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  const SwitchId leaf = leafAt(2);
  const std::vector<PortId> ups = cutOff(rig, leaf);
  ASSERT_FALSE(rig.backend->reachable(leaf));
  EXPECT_EQ(rig.backend->switchesCutOff(), std::vector<SwitchId>{leaf});
  EXPECT_EQ(rig.backend->failedLinkCount(), ups.size());
  // Nothing changed yet: a re-probe finds nothing.
  std::optional<Result<std::vector<PortChange>>> got;
  rig.backend->reprobeFailedLinks([&](Result<std::vector<PortChange>> r) { got = r; });
  rig.sched.runUntil(rig.sched.now() + 100 * kMs);
  ASSERT_TRUE(got && *got);
  EXPECT_TRUE((*got)->empty());
  for (const PortId& u : ups)
    setCable(rig, u, PhysState::kLinkUp);
  const std::size_t upEvents = rig.cb.up.size();
  got.reset();
  rig.backend->reprobeFailedLinks([&](Result<std::vector<PortChange>> r) { got = r; });
  rig.sched.runUntil(rig.sched.now() + 100 * kMs);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->size(), ups.size());
  EXPECT_TRUE(rig.backend->reachable(leaf));
  EXPECT_TRUE(rig.backend->switchesCutOff().empty());
  EXPECT_EQ(rig.backend->failedLinkCount(), 0u);
  EXPECT_EQ(rig.cb.up.size(), upEvents + 2 * ups.size()) << "the agents hear of it (both ends)";
}

// A link disabled at a leaf's end; the leaf's other up cable fails and is
// repaired unseen (no trap), so the leaf reads out of reach. The restore
// on exit re-probes, finds the way and re-enables the link: exit OK.
TEST(IbSafety, TheRestoreReachesASwitchARepairNoTrapToldOfBroughtBack) {
  IbBackendOptions o = Rig::allowAll();
  o.restoreTimeoutPs = 1000 * kMs;
  Rig rig(o);
  ASSERT_TRUE(rig.init().isOk());
  const SwitchId leaf = leafAt(2);
  const PortId gated = nonMtUpPorts(leaf).front();
  ASSERT_TRUE(rig.set(gated, false));
  ASSERT_EQ(rig.fab.phys(gated), PhysState::kDisabled);  // at the leaf's end
  PortId tree0{};
  for (std::uint16_t u : tree().sw(leaf).upPorts) {
    if (u != gated.index) tree0 = {leaf, u};
  }
  setCable(rig, tree0, PhysState::kPolling);
  ASSERT_TRUE(testing::reread(rig, tree().link(linkAt(tree0)).upper.sw));
  ASSERT_FALSE(rig.backend->reachable(leaf));
  setCable(rig, tree0, PhysState::kLinkUp);  // repaired; the trap is lost
  rig.fab.trainAfter = 3;
  std::optional<Status> done;
  rig.backend->restoreAll([&](Status s) { done = s; });
  rig.sched.runUntil(rig.sched.now() + 2000 * kMs);
  ASSERT_TRUE(done.has_value()) << "restore never ended";
  EXPECT_TRUE(done->isOk()) << done->toString();
  EXPECT_EQ(rig.fab.phys(gated), PhysState::kLinkUp);
}

}  // namespace
}  // namespace ebb::ib
