// Agents over the emulator in virtual time: fail-safe on a backend error brings
// every link the agents turned off back on.
#include "agent/agent_host.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "agent/virtual_scheduler.h"
#include "fabric/kary_tree.h"
#include "sim_backend/sim_backend.h"
#include "sim_backend/synthetic_traffic.h"

namespace ebb::agent {
namespace {

using fabric::Direction;
using fabric::HostId;
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

// The emulator's backend, with the first turn-off refused as the InfiniBand
// backend refuses one whose end went out of reach before its Set.
class FirstTurnOffOutOfReach final : public Backend {
 public:
  explicit FirstTurnOffOutOfReach(Backend& inner) : inner_(inner) {}
  Capabilities capabilities() const override { return inner_.capabilities(); }
  void setCallback(BackendCallback* callback) override { inner_.setCallback(callback); }
  void discoverPorts(fabric::SwitchId sw, Done<std::vector<PortDescription>> done) override {
    inner_.discoverPorts(sw, std::move(done));
  }
  void requestCounters(fabric::SwitchId sw, Done<CounterSample> done) override {
    inner_.requestCounters(sw, std::move(done));
  }
  void applyLinkState(fabric::PortId port, bool on, Done<LinkPowerState> done) override {
    if (!on && !refused) {
      refused = port;
      return done(Status(ErrorCode::kUnavailable, "S9 is out of reach over the links that are up"));
    }
    inner_.applyLinkState(port, on, std::move(done));
  }
  std::optional<fabric::PortId> refused;

 private:
  Backend& inner_;
};

// A turn-off that could not be applied (its end out of reach) leaves the link
// on and the agent gating: not a fail-safe, which would stop it for good.
TEST(AgentHost, ATurnOffOutOfReachLeavesTheLinkOnAndTheAgentGating) {
  const fabric::Topology t = fabric::KAryNTree::make(4, 3).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(t).value();
  VirtualScheduler sched;
  sim::EmulatorConfig cfg;
  sim::FabricEmulator emu(t, cfg, sched);
  sim::SimBackend sim(emu);
  FirstTurnOffOutOfReach backend(sim);
  AgentConfig acfg;
  std::vector<DecisionRecord> log;
  AgentHost host(t, mt, acfg, backend, sched, fabric::LinkStates::allOn(t),
                 [&](const DecisionRecord& r) { log.push_back(r); });
  host.startAll();
  sched.runUntil(40 * acfg.checkPeriodPs);
  ASSERT_TRUE(backend.refused);
  EXPECT_FALSE(host.failedSafe());
  const auto notApplied = std::count_if(log.begin(), log.end(), [](const DecisionRecord& r) {
    return r.refused.find("not applied, the link stays on") != std::string::npos;
  });
  EXPECT_EQ(notApplied, 1);
  // The refused port's switch went on gating: some other link of it is off.
  const fabric::Switch& sw = t.sw(backend.refused->sw);
  int offAtThatSwitch = 0;
  for (const fabric::Port& p : sw.ports) {
    if (!p.link.valid() || t.link(p.link).lowerIsHost) continue;
    offAtThatSwitch += emu.usable(p.link, Direction::kUp) ? 0 : 1;
  }
  EXPECT_GT(offAtThatSwitch, 0) << sw.name << " stopped gating";
  for (const auto& d : log)
    EXPECT_NE(d.source, "fail-safe");
}

// With agent.resume_after_fail_safe: after a fail-safe every link is on; the
// agents start again after the wait, read their ports (all on) and move to
// what the measured load needs, the minimal tree at no load, as a run that
// started from every link on would. A second fail-safe waits twice as long.
// A k-ary n-tree on the emulator in virtual time, for an AgentHost.
struct SimRig {
  SimRig(int k, int n)
      : t(fabric::KAryNTree::make(k, n).value().build()),
        mt(fabric::MinimalTree::build(t).value()),
        emu(t, sim::EmulatorConfig{}, sched),
        backend(emu) {}
  fabric::Topology t;
  fabric::MinimalTree mt;
  VirtualScheduler sched;
  sim::FabricEmulator emu;
  sim::SimBackend backend;
};

TEST(AgentHost, AFailedSafeAgentResumesAndFallsBackToWhatTheLoadNeeds) {
  SimRig rig(4, 3);
  const fabric::Topology& t = rig.t;
  VirtualScheduler& sched = rig.sched;
  sim::FabricEmulator& emu = rig.emu;
  AgentConfig acfg;
  acfg.thresholds = policies::Thresholds::makeProportional(0.15, 0.9);
  acfg.resumeAfterFailSafePs = 5 * acfg.checkPeriodPs;
  std::vector<DecisionRecord> log;
  AgentHost host(t, rig.mt, acfg, rig.backend, sched, fabric::LinkStates::allOn(t),
                 [&](const DecisionRecord& r) { log.push_back(r); });
  std::vector<std::pair<fabric::SwitchId, std::uint32_t>> resumed;
  host.setResumeHook([&](fabric::SwitchId sw, std::uint32_t n) { resumed.emplace_back(sw, n); });
  const auto upOff = [&] {
    int off = 0;
    for (LinkId::rep_type l = 0; l < t.numLinks(); ++l)
      off += emu.usable(LinkId(l), Direction::kUp) ? 0 : 1;
    return off;
  };
  int minimalOff = 0;  // switch links outside the minimal tree
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l)
    minimalOff += t.isSwitchLink(LinkId(l)) && !rig.mt.containsLink(LinkId(l)) ? 1 : 0;
  host.startAll();
  sched.runUntil(4 * acfg.checkPeriodPs);
  ASSERT_EQ(upOff(), minimalOff);  // proportional: the surplus went in one period
  host.onBackendError(Status(ErrorCode::kUnavailable, "lost contact with the fabric"));
  sched.runUntil(sched.now() + acfg.checkPeriodPs);
  EXPECT_EQ(upOff(), 0);  // failed safe: every link on
  EXPECT_TRUE(resumed.empty());
  // Resumed 5 periods after the fail-safe, shed at the first period after.
  sched.runUntil(sched.now() + 6 * acfg.checkPeriodPs);
  EXPECT_EQ(resumed.size(), t.numSwitches());
  EXPECT_EQ(host.resumes(), t.numSwitches());
  for (const auto& [sw, n] : resumed)
    EXPECT_EQ(n, 1u) << t.sw(sw).name;
  EXPECT_EQ(upOff(), minimalOff);
  for (const auto& a : host.agents())
    EXPECT_FALSE(a->stopped()) << t.sw(a->id()).name;
  // Fails safe again: this time the wait is 10 periods.
  host.onBackendError(Status(ErrorCode::kUnavailable, "lost contact again"));
  sched.runUntil(sched.now() + 9 * acfg.checkPeriodPs);
  EXPECT_EQ(upOff(), 0);
  EXPECT_EQ(host.resumes(), t.numSwitches());
  sched.runUntil(sched.now() + 3 * acfg.checkPeriodPs);
  EXPECT_EQ(host.resumes(), 2 * t.numSwitches());
  EXPECT_EQ(resumed.back().second, 2u);
  EXPECT_EQ(upOff(), minimalOff);
  // After stopAll nothing resumes.
  host.onBackendError(Status(ErrorCode::kUnavailable, "once more"));
  host.stopAll();
  sched.runUntil(sched.now() + 100 * acfg.checkPeriodPs);
  EXPECT_EQ(host.resumes(), 2 * t.numSwitches());
  EXPECT_EQ(upOff(), 0);
}

// Without the setting a failed-safe agent stays so.
TEST(AgentHost, WithoutResumeAFailedSafeAgentStaysStopped) {
  SimRig rig(2, 3);
  AgentConfig acfg;
  AgentHost host(rig.t, rig.mt, acfg, rig.backend, rig.sched, fabric::LinkStates::allOn(rig.t), {});
  host.startAll();
  rig.sched.runUntil(2 * acfg.checkPeriodPs);
  host.onBackendError(Status(ErrorCode::kUnavailable, "lost"));
  rig.sched.runUntil(rig.sched.now() + 200 * acfg.checkPeriodPs);
  EXPECT_EQ(host.resumes(), 0u);
  for (const auto& a : host.agents())
    EXPECT_TRUE(a->stopped());
}

// A port that went down without ebb: the guard's view and the agent follow
// (the link is off, in both directions); back up, on again. A backend error
// is kept and fails every agent safe.
TEST(AgentHost, PortDownAndUpKeepTheGuardAndTheAgentInStep) {
  const fabric::Topology t = fabric::KAryNTree::make(4, 3).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(t).value();
  VirtualScheduler sched;
  sim::EmulatorConfig cfg;
  sim::FabricEmulator emu(t, cfg, sched);
  sim::SimBackend backend(emu);
  AgentConfig acfg;
  acfg.gating = false;
  AgentHost host(t, mt, acfg, backend, sched, fabric::LinkStates::allOn(t), {});
  host.startAll();
  sched.runUntil(2 * acfg.checkPeriodPs);
  const fabric::SwitchId leaf = t.switchesAtLevel(2).front();
  const fabric::PortId port{leaf, t.sw(leaf).upPorts.front()};
  const LinkId link = t.sw(leaf).ports[port.index].link;
  const fabric::PortId upper = t.link(link).upper;
  host.onPortDown(port);
  host.onPortDown(upper);
  EXPECT_TRUE(host.guard().states().isFullyOff(link));
  EXPECT_EQ(host.downPorts().size(), 2u);
  EXPECT_EQ(host.agents()[leaf.value()]->portFaults(), 1u);
  host.onPortUp(port);
  host.onPortUp(upper);
  sched.runUntil(sched.now() + 1);  // each end reads its port again from the backend
  EXPECT_TRUE(host.guard().states().isFullyOn(link));
  EXPECT_TRUE(host.downPorts().empty());
  EXPECT_TRUE(host.backendError().isOk());
  host.onBackendError(Status(ErrorCode::kUnavailable, "lost contact"));
  EXPECT_EQ(host.backendError().message(), "lost contact");
  for (const auto& a : host.agents())
    EXPECT_TRUE(a->stopped());
}

// The down-link rule and upward propagation across switches, through the
// neighbour channel with a control-plane latency L: idle, every switch with no
// input on turns its down links off; then a leaf turns an up link on toward a
// dark level-1 switch, which hears of it exactly L later and at that instant
// turns its down links on and one up link on (propagation); the root above it
// hears L after that and turns its down links on. Every message arrives.
TEST(AgentHost, DownLinkRuleAndPropagationTravelTheChannelWithItsLatency) {
  const fabric::Topology t = fabric::KAryNTree::make(4, 3).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(t).value();
  VirtualScheduler sched;
  sim::EmulatorConfig cfg;
  sim::FabricEmulator emu(t, cfg, sched);
  std::size_t delivered = 0;
  emu.onDelivery([&](const sim::Delivery&) { ++delivered; });
  sim::SimBackend backend(emu);
  AgentConfig acfg;
  const TimePs latency = 250'000;  // 250 ns
  acfg.controlLatencyPs = latency;
  std::vector<DecisionRecord> log;
  AgentHost host(t, mt, acfg, backend, sched, fabric::LinkStates::allOn(t),
                 [&](const DecisionRecord& r) { log.push_back(r); });
  host.startAll();
  sched.runUntil(40 * acfg.checkPeriodPs);
  for (const auto& d : log) {
    EXPECT_TRUE(d.refused.empty()) << d.refused;
  }
  // Idle: non-MT switches at levels 0 and 1 turned their down links off.
  std::set<std::uint32_t> darkened;
  for (const auto& d : log) {
    if (d.source != "down-link-rule") continue;
    EXPECT_FALSE(d.turnOn);
    EXPECT_FALSE(d.up);
    EXPECT_EQ(d.rule, policies::Rule::kEveryInputOff);
    EXPECT_FALSE(mt.containsSwitch(d.port.sw)) << t.sw(d.port.sw).name;
    darkened.insert(d.port.sw.value());
  }
  EXPECT_EQ(darkened.size(), 15u + 12u);  // every non-MT root and level-1 switch
  // Load: the four hosts of the first leaf send to the last pod, far above
  // U_on of the leaf's one (MT) up link.
  const fabric::SwitchId leaf = t.leafOf(HostId(0));
  const std::size_t idleDecisions = log.size();
  int sent = 0;
  std::function<void()> burst = [&] {
    for (std::uint32_t h = 0; h < 4; ++h) {
      emu.sendMessage(HostId(h), HostId(static_cast<std::uint32_t>(t.numHosts()) - 1 - h), 256);
      ++sent;
    }
    if (sent < 4 * 200) sched.after(200'000, Phase::kNetwork, burst);
  };
  sched.after(0, Phase::kNetwork, burst);
  sched.runUntil(sched.now() + 10 * acfg.checkPeriodPs);
  const DecisionRecord* leafOn = nullptr;
  for (std::size_t i = idleDecisions; i < log.size(); ++i) {
    const auto& d = log[i];
    if (d.port.sw == leaf && d.up && d.turnOn && d.source == "gating") {
      leafOn = &d;
      break;
    }
  }
  ASSERT_NE(leafOn, nullptr) << "the loaded leaf never turned an up link on";
  const fabric::PortId parentPort = t.peerOf(leafOn->port);
  const fabric::SwitchId parent = parentPort.sw;
  ASSERT_TRUE(darkened.count(parent.value())) << t.sw(parent).name << " was not dark";
  // The parent: down links on and one up link on, both exactly L later.
  std::size_t downOn = 0;
  const DecisionRecord* parentUp = nullptr;
  for (const auto& d : log) {
    if (d.port.sw != parent || !d.turnOn || d.time < leafOn->time) continue;
    if (d.source == "down-link-rule") {
      EXPECT_EQ(d.time, leafOn->time + latency);
      EXPECT_EQ(d.rule, policies::Rule::kAnInputOn);
      ++downOn;
    }
    if (d.source == "propagate-up" && parentUp == nullptr) parentUp = &d;
  }
  EXPECT_EQ(downOn, t.sw(parent).downPorts.size());
  ASSERT_NE(parentUp, nullptr) << t.sw(parent).name << " did not propagate upward";
  EXPECT_EQ(parentUp->time, leafOn->time + latency);
  // The root above: its down links on, 2L after the leaf's decision.
  const fabric::SwitchId root = t.peerOf(parentUp->port).sw;
  std::size_t rootDownOn = 0;
  for (const auto& d : log) {
    if (d.port.sw == root && d.source == "down-link-rule" && d.turnOn && d.time >= leafOn->time) {
      EXPECT_EQ(d.time, leafOn->time + 2 * latency);
      ++rootDownOn;
    }
  }
  EXPECT_EQ(rootDownOn, t.sw(root).downPorts.size()) << t.sw(root).name;
  sched.runUntil(sched.now() + 20 * acfg.checkPeriodPs);  // the burst ends after 20
  EXPECT_EQ(sent, 4 * 200);
  EXPECT_EQ(delivered, static_cast<std::size_t>(sent));
  for (const auto& d : log) {
    EXPECT_TRUE(d.refused.empty()) << d.refused;
  }
}

}  // namespace
}  // namespace ebb::agent
