#include "tune/executor.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "fabric/minimal_tree.h"
#include "replay/fabric_from_config.h"
#include "replay/run_spec.h"
#include "replay/runner.h"

namespace ebb::tune {

namespace {

using Clock = std::chrono::steady_clock;

Result<RunOutcome> runOne(const RunJob& job) {
  Result<replay::RunSpec> spec = replay::buildRunSpec(job.cfg);
  if (!spec) return spec.status();
  Result<fabric::Topology> topo = replay::topologyFromConfig(job.cfg.fabric(), "");
  if (!topo) return topo.status();
  Result<fabric::MinimalTree> mt = fabric::MinimalTree::build(*topo);
  if (!mt) return mt.status();
  Result<replay::RunOutput> run = replay::runEmulation(*spec, *topo, *mt, job.gated, {});
  if (run) return RunOutcome{run->summary, ""};
  const Status failed = run.status();
  const bool badInput = failed.code() == ErrorCode::kIo || failed.code() == ErrorCode::kParse;
  if (!job.gated || badInput) return failed;
  return RunOutcome{{}, failed.toString()};
}

std::string clock(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

// "ebb tune: rung 1/3: 12/40 runs (30%), 0:42 elapsed, ETA 1:38  <the run just done>"
class ProgressMeter {
 public:
  ProgressMeter(const ExecOptions& o, std::size_t total) : o_(o), total_(total) {}
  void done(const std::string& label) {
    if (!o_.progress || total_ == 0) return;
    std::lock_guard lock(mu_);
    ++done_;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double eta = elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
    *o_.progress << fmt::format("{}ebb tune: {}{}/{} runs ({:.0f}%), {} elapsed, ETA {}  {}",
                                o_.tty ? "\r\033[K" : "", o_.stage.empty() ? "" : o_.stage + ": ",
                                done_, total_,
                                100.0 * static_cast<double>(done_) / static_cast<double>(total_),
                                clock(elapsed), clock(eta), label)
                 << (o_.tty && done_ < total_ ? "" : "\n") << std::flush;
  }

 private:
  const ExecOptions& o_;
  std::size_t total_;
  std::size_t done_ = 0;
  Clock::time_point start_ = Clock::now();
  std::mutex mu_;
};

}  // namespace

Result<std::map<std::string, RunOutcome>> executeRuns(const std::vector<RunJob>& jobs,
                                                      const RunCache& cache,
                                                      const ExecOptions& options,
                                                      ExecCounters& counters) {
  std::map<std::string, RunOutcome> results;
  std::vector<const RunJob*> todo;
  std::set<std::string> seen;
  std::size_t index = 0;
  for (const RunJob& j : jobs) {
    if (!seen.insert(j.key.hash).second) continue;
    const bool mine = index++ % static_cast<std::size_t>(options.shardCount) ==
                      static_cast<std::size_t>(options.shardIndex);
    if (std::optional<RunOutcome> hit = cache.load(j.key)) {
      results[j.key.hash] = std::move(*hit);
      ++counters.cached;
    } else if (!mine) {
      ++counters.skipped;
    } else if (!options.computeMissing) {
      if (const std::string why = cache.corruption(j.key); !why.empty()) {
        return Status(ErrorCode::kParse,
                      fmt::format("run '{}': {}, and no merged folder has a good copy: run its "
                                  "shard again",
                                  j.label, why));
      }
      return Status(ErrorCode::kNotFound,
                    fmt::format("run '{}' ({}) is in none of the merged folders: did a shard "
                                "fail or use another spec?",
                                j.label, j.key.hash));
    } else {
      todo.push_back(&j);
    }
  }
  ProgressMeter meter(options, todo.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  Status firstError;
  const auto worker = [&] {
    while (!failed) {
      const std::size_t i = next++;
      if (i >= todo.size()) return;
      const RunJob& j = *todo[i];
      Result<RunOutcome> r = runOne(j);
      Status s = r ? cache.store(j.key, *r) : r.status();
      if (s.isOk() && options.stored != nullptr) ++*options.stored;
      std::lock_guard lock(mu);
      if (!s.isOk()) {
        if (!failed.exchange(true)) {
          firstError = Status(s.code(), fmt::format("run '{}': {}", j.label, s.message()));
        }
        return;
      }
      results[j.key.hash] = *r;
      ++counters.computed;
      meter.done(j.label);
    }
  };
  const auto threads = std::min<std::size_t>(static_cast<std::size_t>(std::max(1, options.jobs)),
                                             std::max<std::size_t>(1, todo.size()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool)
    t.join();
  if (failed) return firstError;
  return results;
}

}  // namespace ebb::tune
