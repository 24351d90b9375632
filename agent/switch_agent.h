#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent/backend.h"
#include "agent/decision.h"
#include "agent/neighbor_channel.h"
#include "agent/safety_guard.h"
#include "agent/scheduler.h"
#include "fabric/minimal_tree.h"
#include "fabric/topology.h"
#include "policies/gating_policy.h"

namespace ebb::agent {

struct AgentConfig {
  policies::Thresholds thresholds = policies::Thresholds::makeDynamic(0.15);
  TimePs checkPeriodPs = 2'000'000;  // 2000 cycles of 1 ns
  TimePs controlLatencyPs = 0;       // neighbour messages
  bool gating = true;                // false: observe only (all-on baseline)
  RateLimits rateLimits;             // turn-off limits (real fabrics)
  // A failed-safe agent starts again (SwitchAgent::restart) this long after
  // its fail-safe, twice as long after each further one of the same switch
  // (at most 64 x as long, and a week); 0: it stays failed safe (AgentHost).
  TimePs resumeAfterFailSafePs = 0;
  // E_INVALID naming the field: valid thresholds, a positive period.
  Status validate() const;
};

// The per-switch agent (docs/design.md §3, docs/mechanisms.md §2): every check period it samples
// its counters, computes u_up over its usable up links, runs the gating policy, applies the change
// through the backend after the safety guard agreed, and records the reason. Down links follow the
// down-link rule and up links the upward-propagation rule as soon as a neighbour reports an input
// change.
class SwitchAgent {
 public:
  SwitchAgent(fabric::SwitchId sw, const fabric::Topology& topo, const fabric::MinimalTree& mt,
              const AgentConfig& cfg, Backend& backend, Scheduler& scheduler, SafetyGuard& guard,
              NeighborChannel& channel, DecisionSink sink);

  void start();
  // Starts an agent that replaces one that lost its state (a restart): the
  // port states come from the backend as at start, the counters are read at
  // once as a baseline, and periods stay on the grid of the check period
  // (multiples of it since time 0), so it decides as the lost agent would.
  void restart();
  // The minimal tree changed (re-homing after a fault or a repair).
  void setTree(const fabric::MinimalTree& mt);
  // Turns the transmit direction of `port` on now (fault recovery), whatever
  // the policy would do; `why` goes to the decision log. Nothing if it is on,
  // turning on, or follows its link (a down port under whole-link gating).
  void restorePort(std::uint16_t port, const std::string& why);
  // A turn-off the backend could not apply (its end out of reach): undone.
  void turnOffNotApplied(std::uint16_t index, const Status& why);
  void onLinkStateChanged(std::uint16_t port, LinkPowerState state);
  // The link at `port` went down without this agent asking: it is off in
  // both directions and out of the policy's view until it comes up again.
  // When it comes up, its state is read again from the backend (a
  // direction gated off before the failure may still be off).
  void onPortDown(std::uint16_t port);
  void onPortUp(std::uint16_t port);
  // One direction failed (docs/faults.md): this port's transmit direction (out
  // of u_up and of the policy's links, as onPortDown), or its input only.
  void onTransmitDown(std::uint16_t port);
  void onInputDown(std::uint16_t port);
  // Stop gating and turn back on every link this agent turned off.
  void failSafe(const std::string& why);
  // Called once when this agent fails safe (lost contact, failed action).
  using FailSafeHook = std::function<void(fabric::SwitchId, const std::string&)>;
  void setFailSafeHook(FailSafeHook hook) { failSafeHook_ = std::move(hook); }
  // Stop gating and leave every link as it is (shutdown).
  void stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }
  fabric::SwitchId id() const { return sw_; }
  std::uint64_t periods() const { return periods_; }
  double lastUtilization() const { return lastU_; }
  // Links at this switch that went down without ebb (onPortDown), so far.
  std::uint64_t portFaults() const { return portFaults_; }

 private:
  struct PortState {
    std::uint16_t index;
    bool up;
    bool toSwitch;
    LinkPowerState transmit = LinkPowerState::kOn;
    bool inputOn = true;
    bool failed = false;  // went down without ebb (onPortDown) and not up since
    std::uint64_t lastTxBytes = 0;
    TimePs lastXmitWait = 0;
    double bandwidth = 0;
  };
  void tick();
  // Port states from a discovery answer: every port, or only `only`.
  void takeDescriptions(const std::vector<PortDescription>& ports, int only);
  // Applies the decision of the policy on the view (index into viewPorts_).
  PortState& viewPort(int viewIndex) {
    return ports_[viewPorts_[static_cast<std::size_t>(viewIndex)]];
  }
  void onSample(const CounterSample& s);
  void apply(PortState& p, bool on, DecisionRecord rec);
  void applyDownRule();
  void propagate();
  void onNeighbor(const messages::NeighborMessage& m);
  void notifyPeer(const PortState& p, bool on);
  fabric::LinkId linkOf(const PortState& p) const { return topo_.sw(sw_).ports[p.index].link; }
  fabric::Direction txDir(const PortState& p) const {
    return p.up ? fabric::Direction::kUp : fabric::Direction::kDown;
  }
  void buildView();
  bool anyAscendingInputOn() const;
  bool anyInputOn() const;

  fabric::SwitchId sw_;
  const fabric::Topology& topo_;
  AgentConfig cfg_;
  policies::GatingPolicy policy_;
  Backend& backend_;
  Scheduler& sched_;
  SafetyGuard& guard_;
  NeighborChannel& channel_;
  DecisionSink sink_;
  bool isMt_;
  // InfiniBand gates a link as one unit: the lower switch's agent decides for
  // the link from its up-link utilization; down ports follow their links.
  bool wholeLink_;
  int mtUpPort_ = -1;               // label of the minimal-tree up port, -1: none
  std::vector<PortState> ports_;    // cabled ports
  std::vector<std::size_t> upIdx_;  // indices into ports_, ascending port number
  std::vector<policies::UpLinkView> view_;
  std::vector<std::size_t> viewPorts_;  // view index -> ports_ index (failed up links left out)
  TimePs lastSample_ = -1;
  double lastU_ = 0;
  double lastWait_ = 0;  // share of the period the usable up links waited for credit
  bool stopped_ = false;
  FailSafeHook failSafeHook_;
  bool started_ = false;
  std::uint64_t periods_ = 0;
  std::uint64_t portFaults_ = 0;
};

}  // namespace ebb::agent
