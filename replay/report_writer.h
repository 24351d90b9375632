#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "configs/proto/report.pb.h"  // generated
#include "replay/runner.h"

namespace ebb::replay {

// Writes a run's outputs under `dir`: report.json (protobuf JSON mapping),
// timeseries.csv (and baseline_timeseries.csv), decisions.jsonl, and with
// `plots` the PNG and SVG figures under plots/ (gnuplot). E_IO names the file.
Status writeReport(const std::string& dir, const results::Report& report, const RunOutput& run,
                   const std::optional<RunOutput>& baseline, bool plots, int levelPairs);

// The human summary printed on stdout.
std::string formatSummary(const results::Report& report);

}  // namespace ebb::replay
