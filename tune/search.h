#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "configs/proto/replay.pb.h"  // generated
#include "configs/proto/report.pb.h"  // generated
#include "tune/executor.h"
#include "tune/spec.h"

namespace ebb::tune {

// A gated run next to its all-links-on reference. Percentages are increases.
struct RunResult {
  std::size_t setting = 0;
  std::size_t workload = 0;
  double fraction = 1;  // of the workload's length
  std::string hash;     // of the gated run (the cache file)
  results::RunSummary run;
  results::RunSummary baseline;
  double savingSwitchLinks = 0;  // 1 - run / baseline power
  double savingAllLinks = 0;
  double meanLatencyPct = 0;
  double p99LatencyPct = 0;
  std::optional<double> appSlowdownPct;  // traces only
  std::string broken;                    // the budget rule broken; empty: within budget
  bool undelivered = false;              // stranded more messages than all links on
  bool failed = false;                   // the emulator gave up (broken says why)
};

// A setting over every workload at one replay length.
struct SettingResult {
  std::size_t setting = 0;
  double fraction = 1;
  double saving = 0;      // the objective, mean over the workloads (0..1)
  double penaltyPct = 0;  // the largest bounded penalty over the workloads
  std::string penaltyOf;  // which it is: "p99 latency on amg" (empty: none above 0)
  double excess = 0;      // how far past the budget, relative to it (0 when within)
  bool feasible = false;
  bool failed = false;  // a run failed: ranked last, left out of the front and plots
  std::string broken;   // first rule broken, with the workload
  // A rule broken on a workload run whole (not shortened): the same run
  // would break it at full length, so halving does not keep the setting.
  bool brokenWhole = false;
};

struct TuneResult {
  std::vector<RunResult> runs;                    // every run, every rung
  std::vector<std::vector<SettingResult>> rungs;  // per rung, settings in id order
  std::optional<std::size_t> best;                // a setting id
  std::size_t fullRuns = 0;    // gated runs at full length (the search's real cost)
  double fullEquivalents = 0;  // every emulator run, weighted by its length
  ExecCounters counters;
  bool complete = true;    // false: one shard of a sweep, nothing evaluated
  std::size_t passes = 0;  // coordinate descent: passes over the dimensions

  const std::vector<SettingResult>& final() const { return rungs.back(); }
};

// Compares each run with its reference and applies the budget.
RunResult compare(const TunePlan& plan, const results::RunSummary& run,
                  const results::RunSummary& baseline, std::size_t workload);
SettingResult aggregate(const TunePlan& plan, const std::vector<const RunResult*>& runs);

// Best first: feasible by saving (then smaller penalty), then the others by
// how far they are past the budget. Ties go to the smaller id.
bool betterThan(const SettingResult& a, const SettingResult& b);

// The settings no other one beats on both saving and penalty, by penalty.
std::vector<const SettingResult*> paretoFront(const std::vector<SettingResult>& settings);

// The ids of the `keep` settings a halving rung passes on to the next one.
std::vector<std::size_t> survivors(const std::vector<SettingResult>& settings, std::size_t keep);

// Runs the search of the plan (grid, halving, coordinate descent), cached under
// cacheDir. With shards, runs this shard's part of the grid and evaluates nothing.
Result<TuneResult> runTune(const TunePlan& plan, const std::string& cacheDir,
                           const ExecOptions& exec);

}  // namespace ebb::tune
