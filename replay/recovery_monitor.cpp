#include "replay/recovery_monitor.h"

#include <algorithm>

#include <fmt/format.h>

#include "agent/virtual_scheduler.h"

namespace ebb::replay {

RecoveryMonitor::RecoveryMonitor(const fabric::Topology& topo, fabric::LinkStates usable,
                                 agent::VirtualScheduler& sched, const fabric::FaultSet& truth,
                                 std::vector<FaultRecord>* records, TimePs bound,
                                 bool violationsAreErrors)
    : topo_(topo),
      usable_(std::move(usable)),
      sched_(sched),
      truth_(truth),
      records_(records),
      bound_(bound),
      errors_(violationsAreErrors),
      conn_(topo) {}

void RecoveryMonitor::onUsability(fabric::LinkId link, fabric::Direction dir, bool usable) {
  usable_.set(link, dir, usable);
  if (!usable) {
    check(fmt::format("{} {}", topo_.describeLink(link),
                      dir == fabric::Direction::kUp ? "up" : "down"));
  } else if (brokenSince_) {
    check({});  // turn-ons only add: re-prove only while something is broken
  }
}

void RecoveryMonitor::beforeFaultChange(std::size_t record) {
  lastEventAt_ = sched_.now();
  lastRecord_ = record;
  if (brokenSince_) {
    const bool repair = records_ && (*records_)[record].action == "repair";
    if (repair) {
      // Pairs broken before keep their deadline; those the repair makes
      // connectable have the bound from now.
      if (!beforeRepairs_) beforeRepairs_ = truth_;
      repairDeadline_ = lastEventDeadline();
    } else {  // a new failure while recovering: the bound starts again for all
      deadline_ = lastEventDeadline();
      beforeRepairs_.reset();
    }
    openRecords_.push_back(record);
    markDisconnected(record);
    armDeadline();
  }
}

std::optional<fabric::HostPair> RecoveryMonitor::brokenPair() {
  return truth_.empty() ? conn_.findDisconnectedPair(usable_)
                        : conn_.findDisconnectedPair(usable_, truth_);
}

std::optional<fabric::HostPair> RecoveryMonitor::oldBrokenPair() {
  if (beforeRepairs_) return conn_.findDisconnectedPair(usable_, *beforeRepairs_);
  return brokenPair();
}

// Marks `record` as having disconnected a pair, remembering whether this
// break is what marked it (a break mended within its instant unmarks it).
void RecoveryMonitor::markDisconnected(std::size_t record) {
  if (!records_ || (*records_)[record].disconnected) return;
  (*records_)[record].disconnected = true;
  markedThisBreak_.push_back(record);
}

void RecoveryMonitor::onFaultEvent(std::size_t record, bool changed) {
  (void)record;
  if (!changed) return;
  maxCutPairs_ = std::max(maxCutPairs_, conn_.countCutPairs(truth_));
  check({});  // a repair makes pairs connectable that may have no path yet
}

void RecoveryMonitor::check(const std::string& change) {
  ++proofs_;
  const auto pair = brokenPair();
  const TimePs now = sched_.now();
  if (pair) {
    if (brokenSince_) return;
    brokenSince_ = now;
    breakFrom_ = now;
    beforeRepairs_.reset();
    violatedThisBreak_ = false;
    markedThisBreak_.clear();
    if (lastEventAt_ >= 0 && now <= lastEventDeadline()) {
      breakFrom_ = lastEventAt_;
      deadline_ = lastEventDeadline();
      if (lastRecord_) {
        openRecords_.assign(1, *lastRecord_);
        markDisconnected(*lastRecord_);
      }
      armDeadline();
      return;
    }
    deadline_ = now;
    violation(fmt::format("gating broke connectivity at {} ps ({}): {}", now,
                          change.empty() ? "no fault in the recovery window" : change,
                          conn_.describe(*pair)));
    return;
  }
  if (!brokenSince_) return;
  if (now == *brokenSince_) {
    // Mended within the instant it broke (a cable failing in the very
    // picosecond a parallel one finished turning on): no packet could see
    // it, so it is no disconnection and no recovery.
    if (records_) {
      for (std::size_t r : markedThisBreak_)
        (*records_)[r].disconnected = false;
    }
    brokenSince_.reset();
    openRecords_.clear();
    markedThisBreak_.clear();
    return;
  }
  // The pairs went without a path from the event that broke them, however
  // many came during the break (each restarted the bound only).
  maxRecovery_ = std::max(maxRecovery_, now - breakFrom_);
  if (records_) {
    for (std::size_t r : openRecords_) {
      FaultRecord& rec = (*records_)[r];
      // An event in the very instant of the recovery left no pair without
      // a path after it (as a break mended within its instant).
      const bool marked =
          std::find(markedThisBreak_.begin(), markedThisBreak_.end(), r) != markedThisBreak_.end();
      if (rec.at == now && marked && r != openRecords_.front()) {
        rec.disconnected = false;
        continue;
      }
      rec.recoveredAt = now;
    }
  }
  brokenSince_.reset();
  openRecords_.clear();
  markedThisBreak_.clear();
}

void RecoveryMonitor::armDeadline() {
  const TimePs due = deadline_;
  sched_.at(due, agent::Phase::kControl, [this, due] {
    if (!brokenSince_ || deadline_ != due) return;
    if (const auto old = oldBrokenPair()) {
      return violation(fmt::format(
          "{} at {} ps: still disconnected {} ps after the fault event that began its recovery "
          "(recovery bound {} ps); failed: {}",
          conn_.describe(*old), sched_.now(), sched_.now() - (deadline_ - bound_), bound_,
          truth_.describe(topo_)));
    }
    if (!beforeRepairs_ || repairDeadline_ <= due) return check({});
    armRepairDeadline(due);  // only pairs a repair made connectable are left
  });
}

void RecoveryMonitor::armRepairDeadline(TimePs due) {
  const TimePs repairDue = repairDeadline_;
  sched_.at(repairDue, agent::Phase::kControl, [this, due, repairDue] {
    if (!brokenSince_ || deadline_ != due || repairDeadline_ != repairDue) return;
    const auto pair = brokenPair();
    if (!pair) return check({});
    violation(fmt::format(
        "{} at {} ps: still disconnected {} ps after the repair that made it connectable "
        "(recovery bound {} ps); failed: {}",
        conn_.describe(*pair), sched_.now(), sched_.now() - (repairDue - bound_), bound_,
        truth_.describe(topo_)));
  });
}

void RecoveryMonitor::violation(const std::string& what) {
  if (!violatedThisBreak_) {
    violatedThisBreak_ = true;
    violations_ += std::max<std::uint64_t>(1, conn_.countDisconnectedPairs(usable_, truth_));
  }
  if (firstViolation_.empty()) firstViolation_ = what;
  if (errors_ && failure_.isOk()) {
    // The run ends here: nothing after a broken invariant is worth reporting.
    failure_ = Status(ErrorCode::kInternal, what);
    sched_.stop();
  }
}

void RecoveryMonitor::onPeriod() {
  if (!brokenSince_ || sched_.now() <= deadline_) return;
  // Within a repair's own bound, only pairs broken before it are overdue.
  if (beforeRepairs_ && sched_.now() <= repairDeadline_) {
    violations_ += conn_.countDisconnectedPairs(usable_, *beforeRepairs_);
    return;
  }
  violations_ += conn_.countDisconnectedPairs(usable_, truth_);
}

void RecoveryMonitor::fill(FaultOutcome& out) const {
  out.violations = violations_;
  out.firstViolation = firstViolation_;
  out.physicallyCutPairs = maxCutPairs_;
  out.recoveryBoundPs = bound_;
  // A break still open when the run ended counts as long as it lasted so far
  // (never "0": the pairs never came back).
  out.maxRecoveryPs =
      brokenSince_ ? std::max(maxRecovery_, sched_.now() - breakFrom_) : maxRecovery_;
}

}  // namespace ebb::replay
