#include "tools/tune_descent.h"

#include <algorithm>

#include <fmt/format.h>

#include "tools/tune_grid.h"

namespace ebb::tools::tune {

namespace {

// The first combination, in grid order, of a setting within the map.
std::vector<std::size_t> start(const TunePlan& plan) {
  std::vector<std::size_t> at(plan.dimensions.size(), 0);
  while (true) {
    const std::optional<std::size_t> id = settingAt(plan, at);
    if (id && plan.settings[*id].mapValid()) return at;
    std::size_t i = plan.dimensions.size();
    while (i-- > 0) {
      if (++at[i] < plan.dimensions[i].values.size()) break;
      at[i] = 0;
    }
    if (i == static_cast<std::size_t>(-1)) return at;  // unreachable: the plan has a valid one
  }
}

}  // namespace

Status coordinateDescent(const TunePlan& plan, Evaluator& evaluator, TuneResult& result) {
  std::vector<std::size_t> at = start(plan);
  std::size_t current = settingAt(plan, at).value();
  Result<std::vector<SettingResult>> first = evaluator.evaluate({current}, 1.0, "start");
  if (!first) return first.status();
  SettingResult best = first->front();
  for (result.passes = 1; result.passes <= static_cast<std::size_t>(plan.maxPasses);
       ++result.passes) {
    bool moved = false;
    for (std::size_t d = 0; d < plan.dimensions.size(); ++d) {
      std::vector<std::size_t> ids, values;
      for (std::size_t v = 0; v < plan.dimensions[d].values.size(); ++v) {
        std::vector<std::size_t> probe = at;
        probe[d] = v;
        const std::optional<std::size_t> id = settingAt(plan, probe);
        // A dimension that does not apply here (U_off of dynamic thresholds)
        // maps every value onto the current setting.
        if (!id || !plan.settings[*id].mapValid()) continue;
        if (std::find(ids.begin(), ids.end(), *id) != ids.end()) continue;
        ids.push_back(*id);
        values.push_back(v);
      }
      if (ids.size() < 2) continue;
      Result<std::vector<SettingResult>> tried = evaluator.evaluate(
          ids, 1.0, fmt::format("pass {}, {}", result.passes, plan.dimensions[d].path));
      if (!tried) return tried.status();
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (betterThan((*tried)[i], best)) {
          best = (*tried)[i];
          at[d] = values[i];
          moved = moved || ids[i] != current;
          current = ids[i];
        }
      }
    }
    if (!moved) break;
  }
  result.passes = std::min(result.passes, static_cast<std::size_t>(plan.maxPasses));
  result.rungs.push_back(evaluator.evaluatedAt(1.0));
  return Status::ok();
}

}  // namespace ebb::tools::tune
