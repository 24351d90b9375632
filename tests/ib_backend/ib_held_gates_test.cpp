// The gates the backend holds (IbBackend::heldGates), as the daemon's state
// file keeps them: recorded before the Set goes out, a Set refused when they
// cannot be recorded, and taken back by a later run (adoptGates).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tests/ib_backend/ib_rig.h"

namespace ebb::ib {
namespace {

using fabric::LinkId;
using fabric::PortId;
using testing::kMs;
using testing::nonMtUpPorts;
using testing::Rig;
using testing::tree;

PortId leafUpPort(std::size_t leaf) {
  return nonMtUpPorts(tree().switchesAtLevel(tree().depth() - 1).at(leaf)).front();
}

bool holds(const std::vector<HeldGate>& gates, PortId end) {
  return std::any_of(gates.begin(), gates.end(),
                     [&](const HeldGate& g) { return g.end == end && !g.narrowed; });
}

TEST(IbHeldGates, ADisabledPortIsHeldBeforeItsSetReachesTheFabric) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  const PortId p = leafUpPort(0);
  // Each time the record would be written: what it holds, and whether the
  // fabric already reads that port Disabled.
  std::vector<std::pair<bool, bool>> writes;  // (holds p, p reads Disabled)
  rig.backend->setHeldObserver([&] {
    writes.emplace_back(holds(rig.backend->heldGates(), p),
                        rig.fab.phys(p) == PhysState::kDisabled);
    return Status::ok();
  });
  auto off = rig.set(p, false);
  ASSERT_TRUE(off) << off.status().toString();
  ASSERT_EQ(rig.fab.phys(p), PhysState::kDisabled);
  ASSERT_FALSE(writes.empty());
  EXPECT_TRUE(writes.front().first) << "the first write does not hold the port";
  EXPECT_FALSE(writes.front().second) << "written after the Set landed";
  EXPECT_TRUE(holds(rig.backend->heldGates(), p));
  // Turned on (Polling accepted): no longer held.
  auto on = rig.set(p, true);
  ASSERT_TRUE(on) << on.status().toString();
  EXPECT_FALSE(holds(rig.backend->heldGates(), p));
  EXPECT_FALSE(writes.back().first);
}

TEST(IbHeldGates, ATurnOffThatCannotBeRecordedIsNotSent) {
  Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  const PortId p = leafUpPort(1);
  rig.backend->setHeldObserver([] {
    return Status(ErrorCode::kUnavailable, "agent.state_file: cannot write x: disk full");
  });
  const std::uint64_t setsBefore = rig.backend->stats().setsSent;
  auto off = rig.set(p, false);
  ASSERT_FALSE(off);
  EXPECT_NE(off.status().message().find("disk full"), std::string::npos) << off.status().toString();
  EXPECT_NE(rig.fab.phys(p), PhysState::kDisabled);
  EXPECT_EQ(rig.backend->stats().setsSent, setsBefore);
  EXPECT_TRUE(rig.backend->heldGates().empty());
  EXPECT_TRUE(rig.backend->linkStates().isFullyOn(tree().sw(p.sw).ports[p.index].link));
}

// A killed run left a port Disabled: the next run takes back exactly the
// recorded gates the fabric still shows, and restores them on exit.
TEST(IbHeldGates, ALaterRunTakesBackWhatStillReadsDisabledAndRestoresIt) {
  Rig rig;
  const PortId killedRuns = leafUpPort(0), notLanded = leafUpPort(1);
  const LinkId l = tree().sw(killedRuns.sw).ports[killedRuns.index].link;
  const PortId farEnd = tree().link(l).upper;
  rig.fab.phys(killedRuns) = PhysState::kDisabled;
  ASSERT_TRUE(rig.init().isOk());
  EXPECT_TRUE(rig.backend->gatedLinks().empty());
  // The record names the right end of one link, the wrong end of the same
  // link, and a port that reads up: only the first is taken back.
  const std::vector<HeldGate> taken =
      rig.backend->adoptGates({{killedRuns, false, 0}, {farEnd, false, 0}, {notLanded, false, 0}});
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].end, killedRuns);
  EXPECT_EQ(rig.backend->gatedLinks(), std::vector<LinkId>{l});
  EXPECT_TRUE(holds(rig.backend->heldGates(), killedRuns));
  Status restored(ErrorCode::kInternal, "not done");
  rig.fab.trainAfter = 3;
  rig.backend->restoreAll([&](Status s) { restored = s; });
  rig.sched.runUntil(rig.sched.now() + 2000 * kMs);
  EXPECT_TRUE(restored.isOk()) << restored.toString();
  EXPECT_NE(rig.fab.phys(killedRuns), PhysState::kDisabled);
  EXPECT_TRUE(rig.backend->heldGates().empty());
}

// A recorded gate on a switch this run may not Set (off the allow-list now)
// is not taken back; the port still reads Disabled, so the daemon keeps it
// in the file (readsUngated false), while a port that reads up is ungated.
TEST(IbHeldGates, AGateOffTheAllowListIsNotTakenBackNorReadUngated) {
  const PortId killedRuns = leafUpPort(0), upPort = leafUpPort(1);
  IbBackendOptions o = Rig::allowAll();
  o.allowGuids.erase(tree().sw(killedRuns.sw).guid);
  Rig rig(o);
  rig.fab.phys(killedRuns) = PhysState::kDisabled;
  ASSERT_TRUE(rig.init().isOk());
  const HeldGate gate{killedRuns, false, 0};
  EXPECT_TRUE(rig.backend->adoptGates({gate}).empty());
  EXPECT_TRUE(rig.backend->gatedLinks().empty());
  EXPECT_FALSE(rig.backend->readsUngated(gate));
  EXPECT_TRUE(rig.backend->readsUngated({upPort, false, 0}));
  EXPECT_TRUE(rig.backend->readsUngated({upPort, true, 2}));
}

}  // namespace
}  // namespace ebb::ib
