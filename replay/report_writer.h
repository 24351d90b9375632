#pragma once

#include <optional>
#include <set>
#include <string>

#include "common/status.h"
#include "configs/proto/report.pb.h"  // generated
#include "replay/runner.h"

namespace ebb::replay {

// Writes a run's outputs under `dir` as one set (common/output_set.h: the
// folder holds the earlier run or this one, whole): report.json (protobuf
// JSON mapping), timeseries.csv (and baseline_timeseries.csv),
// decisions.jsonl, and with `plots` the PNG and SVG figures under plots/
// (gnuplot). Returns a warning, empty when none: why the plots could not be
// drawn (the rest is written all the same). E_IO names the file.
Result<std::string> writeReport(const std::string& dir, const results::Report& report,
                                const RunOutput& run, const std::optional<RunOutput>& baseline,
                                bool plots, int levelPairs);

// Every name writeReport may write (relative to `dir`).
std::set<std::string> reportOutputNames();

// The human summary printed on stdout.
std::string formatSummary(const results::Report& report);

}  // namespace ebb::replay
