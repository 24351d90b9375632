#pragma once

#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "common/status.h"
#include "fabric/faults.h"
#include "fabric/topology.h"
#include "replay/fault_plan.h"

namespace ebb::sim {
class FabricEmulator;
}

namespace ebb::replay {

// Plays the faults of a run on the emulator (docs/faults.md): the scheduled
// events of the config and the seeded random process, at their times in
// Phase::kNetwork. Keeps what has failed (the truth the recovery proof asks
// about) and one FaultRecord per event with the packets rerouted and dropped
// until the next event. Deterministic: a pure function of the plan, the
// topology and the emulator's state.
class FaultInjector {
 public:
  using RestartFn = std::function<Status(fabric::SwitchId)>;
  using EventFn = std::function<void(std::size_t record)>;

  // E_INVALID naming the event ("faults.event[1].port: ...") when a part it
  // names does not exist in `topo`.
  static Result<std::unique_ptr<FaultInjector>> create(const FaultsDef& def,
                                                       const fabric::Topology& topo,
                                                       sim::FabricEmulator& emu, TimePs horizon);

  // InfiniBand's links train both ways or not at all (the in-band model):
  // a dead direction takes its whole link down. Set for the gated run and
  // its all-on baseline alike, so both see the same faults.
  void setWholeLinkFaults(bool on) { wholeLinkFaults_ = on; }
  // Restarting an agent (RESTART_AGENT events); without it they are recorded as skipped.
  void setRestart(RestartFn fn) { restart_ = std::move(fn); }
  // Before a fault or repair is applied to the emulator (its record exists),
  // and after each event is applied, with the record's index.
  void beforeChange(EventFn fn) { beforeChange_ = std::move(fn); }
  void onEvent(EventFn fn) { onEvent_ = std::move(fn); }
  // The agents heard of port changes at `t` (re-homing): marks the records
  // whose change could be reported by then as detected.
  void noteDetected(TimePs t);
  void start();
  // Closes the last record's counting window (at the end of the run).
  void finish();

  const fabric::FaultSet& truth() const { return truth_; }
  TimePs lastChangeAt() const { return lastChangeAt_; }
  const std::vector<FaultRecord>& records() const { return records_; }
  std::vector<FaultRecord>& records() { return records_; }
  // Every host the surviving cables cut off from the main part of the fabric,
  // both ways or one way, at some point (MinimalTree's Rehomed::cutOff and
  // oneWay), in the fabric's host order (H2 before H10).
  std::vector<std::string> cutOffHosts() const;
  // The hosts cut off now: both ways, then one way ("H0 (one direction)").
  std::vector<std::string> cutOffNow() const;
  std::uint64_t agentRestarts() const { return restarts_; }
  // Events of the plan scheduled after the run ended: they never happened.
  std::uint64_t eventsNotReached() const { return events_.size() - eventsReached_; }

 private:
  struct Resolved {
    FaultEventDef def;
    fabric::SwitchId sw;
    fabric::LinkId link;  // invalid for switch scope, restarts and minimal_tree_up
  };
  FaultInjector(const FaultsDef& def, const fabric::Topology& topo, sim::FabricEmulator& emu,
                TimePs horizon);
  static Status checkRepairs(const std::vector<Resolved>& events, const fabric::Topology& topo,
                             bool randomFaults, TimePs cyclePs);
  void apply(FaultAction action, FaultScope scope, fabric::SwitchId sw, fabric::LinkId link,
             bool random);
  void randomArrival();
  void beginRecord(FaultRecord rec);
  TimePs exponential(TimePs mean);

  FaultsDef def_;
  const fabric::Topology& topo_;
  sim::FabricEmulator& emu_;
  TimePs horizon_;
  std::vector<Resolved> events_;
  std::uint64_t eventsReached_ = 0;
  fabric::FaultSet truth_;
  TimePs lastChangeAt_ = -1;
  std::vector<FaultRecord> records_;
  std::vector<std::uint8_t> everCutOff_;  // per host
  // Per switch: the link its latest minimal_tree_up FAIL took, until a
  // minimal_tree_up REPAIR of the switch repairs it.
  std::vector<fabric::LinkId> mtUpFailed_;
  RestartFn restart_;
  EventFn onEvent_;
  EventFn beforeChange_;
  std::mt19937_64 rng_;
  bool wholeLinkFaults_ = false;
  std::uint32_t randomFailed_ = 0;  // random failures not yet repaired
  std::uint64_t restarts_ = 0;
  // Emulator counters when the current record began.
  std::uint64_t reroutedAt_ = 0, droppedAt_ = 0, messagesDroppedAt_ = 0;
};

}  // namespace ebb::replay
