#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "tune/cache.h"
#include "tune/executor.h"
#include "tune/search.h"
#include "tune/spec.h"

namespace ebb::tune {

// Runs settings on every workload of the plan, next to their all-links-on
// references, through the cache, and keeps every run in `result`.
class Evaluator {
 public:
  Evaluator(const TunePlan& plan, const std::string& cacheDir, const ExecOptions& exec,
            TuneResult& result)
      : plan_(plan), cache_(cacheDir), exec_(exec), result_(result) {}

  // The settings' results at `fraction` of the workloads' length, in the
  // order of `ids`, all run in one batch; a setting evaluated before at that
  // length is not run (nor counted) again. With shards, runs this shard's part
  // only and returns nothing (result.complete turns false).
  Result<std::vector<SettingResult>> evaluate(const std::vector<std::size_t>& ids, double fraction,
                                              const std::string& stage);

  // Every setting evaluated at `fraction`, by id.
  std::vector<SettingResult> evaluatedAt(double fraction) const;

 private:
  const TunePlan& plan_;
  RunCache cache_;
  ExecOptions exec_;
  TuneResult& result_;
  FileDigests digests_;
  std::set<std::string> distinct_;  // every run's hash, for the cost in full-length runs
  std::map<std::pair<double, std::size_t>, SettingResult> done_;
};

}  // namespace ebb::tune
