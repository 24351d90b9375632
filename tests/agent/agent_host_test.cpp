// Agents over the emulator in virtual time: fail-safe on a backend error brings
// every link the agents turned off back on.
#include "agent/agent_host.h"

#include <gtest/gtest.h>

#include "agent/virtual_scheduler.h"
#include "fabric/kary_tree.h"
#include "sim_backend/sim_backend.h"
#include "sim_backend/traffic.h"

namespace ebb::agent {
namespace {

using fabric::Direction;
using fabric::LinkId;

TEST(AgentHost, FailSafeTurnsEverythingBackOn) {
  const fabric::Topology t = fabric::KAryNTree::make(4, 3).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(t).value();
  VirtualScheduler sched;
  sim::EmulatorConfig cfg;
  sim::FabricEmulator emu(t, cfg, sched);
  sim::SimBackend backend(emu);
  AgentConfig acfg;  // dynamic, U_on = 0.15, 2000-cycle period
  std::vector<DecisionRecord> log;
  AgentHost host(t, mt, acfg, backend, sched, fabric::LinkStates::allOn(t),
                 [&](const DecisionRecord& r) { log.push_back(r); });
  host.startAll();
  // No traffic: agents switch non-MT links off, one per switch per period.
  sched.runUntil(40 * acfg.checkPeriodPs);
  int off = 0;
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l) {
    off += emu.usable(LinkId(l), Direction::kUp) ? 0 : 1;
  }
  EXPECT_GT(off, 40);
  for (const auto& d : log)
    EXPECT_TRUE(d.refused.empty()) << d.refused;
  host.onBackendError(Status(ErrorCode::kUnavailable, "lost contact with the fabric"));
  EXPECT_TRUE(host.failedSafe());
  sched.runUntil(sched.now() + 2 * cfg.turnOnPs);
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l) {
    EXPECT_TRUE(emu.usable(LinkId(l), Direction::kUp)) << t.describeLink(LinkId(l));
    EXPECT_TRUE(emu.usable(LinkId(l), Direction::kDown)) << t.describeLink(LinkId(l));
  }
  const auto failSafe = std::count_if(
      log.begin(), log.end(), [](const DecisionRecord& r) { return r.source == "fail-safe"; });
  EXPECT_GT(failSafe, 0);
  // Stopped agents decide nothing more.
  const std::size_t before = log.size();
  sched.runUntil(sched.now() + 10 * acfg.checkPeriodPs);
  EXPECT_EQ(log.size(), before);
}

}  // namespace
}  // namespace ebb::agent
