#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "configs/proto/replay.pb.h"  // generated
#include "configs/proto/report.pb.h"  // generated
#include "fabric/ids.h"
#include "sim_backend/mpi_replay.h"
#include "workload/collectives.h"
#include "workload/message_limit.h"
#include "workload/motifs.h"
#include "workload/mpi_trace.h"

namespace ebb::sim {
class FabricEmulator;
class MpiReplay;
struct Delivery;
struct Drop;
}  // namespace ebb::sim

namespace ebb::replay {

// One closed-loop job of a run, checked and typed: an MPI trace or a
// generated collective loop, with when it starts and whether it repeats.
struct JobDef {
  enum class Source : std::uint8_t { kTrace, kCollective, kMotif };
  std::string name;
  std::string field;  // where it came from in the config, for errors
  Source source = Source::kTrace;
  // Trace.
  std::string path;
  config::TraceSpec::Format format = config::TraceSpec::AMG_CSV;
  double flopsPerS = 1e9;
  double sizeScale = 1.0;
  bool randomRanks = false;  // ranks to the job's hosts: seeded permutation
  // Collective loop.
  std::string op;
  std::int64_t bytes = 0;
  std::uint32_t iterations = 1;
  TimePs computePs = 0;
  // Motif (ranks, placement and algorithms as below).
  workload::MotifParams motif;
  // All.
  workload::CollectiveAlgos algos;
  std::uint32_t ranks = 0;  // hosts the job gets (trace: 0 = its own rank count)
  TimePs startPs = 0;
  bool repeat = false;
};

struct JobsDef {
  std::vector<JobDef> jobs;
  bool randomHosts = false;             // host blocks from a seeded permutation of all hosts
  workload::MessageLimit messageLimit;  // checked on every message when the jobs load
  std::uint32_t fillHosts = 0;          // a mix fill's hosts (at most the fabric's), else 0
};

// The workload's closed-loop jobs (a trace, a collective loop, a motif or a mix), or
// an empty list for open-loop workloads. Errors name the field and the rule;
// relative trace paths are resolved against `baseDir`.
Result<JobsDef> jobsFromWorkload(const config::WorkloadSpec& w, const std::string& baseDir);

// A job ready to run: its program and the hosts its ranks run on.
struct LoadedJob {
  JobDef def;
  workload::MpiTrace program;
  std::vector<fabric::HostId> hosts;  // hosts[rank]
};

// Reads every trace (errors name the file and line), builds the generated
// programs, and gives each job its own hosts. E_INVALID when a trace has more
// ranks than its job was given, or the jobs need more hosts than the fabric has.
// When the loaded jobs' ranks have computed their all (their start plus
// every compute, not counting the network), at least `atLeast`: E_INVALID
// naming the job and rank whose sum passes the end of virtual time (2^63
// ps), which a run would saturate, dropping the compute past it.
Result<TimePs> jobsHorizon(const std::vector<LoadedJob>& jobs, TimePs atLeast);

Result<std::vector<LoadedJob>> loadJobs(const JobsDef& def, std::uint32_t fabricHosts,
                                        std::uint64_t seed);

// The program of a motif job, drawn with `seed` (also used by `ebb gen`).
Result<workload::MpiTrace> motifProgram(const JobDef& job, std::uint64_t seed);
// The program of a generated collective loop (also used by `ebb gen`).
Result<workload::MpiTrace> collectiveLoopProgram(const JobDef& job);

// Drives the jobs on one emulator: starts each at its time, restarts repeating
// ones until every other job has ended, and measures each job's runtime.
class JobRunner {
 public:
  JobRunner(sim::FabricEmulator& emu, const std::vector<LoadedJob>& jobs);
  ~JobRunner();
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  void start();
  // Forward every delivery here.
  void onDelivery(const sim::Delivery& d);
  // Forward every drop here: the replay it belongs to sends the message again.
  void onDrop(const sim::Drop& d);
  // A message lost to a failure is sent again this long after it was sent
  // (every replay launched afterwards).
  void setRetransmitTimeout(TimePs t) { retransmitTimeout_ = t; }
  // Messages sent again after a loss, over every run of every job.
  std::uint64_t retransmissions() const;
  // Every job that does not repeat has ended.
  bool done() const;
  std::uint64_t messagesSent() const;
  std::uint64_t bytesSent() const;
  // When the last job that does not repeat ended.
  TimePs makespan() const;
  std::vector<results::JobResult> results() const;
  // Jobs still running, with their ranks' state, for "did not finish" errors.
  std::string describeUnfinished() const;
  // A job whose every remaining rank waits with no message on its way
  // (sim::MpiReplay::deadlocked): the job, its ranks and what each waits in,
  // with the trace's file and line; empty when none.
  std::string describeDeadlock() const;

 private:
  struct Running;
  void launch(std::size_t job);
  void finished(std::size_t job);

  sim::FabricEmulator& emu_;
  const std::vector<LoadedJob>& jobs_;
  std::vector<std::unique_ptr<Running>> running_;
  std::uint32_t nextTag_ = 0;
  std::size_t pending_ = 0;  // jobs that do not repeat and have not ended
  TimePs retransmitTimeout_ = sim::MpiReplay::kDefaultRetransmitTimeoutPs;
};

// The slowdown of each job against its baseline run, and the largest.
std::vector<results::JobComparison> compareJobs(const results::RunSummary& run,
                                                const results::RunSummary& baseline, double* worst);

}  // namespace ebb::replay
