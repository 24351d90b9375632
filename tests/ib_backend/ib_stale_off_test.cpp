// A turn-off overtaken by a turn-on (docs/ib_agent.md, *Fail safe*): the
// Disabled Set is held on its way (its end about to fail, or slow), a
// recovery turns the link on meanwhile (Polling at the other end, if it reads
// Disabled; nothing while it still reads LinkUp), then the held Set lands. The link must not stay
// Disabled at that end while ebb believes it is coming up: the Set is not sent once superseded, or,
// if it landed, that end is set Polling again at once.
#include <infiniband/mad.h>

#include <gtest/gtest.h>

#include <optional>

#include "tests/ib_backend/ib_rig.h"

namespace ebb::ib {
namespace {

using agent::LinkPowerState;
using fabric::LinkId;
using fabric::PortId;
using testing::kMs;
using testing::nonMtUpPorts;
using testing::Rig;
using testing::tree;

bool isSet(const MadBytes& m) {
  auto* raw = const_cast<std::uint8_t*>(m.data());
  return mad_get_field(raw, 0, IB_MAD_METHOD_F) == static_cast<std::uint32_t>(Method::kSet);
}

PhysState physWritten(const MadBytes& m) {
  auto* raw = const_cast<std::uint8_t*>(m.data());
  return static_cast<PhysState>(mad_get_field(raw + 64, 0, IB_PORT_PHYS_STATE_F));
}

struct Race {
  Rig rig;
  PortId lowerPort;  // the leaf's up port: the agent's handle on the link
  LinkId link;
  fabric::Link L;
  Result<LinkPowerState> off = Status(ErrorCode::kInternal, "not done");
  Result<LinkPowerState> on = Status(ErrorCode::kInternal, "not done");
  std::vector<PortSetEvent> sets;

  Race() {
    EXPECT_TRUE(rig.init().isOk());
    lowerPort = nonMtUpPorts(tree().switchesAtLevel(tree().depth() - 1).at(2)).front();
    link = tree().sw(lowerPort.sw).ports[lowerPort.index].link;
    L = tree().link(link);
    // The turn-off is chosen at the upper end (as the safety guard may);
    // a turn-on before that Set landed knows no disabled end and turns to
    // the lower one (which still reads LinkUp).
    rig.backend->setGateChooser([this](LinkId x) -> std::optional<PortId> {
      if (x == link) return L.upper;
      return std::nullopt;
    });
    rig.backend->setSetObserver([this](const PortSetEvent& e) { sets.push_back(e); });
  }
  void turnOffThenOn() {
    rig.backend->applyLinkState(lowerPort, false, [this](auto r) { off = r; });
    rig.sched.runUntil(rig.sched.now() + 1 * kMs);
    ASSERT_EQ(rig.held.size(), 1u) << "the MAD to hold was not sent";
    rig.backend->applyLinkState(lowerPort, true, [this](auto r) { on = r; });
    rig.sched.runUntil(rig.sched.now() + 1 * kMs);
    ASSERT_TRUE(on) << on.status().toString();
    EXPECT_EQ(*on, LinkPowerState::kTurningOn);
    // The lower end still reads LinkUp (the Disabled has not landed): the
    // turn-on sends it nothing, as a Polling Set would take the link down.
    EXPECT_EQ(rig.fab.phys(L.lower), PhysState::kLinkUp);
    EXPECT_EQ(rig.fab.pollingSets.count({L.lower.sw.value(), L.lower.index}), 0u);
    rig.holdIf = {};
    rig.release();
    rig.fab.trainAfter = 3;  // both ends train once neither is Disabled
    rig.sched.runUntil(rig.sched.now() + 2000 * kMs);
  }
  void expectBackUp() {
    // The fake fabric trains a Polling port after so many MADs (any): a
    // few more, as time would, once ebb has stopped reading.
    auto answer = rig.fab.responder();
    for (int i = 0; i < 3; ++i)
      (void)answer(MadAddress{}, MadBytes{});
    EXPECT_NE(rig.fab.phys(L.upper), PhysState::kDisabled) << "the stale turn-off stuck";
    EXPECT_TRUE(rig.fab.linkUp(link));
    EXPECT_TRUE(rig.backend->disabledLinks().empty()) << "counted as disabled by ebb";
    EXPECT_TRUE(rig.backend->linkStates().isFullyOn(link));
    EXPECT_TRUE(rig.backend->pendingReenables().empty());
    ASSERT_FALSE(off) << "the superseded turn-off reported applied";
    EXPECT_EQ(off.status().code(), ErrorCode::kUnavailable);  // the agent: "not applied"
    EXPECT_NE(off.status().message().find("superseded"), std::string::npos)
        << off.status().message();
  }
};

TEST(IbStaleOff, ADisabledSetThatLandsAfterATurnOnIsUndoneAtOnce) {
  Race race;
  Rig& rig = race.rig;
  rig.holdIf = [&](const MadAddress&, const MadBytes& m) {
    return isSet(m) && physWritten(m) == PhysState::kDisabled;
  };
  race.turnOffThenOn();
  race.expectBackUp();
  EXPECT_EQ(rig.backend->stats().staleDisablesUndone, 1u);
  // The audit log saw the Disabled that landed and the Polling that undid it.
  ASSERT_EQ(race.sets.size(), 2u);
  EXPECT_EQ(race.sets.front().phys, PhysState::kDisabled);
  EXPECT_EQ(race.sets.back().port, race.L.upper);
  EXPECT_EQ(race.sets.back().phys, PhysState::kPolling);
}

TEST(IbStaleOff, ATurnOffSupersededBeforeItsSetWentIsNotSent) {
  Race race;
  Rig& rig = race.rig;
  // Hold the turn-off's first MAD (the Get before its Set).
  rig.holdIf = [&](const MadAddress&, const MadBytes&) { return rig.held.empty(); };
  race.turnOffThenOn();
  race.expectBackUp();
  for (const PortSetEvent& e : race.sets) {
    EXPECT_NE(e.phys, PhysState::kDisabled) << "a superseded Disabled Set was sent";
  }
  EXPECT_NE(race.off.status().message().find("not sent"), std::string::npos)
      << race.off.status().message();
}

// The end that received the stale Disabled goes dark before it can be set
// Polling again: the link is held as disabled there (never as coming up) and
// re-enabled as a re-enable not delivered, once that switch answers again.
TEST(IbStaleOff, AStaleDisableThatCannotBeUndoneIsHeldAsDisabledAndReenabled) {
  Race race;
  Rig& rig = race.rig;
  bool upperDark = false;
  rig.holdIf = [&](const MadAddress&, const MadBytes& m) {
    return upperDark || (isSet(m) && physWritten(m) == PhysState::kDisabled);
  };
  rig.backend->applyLinkState(race.lowerPort, false, [&](auto r) { race.off = r; });
  rig.sched.runUntil(rig.sched.now() + 1 * kMs);
  ASSERT_EQ(rig.held.size(), 1u);
  rig.backend->applyLinkState(race.lowerPort, true, [&](auto r) { race.on = r; });
  rig.sched.runUntil(rig.sched.now() + 1 * kMs);
  ASSERT_TRUE(race.on);
  rig.release();     // the Disabled lands at the upper end...
  upperDark = true;  // ...and from now on nothing gets an answer
  rig.sched.runUntil(rig.sched.now() + 400 * kMs);
  EXPECT_EQ(rig.fab.phys(race.L.upper), PhysState::kDisabled);
  EXPECT_EQ(rig.backend->disabledLinks(), std::vector<LinkId>{race.link})
      << "a link Disabled at one end counted as coming up";
  EXPECT_FALSE(rig.backend->linkStates().isFullyOn(race.link));
  EXPECT_EQ(rig.backend->pendingReenables(), std::vector<LinkId>{race.link});
  ASSERT_TRUE(race.off);  // it is off (held down by ebb until re-enabled)
  EXPECT_EQ(*race.off, LinkPowerState::kOff);
  // Contact returns: the pending re-enable goes out and the link trains.
  upperDark = false;
  rig.held.clear();
  rig.fab.trainAfter = 3;
  rig.sched.runUntil(rig.sched.now() + 10'000 * kMs);
  EXPECT_EQ(rig.fab.phys(race.L.upper), PhysState::kLinkUp);
  EXPECT_TRUE(rig.fab.linkUp(race.link));
  EXPECT_TRUE(rig.backend->disabledLinks().empty());
  EXPECT_TRUE(rig.backend->pendingReenables().empty());
  EXPECT_TRUE(rig.backend->linkStates().isFullyOn(race.link));
}

// A recovery's turn-on, then another for the same link before it trained (a
// second re-homing, a fail-safe): one Polling Set, not two.
TEST(IbStaleOff, TwoTurnOnsOfOneLinkSendOnePollingSet) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  const PortId p = nonMtUpPorts(tree().switchesAtLevel(tree().depth() - 1).at(1)).front();
  ASSERT_TRUE(rig.set(p, false));
  std::vector<PortSetEvent> sets;
  rig.backend->setSetObserver([&](const PortSetEvent& e) { sets.push_back(e); });
  Result<LinkPowerState> first = Status(ErrorCode::kInternal, "not done");
  Result<LinkPowerState> second = first, third = first;
  rig.backend->applyLinkState(p, true, [&](auto r) { first = r; });
  rig.backend->applyLinkState(p, true, [&](auto r) { second = r; });  // Set on the wire
  rig.sched.runUntil(rig.sched.now() + 1 * kMs);
  rig.backend->applyLinkState(p, true, [&](auto r) { third = r; });  // waiting for LinkUp
  rig.sched.runUntil(rig.sched.now() + 1 * kMs);
  for (const auto* r : {&first, &second, &third}) {
    ASSERT_TRUE(*r) << r->status().toString();
    EXPECT_EQ(**r, LinkPowerState::kTurningOn);
  }
  EXPECT_EQ(sets.size(), 1u) << "the same Polling Set sent more than once";
  rig.fab.trainAfter = 2;
  rig.sched.runUntil(rig.sched.now() + 500 * kMs);
  EXPECT_TRUE(rig.backend->linkStates().isFullyOn(tree().sw(p.sw).ports[p.index].link));
  EXPECT_EQ(sets.size(), 1u);
}

}  // namespace
}  // namespace ebb::ib
