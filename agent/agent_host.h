#pragma once

#include <memory>
#include <set>
#include <vector>

#include "agent/switch_agent.h"

namespace ebb::agent {

// Hosts the logical agents of many switches in one process (the emulator, or
// `ebb agent` next to OpenSM: one umad port, many agents), with one safety
// guard and one neighbour channel, and routes backend events to them.
class AgentHost final : public BackendCallback {
 public:
  AgentHost(const fabric::Topology& topo, const fabric::MinimalTree& mt, const AgentConfig& cfg,
            Backend& backend, Scheduler& scheduler, fabric::LinkStates initial, DecisionSink sink);

  // Creates and starts an agent for every switch (or the given ones).
  void startAll();
  void start(const std::vector<fabric::SwitchId>& switches);

  void onLinkStateChanged(fabric::PortId port, LinkPowerState state) override;
  // A link went down (up) without ebb: the guard's view follows (a link
  // that is down carries nothing, whoever took it down) and the agent at
  // `port` takes it in.
  void onPortDown(fabric::PortId port) override;
  void onPortUp(fabric::PortId port) override;
  // Lost contact: every agent fails safe.
  void onBackendError(const Status& error) override;

  // Installed on every agent started afterwards.
  void setFailSafeHook(SwitchAgent::FailSafeHook hook) { failSafeHook_ = std::move(hook); }
  // Stops every agent, leaving links as they are.
  void stopAll();
  SafetyGuard& guard() { return guard_; }
  NeighborChannel& channel() { return channel_; }
  const std::vector<std::unique_ptr<SwitchAgent>>& agents() const { return agents_; }
  bool failedSafe() const { return failedSafe_; }
  // The backend error that made every agent fail safe (OK if none).
  const Status& backendError() const { return backendError_; }
  // Ports whose link went down without ebb and has not come back.
  const std::set<fabric::PortId>& downPorts() const { return downPorts_; }

 private:
  const fabric::Topology& topo_;
  const fabric::MinimalTree& mt_;
  AgentConfig cfg_;
  Backend& backend_;
  Scheduler& sched_;
  SafetyGuard guard_;
  NeighborChannel channel_;
  DecisionSink sink_;
  std::vector<std::unique_ptr<SwitchAgent>> agents_;
  std::vector<SwitchAgent*> bySwitch_;
  bool failedSafe_ = false;
  Status backendError_;
  std::set<fabric::PortId> downPorts_;
  SwitchAgent::FailSafeHook failSafeHook_;
};

}  // namespace ebb::agent
