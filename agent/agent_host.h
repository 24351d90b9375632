#pragma once

#include <memory>
#include <set>
#include <vector>

#include "agent/switch_agent.h"
#include "fabric/connectivity.h"
#include "fabric/faults.h"

namespace ebb::agent {

// Hosts the logical agents of many switches in one process (the emulator, or
// `ebb agent` next to OpenSM: one umad port, many agents), with one safety
// guard and one neighbour channel, and routes backend events to them.
//
// Faults (docs/mechanisms.md §3.1, docs/faults.md): a link reported down
// (onPortDown) joins the fault set; then, once per instant, the minimal tree
// is rebuilt over the surviving cables (MinimalTree::build(topo, faults)),
// every agent and the guard learn it, and the links of the recovery rule
// (fabric::linksToRestore) are turned on at once, not one per period. A link
// reported up leaves the fault set and the tree is rebuilt the same way; a
// tree link that came back is protected again, and links of the old tree go
// off only when the guard's proof (over links fully on) allows it.
class AgentHost final : public BackendCallback {
 public:
  // One re-homing, for logs and metrics.
  struct Recovery {
    TimePs at = 0;
    std::string cause;  // the port events that led to it
    bool treeChanged = false;
    std::vector<fabric::LinkId> restored;  // links turned on at once
    // Of those, the gates lifted to keep single-failure resilience
    // (SafetyGuard::linksForResilience), not needed by the pairs now.
    std::size_t forResilience = 0;
    std::vector<fabric::HostId> cutOff;  // hosts the surviving cables cannot connect
  };
  using RecoveryHook = std::function<void(const Recovery&)>;
  // A failed-safe agent starting again (AgentConfig::resumeAfterFailSafePs):
  // the switch and how many times it has failed safe so far.
  using ResumeHook = std::function<void(fabric::SwitchId, std::uint32_t failSafes)>;

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
  // One direction went down (up) without ebb: the fault set loses (regains)
  // that direction only; the agent transmitting on it takes its port out of
  // (back into) its decisions, the receiving one its input.
  void onDirectionDown(fabric::LinkId link, fabric::Direction dir) override;
  void onDirectionUp(fabric::LinkId link, fabric::Direction dir) override;
  // Lost contact: every agent fails safe.
  void onBackendError(const Status& error) override;

  // The agent of `sw` loses its state and starts again (SwitchAgent::restart);
  // E_NOT_FOUND if this process hosts no agent there.
  Status restartAgent(fabric::SwitchId sw);
  void setRecoveryHook(RecoveryHook hook) { recoveryHook_ = std::move(hook); }
  // Installed on every agent started afterwards.
  void setFailSafeHook(SwitchAgent::FailSafeHook hook) { failSafeHook_ = std::move(hook); }
  void setResumeHook(ResumeHook hook) { resumeHook_ = std::move(hook); }
  // Failed-safe agents started again so far.
  std::uint64_t resumes() const { return resumes_; }
  // Stops every agent, leaving links as they are; no re-homing after it.
  void stopAll();
  SafetyGuard& guard() { return guard_; }
  NeighborChannel& channel() { return channel_; }
  const std::vector<std::unique_ptr<SwitchAgent>>& agents() const { return agents_; }
  bool failedSafe() const { return failedSafe_; }
  // The backend error that made every agent fail safe (OK if none).
  const Status& backendError() const { return backendError_; }
  // Ports whose link went down without ebb and has not come back.
  const std::set<fabric::PortId>& downPorts() const { return downPorts_; }
  // The minimal tree now (re-homed after faults), and the faults it avoids.
  const fabric::MinimalTree& tree() const { return tree_; }
  const fabric::FaultSet& faults() const { return faults_; }
  // Hosts the surviving cables cannot connect (last re-homing), ascending.
  const std::vector<fabric::HostId>& cutOff() const { return cutOff_; }
  std::uint64_t recoveries() const { return recoveries_; }

 private:
  void scheduleRehome(std::string cause);
  void rehome();
  void restoreLink(fabric::LinkId link, const std::string& why);
  // An agent failed safe: tell the hook, and start it again later if set to.
  void onAgentFailedSafe(fabric::SwitchId sw, const std::string& why);
  void resume(fabric::SwitchId sw, SwitchAgent* failed);
  void install(SwitchAgent& agent);

  const fabric::Topology& topo_;
  fabric::MinimalTree tree_;  // before guard_, which holds a reference to it
  fabric::FaultSet faults_;
  AgentConfig cfg_;
  Backend& backend_;
  Scheduler& sched_;
  SafetyGuard guard_;
  NeighborChannel channel_;
  DecisionSink sink_;
  std::vector<std::unique_ptr<SwitchAgent>> agents_;
  // Agents replaced by restartAgent: kept (stopped) until the host ends,
  // since backend completions may still name them.
  std::vector<std::unique_ptr<SwitchAgent>> retired_;
  std::vector<SwitchAgent*> bySwitch_;
  bool failedSafe_ = false;
  Status backendError_;
  std::set<fabric::PortId> downPorts_;
  SwitchAgent::FailSafeHook failSafeHook_;
  RecoveryHook recoveryHook_;
  ResumeHook resumeHook_;
  std::vector<std::uint32_t> failSafes_;  // per switch, so far
  std::uint64_t resumes_ = 0;
  fabric::Connectivity conn_;
  std::vector<fabric::HostId> cutOff_;
  bool rehomePending_ = false;
  bool stopped_ = false;  // stopAll(): no more re-homing
  std::string pendingCause_;
  std::uint64_t recoveries_ = 0;
};

}  // namespace ebb::agent
