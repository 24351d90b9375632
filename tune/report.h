#pragma once

#include <set>
#include <string>

#include "common/status.h"
#include "tune/search.h"
#include "tune/spec.h"

namespace ebb::tune {

// Writes under `dir`: runs.csv and runs.json (every run), settings.csv (every
// setting at its last replay length), pareto.csv (saving vs penalty),
// recommended.textproto (the best setting within budget, an `ebb replay`
// config of the first workload) and, unless plan.plots is off, plots/ with
// pareto.{png,svg} and thresholds.{png,svg} via gnuplot. E_IO names the file.
// Every name writeTuneOutputs may write (relative to its folder).
std::set<std::string> tuneOutputNames();
Result<std::string> writeTuneOutputs(const std::string& dir, const TunePlan& plan,
                                     const TuneResult& result);

// The recommended setting as a ready-to-use config (with a comment header).
Result<std::string> recommendedConfig(const TunePlan& plan, const TuneResult& result);

// The human summary printed on stdout.
std::string formatTuneSummary(const TunePlan& plan, const TuneResult& result);

}  // namespace ebb::tune
