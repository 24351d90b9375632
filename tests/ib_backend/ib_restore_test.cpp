// restoreAll bounded by scheduler time (SIGTERM must end within
// restore_timeout_ms whatever is in flight), and a disabled link counted
// back only once it reads LinkUp.
#include <gtest/gtest.h>

#include <optional>

#include "tests/ib_backend/ib_rig.h"

namespace ebb::ib {
namespace {

using fabric::LinkId;
using fabric::PortId;
using fabric::SwitchId;
using testing::kMs;
using testing::nonMtUpPorts;
using testing::Rig;
using testing::tree;

constexpr TimePs kTimeout = 1000 * kMs;

IbBackendOptions withTimeout() {
  IbBackendOptions o = Rig::allowAll();
  o.restoreTimeoutPs = kTimeout;
  return o;
}

// Two links disabled at their leaves' up ports.
std::vector<PortId> disableTwo(Rig& rig) {
  std::vector<PortId> out;
  const auto& leaves = tree().switchesAtLevel(tree().depth() - 1);
  for (SwitchId leaf : {leaves[0], leaves[1]}) {
    const PortId p = nonMtUpPorts(leaf).front();
    auto r = rig.set(p, false);
    EXPECT_TRUE(r) << r.status().toString();
    EXPECT_EQ(rig.fab.phys(p), PhysState::kDisabled);
    out.push_back(p);
  }
  return out;
}

struct Outcome {
  std::optional<Status> status;
  TimePs at = -1;
};

Outcome restore(Rig& rig, TimePs runFor) {
  Outcome o;
  rig.backend->restoreAll([&](Status s) {
    o.status = s;
    o.at = rig.sched.now();
  });
  rig.sched.runUntil(rig.sched.now() + runFor);
  return o;
}

// Links set Polling that never train: restore ends at the timeout exactly,
// naming every link and why.
TEST(IbRestore, LinksThatNeverComeUpEndTheRestoreAtTheTimeoutWithTheList) {
  Rig rig(withTimeout());
  ASSERT_TRUE(rig.init().isOk());
  const std::vector<PortId> ports = disableTwo(rig);
  rig.fab.trainAfter = 0;  // never LinkUp
  const TimePs start = rig.sched.now();
  const Outcome o = restore(rig, 5 * kTimeout);
  ASSERT_TRUE(o.status.has_value()) << "restore never ended";
  EXPECT_EQ(o.at, start + kTimeout);
  ASSERT_FALSE(o.status->isOk());
  const std::string& m = o.status->message();
  EXPECT_NE(m.find("2 links not back up after 1 s"), std::string::npos) << m;
  for (const PortId& p : ports) {
    EXPECT_EQ(rig.fab.phys(p), PhysState::kPolling);
    const LinkId l = tree().sw(p.sw).ports[p.index].link;
    EXPECT_NE(m.find(tree().describeLink(l) + ": set Polling at " + tree().describePort(p) +
                     ", no LinkUp"),
              std::string::npos)
        << m;
  }
}

// The fabric stops answering with Sets on the wire: the restore still ends
// at the timeout, naming the links whose Set was never answered.
TEST(IbRestore, AFabricThatStopsAnsweringEndsTheRestoreAtTheTimeout) {
  IbBackendOptions o = withTimeout();
  o.restoreTimeoutPs = 130 * kMs;  // inside the second attempt of the first Sets
  Rig rig(o);
  ASSERT_TRUE(rig.init().isOk());
  const std::vector<PortId> ports = disableTwo(rig);
  rig.fab.dead = true;
  const TimePs start = rig.sched.now();
  const Outcome out = restore(rig, 5 * kTimeout);
  ASSERT_TRUE(out.status.has_value()) << "restore never ended";
  EXPECT_EQ(out.at, start + o.restoreTimeoutPs);
  ASSERT_FALSE(out.status->isOk());
  const std::string& m = out.status->message();
  EXPECT_NE(m.find("2 links not back up after 0.13 s"), std::string::npos) << m;
  for (const PortId& p : ports) {
    const LinkId l = tree().sw(p.sw).ports[p.index].link;
    EXPECT_NE(m.find(tree().describeLink(l) + ": "), std::string::npos) << m;
  }
  // The first Sets timed out (2 x 50 ms) and were sent again: the reason says so.
  EXPECT_NE(m.find("setting Polling failed"), std::string::npos) << m;
}

// A link that trains late is reported back only once it reads LinkUp.
TEST(IbRestore, ALinkIsBackOnlyOnceItReadsLinkUp) {
  Rig rig(withTimeout());
  ASSERT_TRUE(rig.init().isOk());
  const std::vector<PortId> ports = disableTwo(rig);
  rig.fab.trainAfter = 30;  // MADs after the Polling Set: several polls
  const TimePs start = rig.sched.now();
  Outcome o;
  int polling = 0;
  rig.backend->restoreAll([&](Status s) {
    o.status = s;
    o.at = rig.sched.now();
    for (const PortId& p : ports)
      polling += rig.fab.phys(p) == PhysState::kLinkUp ? 0 : 1;
  });
  rig.sched.runUntil(start + 5 * kTimeout);
  ASSERT_TRUE(o.status.has_value());
  EXPECT_TRUE(o.status->isOk()) << o.status->toString();
  EXPECT_EQ(polling, 0) << "said back while a port was not LinkUp";
  EXPECT_GT(o.at, start + 10 * kMs) << "ended before a single poll";
  EXPECT_LT(o.at, start + kTimeout);
  for (const PortId& p : ports) {
    EXPECT_TRUE(rig.backend->linkStates().isFullyOn(tree().sw(p.sw).ports[p.index].link));
  }
  EXPECT_TRUE(rig.backend->disabledLinks().empty());
}

}  // namespace
}  // namespace ebb::ib
