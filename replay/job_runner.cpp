// Closed-loop jobs at run time: each job's MPI replay started, repeated and
// stopped as the mix says, its results and the comparison with the baseline's.
#include <algorithm>

#include <fmt/format.h>

#include "replay/jobs.h"
#include "sim_backend/fabric_emulator.h"
#include "sim_backend/mpi_replay.h"

namespace ebb::replay {

struct JobRunner::Running {
  std::unique_ptr<sim::MpiReplay> replay;
  std::unique_ptr<sim::MpiReplay> previous;  // kept until the next run has started
  TimePs startedAt = 0;
  TimePs runtimeSum = 0;
  TimePs lastEnd = 0;
  TimePs stoppedAt = -1;  // a repeating run abandoned when the others ended
  std::uint64_t runs = 0;
  std::uint64_t messages = 0;  // of replays no longer current
  std::uint64_t bytes = 0;
  std::uint64_t retransmissions = 0;  // of replays no longer kept
};

JobRunner::JobRunner(sim::FabricEmulator& emu, const std::vector<LoadedJob>& jobs)
    : emu_(emu), jobs_(jobs) {
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    running_.push_back(std::make_unique<Running>());
    pending_ += jobs_[i].def.repeat ? 0u : 1u;
  }
}

JobRunner::~JobRunner() = default;

void JobRunner::start() {
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    emu_.scheduler().at(emu_.scheduler().now() + jobs_[i].def.startPs, agent::Phase::kControl,
                        [this, i] { launch(i); });
  }
}

void JobRunner::launch(std::size_t job) {
  Running& r = *running_[job];
  const LoadedJob& j = jobs_[job];
  if (r.replay) {
    r.messages += r.replay->messagesSent();
    r.bytes += r.replay->bytesSent();
  }
  // The finished replay may still get deliveries of sends nobody waited for:
  // its own tag range keeps them apart; it is dropped one run later.
  if (r.previous) r.retransmissions += r.previous->retransmissions();
  r.previous = std::move(r.replay);
  r.replay = std::make_unique<sim::MpiReplay>(emu_, j.program, j.hosts, nextTag_);
  r.replay->setRetransmitTimeout(retransmitTimeout_);
  nextTag_ += static_cast<std::uint32_t>(sim::MpiReplay::tagsNeeded(j.program));
  r.startedAt = emu_.scheduler().now();
  r.replay->onDone([this, job] { finished(job); });
  r.replay->start();
}

void JobRunner::finished(std::size_t job) {
  Running& r = *running_[job];
  ++r.runs;
  r.lastEnd = r.replay->runtime();
  r.runtimeSum += r.lastEnd - r.startedAt;
  if (!jobs_[job].def.repeat) {
    if (--pending_ == 0) {
      // The run is over: repeating jobs stop where they are.
      for (std::size_t i = 0; i < jobs_.size(); ++i) {
        if (jobs_[i].def.repeat && running_[i]->replay && !running_[i]->replay->done()) {
          running_[i]->replay->stop();
          running_[i]->stoppedAt = emu_.scheduler().now();
        }
      }
    }
  } else if (pending_ > 0) {
    // Not from inside the replay that just ended.
    emu_.scheduler().at(emu_.scheduler().now(), agent::Phase::kControl, [this, job] {
      if (pending_ > 0) launch(job);
    });
  }
}

void JobRunner::onDelivery(const sim::Delivery& d) {
  for (auto& r : running_) {
    if (r->replay && r->replay->onDelivery(d)) return;
    if (r->previous && r->previous->onDelivery(d)) return;
  }
}

void JobRunner::onDrop(const sim::Drop& d) {
  for (auto& r : running_) {
    if (r->replay && r->replay->onDrop(d)) return;
    if (r->previous && r->previous->onDrop(d)) return;
  }
}

std::uint64_t JobRunner::retransmissions() const {
  std::uint64_t n = 0;
  for (const auto& r : running_) {
    n += r->retransmissions + (r->replay ? r->replay->retransmissions() : 0) +
         (r->previous ? r->previous->retransmissions() : 0);
  }
  return n;
}

bool JobRunner::done() const {
  return pending_ == 0;
}

std::uint64_t JobRunner::messagesSent() const {
  std::uint64_t n = 0;
  for (const auto& r : running_)
    n += r->messages + (r->replay ? r->replay->messagesSent() : 0);
  return n;
}

std::uint64_t JobRunner::bytesSent() const {
  std::uint64_t n = 0;
  for (const auto& r : running_)
    n += r->bytes + (r->replay ? r->replay->bytesSent() : 0);
  return n;
}

TimePs JobRunner::makespan() const {
  TimePs end = 0;
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    if (!jobs_[i].def.repeat) end = std::max(end, running_[i]->lastEnd);
  }
  return end;
}

std::vector<results::JobResult> JobRunner::results() const {
  std::vector<results::JobResult> out;
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const Running& r = *running_[i];
    const LoadedJob& j = jobs_[i];
    results::JobResult x;
    x.set_name(j.def.name);
    x.set_ranks(j.program.ranks.size());
    for (fabric::HostId h : j.hosts)
      x.add_hosts(h.value());
    x.set_start_us(toMicroseconds(j.def.startPs));
    x.set_runs(r.runs);
    if (r.runs > 0) {
      x.set_runtime_us(toMicroseconds(r.runtimeSum) / static_cast<double>(r.runs));
    } else if (r.stoppedAt >= 0) {
      x.set_runtime_us(toMicroseconds(r.stoppedAt - r.startedAt));
      x.set_incomplete(true);
    }
    x.set_messages(r.messages + (r.replay ? r.replay->messagesSent() : 0));
    x.set_bytes(r.bytes + (r.replay ? r.replay->bytesSent() : 0));
    out.push_back(std::move(x));
  }
  return out;
}

std::string JobRunner::describeUnfinished() const {
  std::string s;
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const Running& r = *running_[i];
    if (jobs_[i].def.repeat || r.runs > 0) continue;
    s += fmt::format("{}{}: {} of {} ranks finished", s.empty() ? "" : "; ", jobs_[i].def.name,
                     r.replay ? r.replay->ranksDone() : 0, jobs_[i].program.ranks.size());
  }
  return s;
}

namespace {

std::string describeWait(const workload::MpiOp& op) {
  switch (op.kind) {
    case workload::MpiOpKind::kSend:
      return fmt::format("send to rank {} (tag {})", op.peer, op.tag);
    case workload::MpiOpKind::kRecv:
      return fmt::format("recv from rank {} (tag {})", op.peer, op.tag);
    case workload::MpiOpKind::kWaitall:
      return fmt::format("waitall of {} requests", op.count);
    case workload::MpiOpKind::kWait:
      return "wait";
    default:
      return "an op";
  }
}

}  // namespace

std::string JobRunner::describeDeadlock() const {
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const Running& r = *running_[i];
    if (!r.replay || !r.replay->deadlocked()) continue;
    const LoadedJob& j = jobs_[i];
    const auto waiting = r.replay->waitingRanks();
    std::string s = fmt::format(
        "job {}: deadlock: all {} unfinished ranks wait and no message is "
        "on its way:",
        j.def.name, waiting.size());
    constexpr std::size_t kShown = 8;
    for (std::size_t k = 0; k < std::min(kShown, waiting.size()); ++k) {
      const auto& [rank, op] = waiting[k];
      s += fmt::format("{} rank {} waits in {}{}", k == 0 ? "" : ";", rank, describeWait(*op),
                       op->line > 0
                           ? fmt::format(" ({}:{})", j.program.fileOf(rank, j.def.path), op->line)
                           : "");
    }
    if (waiting.size() > kShown) s += fmt::format("; and {} more", waiting.size() - kShown);
    return s;
  }
  return {};
}

std::vector<results::JobComparison> compareJobs(const results::RunSummary& run,
                                                const results::RunSummary& baseline,
                                                double* worst) {
  std::vector<results::JobComparison> out;
  double w = 0;
  bool measured = false;  // w holds a measured job's slowdown
  for (const auto& j : run.jobs()) {
    for (const auto& b : baseline.jobs()) {
      if (b.name() != j.name()) continue;
      results::JobComparison c;
      c.set_name(j.name());
      c.set_runtime_us(j.runtime_us());
      c.set_baseline_runtime_us(b.runtime_us());
      c.set_slowdown(b.runtime_us() > 0 ? j.runtime_us() / b.runtime_us() - 1.0 : 0.0);
      // An unfinished run took at least this long; an unfinished baseline
      // bounds nothing, so no slowdown is claimed then.
      c.set_lower_bound(j.incomplete() || b.incomplete());
      if (b.incomplete()) {
        c.set_slowdown(0.0);
        c.set_not_measured(true);
      } else {
        w = measured ? std::max(w, c.slowdown()) : c.slowdown();
        measured = true;
      }
      out.push_back(std::move(c));
    }
  }
  if (worst) *worst = w;
  return out;
}

}  // namespace ebb::replay
