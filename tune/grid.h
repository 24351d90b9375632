#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "configs/proto/ebb.pb.h"   // generated
#include "configs/proto/tune.pb.h"  // generated
#include "tune/spec.h"

namespace ebb::tune {

// A number as an override value: integral values without a fraction, others
// rounded to 1e-9 so that 0.1 + 2 * 0.05 prints as 0.2.
std::string formatValue(double v);

// The values of a Range (empty when nothing is set). E_INVALID names `field`
// and the rule: values and from/to/step together, step <= 0, to < from.
Result<std::vector<double>> expandRange(const config::Range& r, const std::string& field);

// The Cartesian product of the search space over `base`, without the
// combinations that do not apply (U_off without static thresholds, a hold
// without low-power idle) and duplicates. Settings outside the map of valid
// thresholds are kept and flagged. Fills plan.settings and plan.dimensions;
// E_INVALID names the field for values outside the map or an empty grid.
Status expandGrid(const config::SearchSpace& space, TunePlan& plan);

// The setting at one value index per dimension (nullopt: not in the grid).
std::optional<std::size_t> settingAt(const TunePlan& plan, const std::vector<std::size_t>& at);

}  // namespace ebb::tune
