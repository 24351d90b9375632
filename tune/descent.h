#pragma once

#include "common/status.h"
#include "tune/evaluator.h"
#include "tune/search.h"
#include "tune/spec.h"

namespace ebb::tune {

// Coordinate descent over the grid's dimensions, at full length: from the
// first setting within the threshold map, try every value of one dimension
// (the others fixed), move to the best by betterThan, next dimension; stop
// after a pass without a move or plan.maxPasses. Fills result.rungs with every
// setting evaluated and result.passes.
Status coordinateDescent(const TunePlan& plan, Evaluator& evaluator, TuneResult& result);

}  // namespace ebb::tune
