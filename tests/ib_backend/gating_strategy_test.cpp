// The two gating strategies driven directly over the FakeFabric, and the
// fault events IbBackend raises: a link down or up without ebb, lost contact.
#include <gtest/gtest.h>

#include "ib_backend/gating_disable_port.h"
#include "ib_backend/gating_reduce_width.h"
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

template <class T>
using Out = Result<T>;

Out<LinkPowerState> drive(Rig& rig, GatingStrategy& g, LinkId l, bool on) {
  Out<LinkPowerState> out = Status(ErrorCode::kInternal, "not done");
  auto done = [&](Out<LinkPowerState> r) { out = r; };
  if (on) {
    g.turnOn(l, done);
  } else {
    g.turnOff(l, done);
  }
  rig.sched.runUntil(rig.sched.now() + 2000 * kMs);
  return out;
}

TEST(DisablePortGating, DisablesAtTheLowerEndPollsBackAndRestores) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  DisablePortGating g(*rig.backend);
  const PortId p = nonMtUpPorts(tree().switchesAtLevel(2).front()).front();
  const LinkId l = tree().sw(p.sw).ports[p.index].link;
  EXPECT_FALSE(g.readsOff(l));
  EXPECT_TRUE(g.busy(l).isOk());
  auto r = drive(rig, g, l, false);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(*r, LinkPowerState::kOff);
  EXPECT_TRUE(g.readsOff(l));
  EXPECT_EQ(rig.fab.phys(p), PhysState::kDisabled);
  EXPECT_EQ(rig.fab.phys(tree().link(l).upper), PhysState::kLinkUp);
  EXPECT_EQ(rig.fab.sets, 1);
  EXPECT_EQ(rig.fab.widthSets, 0);
  ASSERT_EQ(rig.backend->disabledLinks().size(), 1u);

  rig.fab.trainAfter = 2;
  r = drive(rig, g, l, true);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(*r, LinkPowerState::kTurningOn);
  EXPECT_EQ(rig.fab.phys(p), PhysState::kLinkUp);
  EXPECT_FALSE(g.readsOff(l));
  EXPECT_TRUE(rig.backend->disabledLinks().empty());

  // restore: every link disabled comes back, then `then` once.
  ASSERT_TRUE(drive(rig, g, l, false));
  auto run = std::make_shared<RestoreRun>();
  run->deadline = rig.sched.now() + 5000 * kMs;
  std::vector<LinkId> told;
  run->onSet = [&](LinkId x, PortId) { told.push_back(x); };
  int thens = 0;
  g.restore(run, [&] { ++thens; });
  rig.sched.runUntil(rig.sched.now() + 5000 * kMs);
  EXPECT_EQ(thens, 1);
  EXPECT_TRUE(run->firstError.isOk()) << run->firstError.toString();
  EXPECT_TRUE(run->gaveUp.isOk()) << run->gaveUp.toString();
  EXPECT_EQ(told, std::vector<LinkId>{l});
  EXPECT_EQ(rig.fab.phys(p), PhysState::kLinkUp);
}

TEST(ReduceWidthGating, NarrowsBothEndsIsBusyMeanwhileAndWidensToWhatItRead) {
  IbBackendOptions o = Rig::allowAll();
  o.action = GatingAction::kReduceWidth;
  Rig rig(o);
  ASSERT_TRUE(rig.init().isOk());
  ReduceWidthGating g(*rig.backend);
  const PortId p = nonMtUpPorts(tree().switchesAtLevel(2).front()).front();
  const LinkId l = tree().sw(p.sw).ports[p.index].link;
  const PortId upper = tree().link(l).upper;
  rig.fab.widthEnabled(upper) = kWidth1x | kWidth4x | kWidth12x;
  EXPECT_FALSE(g.readsOff(l));
  Out<LinkPowerState> out = Status(ErrorCode::kInternal, "not done");
  g.turnOff(l, [&](Out<LinkPowerState> r) { out = r; });
  EXPECT_FALSE(g.busy(l).isOk()) << "a width Set is on the wire";
  rig.sched.runUntil(rig.sched.now() + 2000 * kMs);
  ASSERT_TRUE(out) << out.status().toString();
  EXPECT_EQ(*out, LinkPowerState::kOff);
  EXPECT_TRUE(g.busy(l).isOk());
  EXPECT_TRUE(g.readsOff(l));
  EXPECT_EQ(rig.fab.widthEnabled(p), kWidth1x);
  EXPECT_EQ(rig.fab.widthEnabled(upper), kWidth1x);
  EXPECT_EQ(rig.fab.phys(p), PhysState::kLinkUp);  // the link stays up
  EXPECT_EQ(rig.fab.widthSets, 2);

  // Someone resets one end: a re-read's takeIn reports it and the link is on.
  rig.fab.widthEnabled(p) = rig.fab.widthSupported;
  PortInfo pi;
  pi.phys = PhysState::kLinkUp;
  pi.widthEnabled = rig.fab.widthSupported;
  const auto change = g.takeIn(p, pi);
  ASSERT_TRUE(change.has_value());
  EXPECT_NE(change->what.find("reset by someone else"), std::string::npos);
  EXPECT_FALSE(g.readsOff(l));
  rig.fab.widthEnabled(p) = kWidth1x | kWidth4x;  // as before both were reduced
  rig.fab.widthEnabled(upper) = kWidth1x | kWidth4x | kWidth12x;

  // Off again, then restore widens to exactly the widths read before.
  ASSERT_TRUE(drive(rig, g, l, false));
  auto run = std::make_shared<RestoreRun>();
  int thens = 0;
  g.restore(run, [&] { ++thens; });
  rig.sched.runUntil(rig.sched.now() + 2000 * kMs);
  EXPECT_EQ(thens, 1);
  EXPECT_TRUE(run->firstError.isOk()) << run->firstError.toString();
  EXPECT_FALSE(g.readsOff(l));
  EXPECT_EQ(rig.fab.widthEnabled(p), kWidth1x | kWidth4x);
  EXPECT_EQ(rig.fab.widthEnabled(upper), kWidth1x | kWidth4x | kWidth12x);
}

// A re-read that finds a link down without ebb raises onPortDown at both of
// its switch ends; back up, onPortUp. What ebb does itself raises neither.
TEST(IbBackendEvents, AReReadThatFindsALinkDownRaisesPortDownAtBothEnds) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  const SwitchId leaf = tree().switchesAtLevel(2).front();
  const PortId p = nonMtUpPorts(leaf).front();
  const LinkId l = tree().sw(p.sw).ports[p.index].link;
  const PortId upper = tree().link(l).upper;
  rig.fab.phys(p) = PhysState::kPolling;
  rig.fab.phys(upper) = PhysState::kPolling;
  ASSERT_TRUE(reread(rig, leaf));
  EXPECT_EQ(rig.cb.down, (std::vector<PortId>{p, upper}));
  EXPECT_TRUE(rig.cb.up.empty());
  rig.fab.phys(p) = PhysState::kLinkUp;
  rig.fab.phys(upper) = PhysState::kLinkUp;
  ASSERT_TRUE(reread(rig, leaf));
  EXPECT_EQ(rig.cb.up, (std::vector<PortId>{p, upper}));

  // ebb disables and re-enables: no fault events.
  rig.fab.trainAfter = 2;
  ASSERT_TRUE(rig.set(p, false));
  ASSERT_TRUE(reread(rig, leaf));
  ASSERT_TRUE(rig.set(p, true));
  ASSERT_TRUE(reread(rig, leaf));
  EXPECT_EQ(rig.cb.down.size(), 2u);
  EXPECT_EQ(rig.cb.up.size(), 2u);
  EXPECT_TRUE(rig.cb.errors.empty());
}

// Counters that fail by LID and by directed route: if the attach switch
// still answers, only that switch is lost (no backend error); if nothing
// answers, contact with the fabric is lost: onBackendError, once.
TEST(IbBackendEvents, LostContactRaisesBackendErrorOnce) {
  IbBackendOptions o = Rig::allowAll();
  Rig rig(o);
  ASSERT_TRUE(rig.init().isOk());
  const SwitchId attach = *rig.backend->attachSwitch();
  SwitchId other = attach;
  for (SwitchId s : tree().switchesAtLevel(2)) {
    if (s != attach) other = s;
  }
  ASSERT_NE(other, attach);
  auto read = [&](SwitchId s) {
    Result<agent::CounterSample> out = Status(ErrorCode::kInternal, "not done");
    rig.backend->requestCounters(s, [&](Result<agent::CounterSample> r) { out = r; });
    rig.sched.runUntil(rig.sched.now() + 200 * kMs);
    return out;
  };
  // `other` drops off the fabric behind ebb's back: its links are down.
  rig.fab.pmaBlocked = true;
  for (const fabric::Port& port : tree().sw(other).ports) {
    if (port.role == fabric::PortRole::kUnused) continue;
    const fabric::Link& L = tree().link(port.link);
    rig.fab.phys(L.upper) = PhysState::kPolling;
    if (!L.lowerIsHost) rig.fab.phys(L.lower) = PhysState::kPolling;
  }
  // Its cables are read from their far ends: faults (port down at both ends
  // of every switch link), and the switch, out of reach now, is held.
  Result<agent::CounterSample> r = read(other);
  for (int i = 0; i < 5 && r; ++i)
    r = read(other);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_TRUE(r->stale);
  EXPECT_EQ(rig.cb.down.size(), 2 * tree().sw(other).upPorts.size());
  EXPECT_FALSE(rig.backend->reachable(other));
  EXPECT_TRUE(rig.cb.errors.empty()) << "the attach switch still answers";

  rig.fab.dead = true;  // now nothing answers
  r = read(attach);
  for (int i = 0; i < 5 && r; ++i)
    r = read(attach);
  ASSERT_FALSE(r);
  ASSERT_EQ(rig.cb.errors.size(), 1u);
  EXPECT_NE(rig.cb.errors[0].message().find("lost contact with the fabric"), std::string::npos)
      << rig.cb.errors[0].toString();
  r = read(other);
  for (int i = 0; i < 5 && r; ++i)
    r = read(other);
  EXPECT_EQ(rig.cb.errors.size(), 1u) << "raised once";
}

}  // namespace
}  // namespace ebb::ib
