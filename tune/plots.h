#pragma once

#include <string>

#include "common/status.h"
#include "tune/search.h"
#include "tune/spec.h"

namespace ebb::tune {

// plots/pareto.{png,svg} (saving vs penalty, the front and the recommended
// setting) and plots/thresholds.{png,svg} (a heat map over (U_off, U_on)
// coloured by saving; over budget and outside the threshold map marked), with
// their data files and tune.gp, rendered by gnuplot in `dir` as `ebb replay` does.
Status writeTunePlots(const std::string& dir, const TunePlan& plan, const TuneResult& result);

}  // namespace ebb::tune
