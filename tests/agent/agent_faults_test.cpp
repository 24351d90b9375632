// The agents' side of faults (docs/faults.md): a failed root re-homes the
// minimal tree on another root, every agent and the guard learn it, and once
// the root is repaired and its links are up again the tree moves back.
#include <gtest/gtest.h>

#include "agent/agent_host.h"
#include "agent/virtual_scheduler.h"
#include "fabric/connectivity.h"
#include "fabric/kary_tree.h"
#include "sim_backend/sim_backend.h"

namespace ebb::agent {
namespace {

using fabric::Direction;
using fabric::LinkId;

// What routing may use now, as link states.
fabric::LinkStates usableNow(const fabric::Topology& t, sim::FabricEmulator& emu) {
  fabric::LinkStates s = fabric::LinkStates::allOn(t);
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l)
    for (Direction d : {Direction::kUp, Direction::kDown})
      s.set(LinkId(l), d, emu.usable(LinkId(l), d));
  return s;
}

TEST(AgentFaults, AFailedRootIsReplacedAndTheTreeMovesBackAfterRepair) {
  const fabric::Topology t = fabric::KAryNTree::make(4, 3).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(t).value();
  VirtualScheduler sched;
  sim::EmulatorConfig cfg;
  sim::FabricEmulator emu(t, cfg, sched);
  sim::SimBackend backend(emu);
  AgentConfig acfg;
  std::vector<AgentHost::Recovery> recoveries;
  // Only the tree on (idle fabric), as a replay starts.
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l) {
    if (mt.containsLink(LinkId(l))) continue;
    emu.initDirection(LinkId(l), Direction::kUp, false);
    emu.initDirection(LinkId(l), Direction::kDown, false);
  }
  AgentHost host(t, mt, acfg, backend, sched, fabric::LinkStates::onlyMinimalTree(t, mt), {});
  host.setRecoveryHook([&](const AgentHost::Recovery& r) { recoveries.push_back(r); });
  host.startAll();
  sched.runUntil(3 * acfg.checkPeriodPs);
  fabric::Connectivity conn(t);
  ASSERT_TRUE(conn.allConnected(usableNow(t, emu)));

  const fabric::SwitchId oldRoot = mt.root();
  const TimePs failAt = sched.now();
  emu.failSwitch(oldRoot);
  fabric::FaultSet faults(t);
  faults.failSwitch(t, oldRoot);
  EXPECT_FALSE(conn.allConnected(usableNow(t, emu), faults));  // the tree went through it
  const TimePs bound = cfg.faultDetectionPs + cfg.turnOnPs + acfg.checkPeriodPs;
  sched.runUntil(failAt + bound);
  EXPECT_TRUE(conn.allConnected(usableNow(t, emu), faults));
  ASSERT_FALSE(recoveries.empty());
  EXPECT_EQ(recoveries.front().at, failAt + cfg.faultDetectionPs);
  EXPECT_TRUE(recoveries.front().treeChanged);
  EXPECT_FALSE(recoveries.front().restored.empty());
  EXPECT_TRUE(recoveries.front().cutOff.empty());
  EXPECT_NE(host.tree().root(), oldRoot);
  EXPECT_EQ(host.tree(), fabric::MinimalTree::build(t, faults).tree);
  // The agents hear of links (port down), not switches: every link of the root.
  for (const fabric::Port& p : t.sw(oldRoot).ports) {
    if (p.role != fabric::PortRole::kUnused) {
      EXPECT_TRUE(host.guard().faults().linkFailed(p.link));
    }
  }
  EXPECT_TRUE(host.guard().checkAll().isOk());
  // The agents never turn off a link of the new tree.
  sched.runUntil(sched.now() + 10 * acfg.checkPeriodPs);
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l) {
    if (!host.tree().containsLink(LinkId(l))) continue;
    EXPECT_TRUE(emu.usable(LinkId(l), Direction::kUp) && emu.usable(LinkId(l), Direction::kDown))
        << t.describeLink(LinkId(l));
  }

  // Repair: the root's links come up after T_on, the tree moves back, and the
  // guard protects the old root's chain again.
  emu.repairSwitch(oldRoot);
  sched.runUntil(sched.now() + cfg.turnOnPs + acfg.checkPeriodPs);
  EXPECT_EQ(host.tree(), mt);
  EXPECT_TRUE(host.faults().empty());
  EXPECT_TRUE(host.downPorts().empty());
  sched.runUntil(sched.now() + cfg.turnOnPs + acfg.checkPeriodPs);
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l) {
    if (!mt.containsLink(LinkId(l))) continue;
    EXPECT_TRUE(emu.usable(LinkId(l), Direction::kUp) && emu.usable(LinkId(l), Direction::kDown))
        << t.describeLink(LinkId(l));
  }
  EXPECT_TRUE(conn.allConnected(usableNow(t, emu)));
}

}  // namespace
}  // namespace ebb::agent
