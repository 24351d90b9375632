#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "common/time.h"
#include "configs/proto/replay.pb.h"  // generated
#include "configs/proto/report.pb.h"  // generated
#include "replay/run_spec.h"

namespace ebb::sim {
class FabricEmulator;
struct Delivery;
struct Drop;
}  // namespace ebb::sim

namespace ebb::replay {

// What a run injects into the emulator, whatever its kind: synthetic traffic
// at a rate profile (open loop), a traffic file (open loop), or closed-loop
// jobs (MPI traces, collective loops, mixes). The runner asks it the same
// questions for every kind instead of branching on the kind.
class WorkloadSource {
 public:
  virtual ~WorkloadSource() = default;

  // Schedules the first injections on the emulator's scheduler.
  virtual void start() = 0;
  // Every delivery of the emulator (closed loop reacts; open loop ignores).
  virtual void onDelivery(const sim::Delivery& d) { (void)d; }
  // A message the emulator lost to a failure (closed loop: sent again after
  // the retransmission timeout; open loop: lost).
  virtual void onDrop(const sim::Drop& d) { (void)d; }
  // Messages sent again after a loss.
  virtual std::uint64_t retransmissions() const { return 0; }

  virtual std::uint64_t messagesGenerated() const = 0;
  virtual std::uint64_t bytesGenerated() const = 0;

  // The time the workload is expected to span, for progress and for the
  // open-loop end of the run (closed loop: an estimate; the run lasts until
  // done()).
  virtual TimePs horizon() const = 0;
  // Open loop: every message is created before this time (a traffic file:
  // just after its last, where horizon() rounds up to a check period).
  virtual TimePs createdBefore() const { return horizon(); }
  // Closed loop: the run lasts until every job ended, not until horizon().
  virtual bool closedLoop() const { return false; }
  virtual bool done() const { return false; }

  // The offered rate the workload intends at `t`, in flits/cycle/node, when
  // it follows a rate profile; false for files and jobs (the runner then
  // reports the measured injection).
  virtual bool hasRateProfile() const { return false; }
  virtual double rateAt(TimePs t) const { return (void)t, 0.0; }
  virtual bool risingAt(TimePs t) const { return (void)t, true; }

  // An error met while running (e.g. a traffic file unreadable mid-way, a
  // closed loop that never finishes); ok otherwise.
  virtual Status status() const { return Status::ok(); }
  // A closed loop that cannot finish: the reason, for the run's error.
  virtual std::string describeUnfinished() const { return {}; }
  // A closed loop that can no longer move (every remaining rank waits, no
  // message on its way): why, naming ranks and trace lines; empty otherwise.
  virtual std::string describeDeadlock() const { return {}; }
  // Adds what the workload measured itself (job runtimes) to the summary.
  virtual void summarize(results::RunSummary& s) const { (void)s; }
};

// The source a spec describes, bound to `emu`. Files and traces are checked
// whole here, before anything runs (errors name the file and line).
Result<std::unique_ptr<WorkloadSource>> makeWorkloadSource(const RunSpec& spec,
                                                           sim::FabricEmulator& emu);

// The messages a synthetic spec's rate profile makes on `hosts` hosts (its
// cost before the work; checked against spec.maxMessages).
double syntheticMessages(const RunSpec& spec, std::size_t hosts);

}  // namespace ebb::replay
