#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "fabric/connectivity.h"
#include "fabric/faults.h"
#include "fabric/link_states.h"
#include "fabric/topology.h"
#include "replay/fault_plan.h"

namespace ebb::agent {
class VirtualScheduler;
}

namespace ebb::replay {

// The guarantee of docs/faults.md, checked continuously and independently of
// the agents' safety guard: after every change that takes a direction away
// (gating or fault) and after every fault event, every host pair the
// surviving cables can connect must have an up*/down* path over the link
// directions actually usable. A pair may be disconnected only within the
// recovery bound after a fault event (detection + T_on + one check period +
// slack); beyond it, or with no fault event in the window (gating alone broke
// it), it is a violation: E_INTERNAL naming time, pair and faults when
// violations are errors (replay), counted in host-pair periods otherwise
// (campaign).
class RecoveryMonitor {
 public:
  // `truth` and `records` (may be null) belong to the FaultInjector and outlive this.
  RecoveryMonitor(const fabric::Topology& topo, fabric::LinkStates usable,
                  agent::VirtualScheduler& sched, const fabric::FaultSet& truth,
                  std::vector<FaultRecord>* records, TimePs bound, bool violationsAreErrors);

  // The emulator's usability callback.
  void onUsability(fabric::LinkId link, fabric::Direction dir, bool usable);
  // A fault or repair is about to change what failed (its record's index):
  // the recovery window opens now.
  void beforeFaultChange(std::size_t record);
  // A fault event was applied; `changed` when it changed what failed.
  void onFaultEvent(std::size_t record, bool changed);
  // Once per check period: pairs still disconnected beyond the bound count.
  void onPeriod();

  // The first violation as an error, when violations are errors; OK otherwise.
  const Status& failure() const { return failure_; }
  std::uint64_t proofs() const { return proofs_; }
  // Some connectable pair has no path yet (a recovery is under way).
  bool recovering() const { return brokenSince_.has_value(); }
  // Fills the counters of `out` this monitor keeps.
  void fill(FaultOutcome& out) const;

 private:
  void check(const std::string& change);
  void violation(const std::string& what);
  void armDeadline();

  const fabric::Topology& topo_;
  fabric::LinkStates usable_;
  agent::VirtualScheduler& sched_;
  const fabric::FaultSet& truth_;
  std::vector<FaultRecord>* records_;
  TimePs bound_;
  bool errors_;
  fabric::Connectivity conn_;
  Status failure_ = Status::ok();
  void markDisconnected(std::size_t record);
  std::uint64_t proofs_ = 0;
  TimePs lastEventAt_ = -1;
  // The bound after the last event (the end of time where it would not fit).
  TimePs lastEventDeadline() const { return saturatingAdd(lastEventAt_, bound_); }
  std::optional<std::size_t> lastRecord_;  // the last fault or repair
  // While some connectable pair has no path: since when, until when it may
  // last, and the records of the events during it.
  std::optional<TimePs> brokenSince_;
  // The fault or repair event the break is timed from: the one that opened
  // it (later events during it restart the bound, not its length).
  TimePs breakFrom_ = 0;
  TimePs deadline_ = 0;
  // A repair during a break removes no path: the pairs broken before it keep
  // their deadline; only pairs it made connectable (with no path yet) get
  // the bound from the repair. What failed before the break's first repair
  // (since its last failure) tells the two apart: a pair connectable then
  // was broken before.
  std::optional<fabric::FaultSet> beforeRepairs_;
  TimePs repairDeadline_ = 0;
  // A connectable pair with no path, if one is.
  std::optional<fabric::HostPair> brokenPair();
  // One broken before the repairs (or any, without them).
  std::optional<fabric::HostPair> oldBrokenPair();
  // At the repairs' deadline (the failure's, `due`, passed): any pair left.
  void armRepairDeadline(TimePs due);
  std::vector<std::size_t> openRecords_;      // the events during this break
  std::vector<std::size_t> markedThisBreak_;  // ... that this break marked disconnected
  bool violatedThisBreak_ = false;
  std::uint64_t violations_ = 0;
  std::string firstViolation_;
  std::uint64_t maxCutPairs_ = 0;
  TimePs maxRecovery_ = 0;
};

}  // namespace ebb::replay
