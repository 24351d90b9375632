#pragma once

#include <memory>
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
  void onBackendError(const Status& error) override;

  // Installed on every agent started afterwards.
  void setFailSafeHook(SwitchAgent::FailSafeHook hook) { failSafeHook_ = std::move(hook); }
  // Stops every agent, leaving links as they are.
  void stopAll();
  SafetyGuard& guard() { return guard_; }
  NeighborChannel& channel() { return channel_; }
  const std::vector<std::unique_ptr<SwitchAgent>>& agents() const { return agents_; }
  bool failedSafe() const { return failedSafe_; }

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
  SwitchAgent::FailSafeHook failSafeHook_;
};

}  // namespace ebb::agent
