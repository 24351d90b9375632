#include "replay/workload_source.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "replay/jobs.h"
#include "sim_backend/fabric_emulator.h"
#include "sim_backend/synthetic_traffic.h"
#include "sim_backend/traffic_file_source.h"
#include "workload/hotspot.h"
#include "workload/traffic_file.h"

namespace ebb::replay {

namespace {

// Uniform synthetic traffic following the spec's rate profile.
class SyntheticSource final : public WorkloadSource {
 public:
  SyntheticSource(sim::FabricEmulator& emu, const workload::SyntheticSpec& spec)
      : spec_(spec), traffic_(emu, spec) {}
  void start() override { traffic_.start(); }
  std::uint64_t messagesGenerated() const override { return traffic_.generated(); }
  std::uint64_t bytesGenerated() const override { return traffic_.bytesGenerated(); }
  TimePs horizon() const override { return spec_.rate.end(); }
  bool hasRateProfile() const override { return true; }
  double rateAt(TimePs t) const override { return spec_.rate.at(t); }
  bool risingAt(TimePs t) const override { return spec_.rate.rising(t); }

 private:
  workload::SyntheticSpec spec_;
  sim::SyntheticTraffic traffic_;
};

// A native traffic file, streamed open-loop.
class FileSource final : public WorkloadSource {
 public:
  FileSource(sim::FabricEmulator& emu, std::unique_ptr<workload::TrafficReader> reader,
             TimePs horizon, TimePs createdBefore)
      : file_(emu, std::move(reader)), horizon_(horizon), createdBefore_(createdBefore) {}
  void start() override { file_.start(); }
  std::uint64_t messagesGenerated() const override { return file_.generated(); }
  std::uint64_t bytesGenerated() const override { return file_.bytesGenerated(); }
  TimePs horizon() const override { return horizon_; }
  TimePs createdBefore() const override { return createdBefore_; }
  Status status() const override { return file_.status(); }

 private:
  sim::TrafficFileSource file_;
  TimePs horizon_;
  TimePs createdBefore_;
};

// Closed-loop jobs: MPI traces, collective loops, mixes.
class JobsSource final : public WorkloadSource {
 public:
  JobsSource(sim::FabricEmulator& emu, std::vector<LoadedJob> jobs, TimePs horizon,
             TimePs retransmitTimeout)
      : jobs_(std::move(jobs)), runner_(emu, jobs_), horizon_(horizon) {
    runner_.setRetransmitTimeout(retransmitTimeout);
  }
  void start() override { runner_.start(); }
  void onDelivery(const sim::Delivery& d) override { runner_.onDelivery(d); }
  void onDrop(const sim::Drop& d) override { runner_.onDrop(d); }
  std::uint64_t retransmissions() const override { return runner_.retransmissions(); }
  std::uint64_t messagesGenerated() const override { return runner_.messagesSent(); }
  std::uint64_t bytesGenerated() const override { return runner_.bytesSent(); }
  TimePs horizon() const override { return horizon_; }
  bool closedLoop() const override { return true; }
  bool done() const override { return runner_.done(); }
  std::string describeUnfinished() const override { return runner_.describeUnfinished(); }
  std::string describeDeadlock() const override { return runner_.describeDeadlock(); }
  void summarize(results::RunSummary& s) const override {
    s.set_app_runtime_us(toMicroseconds(runner_.makespan()));
    std::uint64_t ranks = 0;
    for (results::JobResult& j : runner_.results()) {
      ranks += j.ranks();
      *s.add_jobs() = std::move(j);
    }
    s.set_ranks(ranks);
  }

 private:
  std::vector<LoadedJob> jobs_;  // before runner_: it keeps a reference
  JobRunner runner_;
  TimePs horizon_;
};

// Progress of a closed loop is measured against the longest job's compute
// time (repeating jobs excluded: they run as long as the others).
// The latest a rank's start and compute alone take it to; E_INVALID when that
// is beyond what virtual time can hold.
}  // namespace

Result<std::unique_ptr<WorkloadSource>> makeWorkloadSource(const RunSpec& spec,
                                                           sim::FabricEmulator& emu) {
  const auto hosts = static_cast<std::uint32_t>(emu.topology().numHosts());
  if (!spec.jobs.jobs.empty()) {
    Result<std::vector<LoadedJob>> loaded = loadJobs(spec.jobs, hosts, emu.config().seed);
    if (!loaded) return loaded.status();
    const Result<TimePs> horizon = jobsHorizon(*loaded, spec.agent.checkPeriodPs);
    if (!horizon) return horizon.status();
    return std::unique_ptr<WorkloadSource>(std::make_unique<JobsSource>(
        emu, std::move(*loaded), *horizon, spec.faults.retransmitTimeoutPs));
  }
  if (!spec.trafficFile.empty()) {
    // Checked whole before anything runs: hosts in range, times in order.
    Result<workload::TrafficFileSummary> sum =
        workload::validateTrafficFile(spec.trafficFile, hosts, spec.messageLimit);
    if (!sum) return sum.status();
    auto reader = workload::TrafficReader::open(spec.trafficFile);
    if (!reader) return reader.status();
    const TimePs createdBefore = saturatingAdd(sum->lastTime, 1);
    const TimePs horizon = std::max<TimePs>(createdBefore, spec.agent.checkPeriodPs);
    return std::unique_ptr<WorkloadSource>(
        std::make_unique<FileSource>(emu, std::move(*reader), horizon, createdBefore));
  }
  // Synthetic traffic sends each message to a host other than its source.
  if (hosts < 2) {
    return invalidArgument(
        fmt::format("workload: synthetic traffic ({}) needs at least 2 hosts; the fabric has {}",
                    spec.workloadName, hosts));
  }
  // The cost before the work: the messages the rate profile makes here.
  const double messages = syntheticMessages(spec, hosts);
  if (messages > static_cast<double>(spec.maxMessages)) {
    return invalidArgument(fmt::format(
        "workload: about {:.3g} messages on {} hosts ({}), more than the limit of {}: shorten "
        "the workload, or raise workload.max_messages deliberately",
        messages, hosts, spec.workloadName, spec.maxMessages));
  }
  // Hot hosts named in the config must exist in this fabric.
  Result<std::vector<std::uint32_t>> hot =
      workload::resolveHotspot(spec.workload.hotspot, emu.topology(), spec.workload.seed);
  if (!hot) return hot.status();
  return std::unique_ptr<WorkloadSource>(std::make_unique<SyntheticSource>(emu, spec.workload));
}

double syntheticMessages(const RunSpec& spec, std::size_t hosts) {
  return spec.workload.rate.integral() / static_cast<double>(spec.emulator.cyclePs) *
         static_cast<double>(hosts) /
         static_cast<double>(spec.emulator.messageFlits(spec.workload.messageBytes));
}

}  // namespace ebb::replay
