#include "tune/descent.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "tune/grid.h"

namespace ebb::tune {

namespace {

// A dimension held at one value during a descent (the gating policy).
struct Fixed {
  std::size_t dim;
  std::size_t value;
};

bool isValid(const TunePlan& plan, const std::vector<std::size_t>& at) {
  const std::optional<std::size_t> id = settingAt(plan, at);
  return id && plan.settings[*id].mapValid();
}

// The first combination, in grid order, of a setting within the map (and
// with the fixed value); nullopt when there is none.
std::optional<std::vector<std::size_t>> start(const TunePlan& plan,
                                              const std::optional<Fixed>& fixed) {
  std::vector<std::size_t> at(plan.dimensions.size(), 0);
  while (true) {
    if ((!fixed || at[fixed->dim] == fixed->value) && isValid(plan, at)) return at;
    std::size_t i = plan.dimensions.size();
    while (i-- > 0) {
      if (++at[i] < plan.dimensions[i].values.size()) break;
      at[i] = 0;
    }
    if (i == static_cast<std::size_t>(-1)) return std::nullopt;
  }
}

// Where a descent is: its point, the setting there and its result.
struct Position {
  std::vector<std::size_t> at;
  std::size_t id = 0;
  SettingResult result;
};

// Evaluates the candidate points in one batch and moves to the best of them
// if it beats the current position.
Result<bool> moveToBest(const TunePlan& plan, Evaluator& evaluator,
                        const std::vector<std::vector<std::size_t>>& points,
                        const std::string& stage, Position& pos) {
  std::vector<std::size_t> ids;
  std::vector<std::vector<std::size_t>> kept;
  for (const auto& p : points) {
    const std::optional<std::size_t> id = settingAt(plan, p);
    // Values of a dimension that does not apply here (U_off of dynamic
    // thresholds) all map onto the current setting.
    if (!id || *id == pos.id || !plan.settings[*id].mapValid()) continue;
    if (std::find(ids.begin(), ids.end(), *id) != ids.end()) continue;
    ids.push_back(*id);
    kept.push_back(p);
  }
  if (ids.empty()) return false;
  Result<std::vector<SettingResult>> tried = evaluator.evaluate(ids, 1.0, stage);
  if (!tried) return tried.status();
  bool moved = false;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (betterThan((*tried)[i], pos.result)) {
      pos = {kept[i], ids[i], (*tried)[i]};
      moved = true;
    }
  }
  return moved;
}

// The points one step away in two dimensions at once.
std::vector<std::vector<std::size_t>> diagonals(const TunePlan& plan,
                                                const std::vector<std::size_t>& at,
                                                const std::optional<Fixed>& fixed) {
  std::vector<std::vector<std::size_t>> out;
  const std::size_t n = plan.dimensions.size();
  const auto step = [&](std::size_t d, int s, std::vector<std::size_t>& p) {
    if (s < 0 && p[d] == 0) return false;
    p[d] = s < 0 ? p[d] - 1 : p[d] + 1;
    return p[d] < plan.dimensions[d].values.size();
  };
  for (std::size_t d1 = 0; d1 < n; ++d1) {
    for (std::size_t d2 = d1 + 1; d2 < n; ++d2) {
      if (fixed && (d1 == fixed->dim || d2 == fixed->dim)) continue;
      for (int s1 : {-1, 1}) {
        for (int s2 : {-1, 1}) {
          std::vector<std::size_t> p = at;
          if (step(d1, s1, p) && step(d2, s2, p)) out.push_back(p);
        }
      }
    }
  }
  return out;
}

Status descend(const TunePlan& plan, Evaluator& evaluator, const std::optional<Fixed>& fixed,
               std::size_t& passes) {
  const std::optional<std::vector<std::size_t>> from = start(plan, fixed);
  if (!from) return Status::ok();
  Position pos;
  pos.at = *from;
  pos.id = settingAt(plan, pos.at).value();
  const std::string prefix =
      fixed ? plan.dimensions[fixed->dim].values[fixed->value] + ", " : std::string();
  Result<std::vector<SettingResult>> first = evaluator.evaluate({pos.id}, 1.0, prefix + "start");
  if (!first) return first.status();
  pos.result = first->front();
  for (std::size_t pass = 1; pass <= static_cast<std::size_t>(plan.maxPasses); ++pass) {
    passes = std::max(passes, pass);
    bool moved = false;
    for (std::size_t d = 0; d < plan.dimensions.size(); ++d) {
      if (fixed && d == fixed->dim) continue;
      std::vector<std::vector<std::size_t>> line;
      for (std::size_t v = 0; v < plan.dimensions[d].values.size(); ++v) {
        line.push_back(pos.at);
        line.back()[d] = v;
      }
      Result<bool> m =
          moveToBest(plan, evaluator, line,
                     fmt::format("{}pass {}, {}", prefix, pass, plan.dimensions[d].path), pos);
      if (!m) return m.status();
      moved = moved || *m;
    }
    if (!moved) {
      // One dimension at a time is stuck where two must move together (a
      // higher U_on only within budget with a shorter period): try the
      // diagonal neighbours before giving up.
      Result<bool> m = moveToBest(plan, evaluator, diagonals(plan, pos.at, fixed),
                                  fmt::format("{}pass {}, diagonal steps", prefix, pass), pos);
      if (!m) return m.status();
      if (!*m) break;
    }
  }
  return Status::ok();
}

}  // namespace

Status coordinateDescent(const TunePlan& plan, Evaluator& evaluator, TuneResult& result) {
  // Static and dynamic thresholds are different mechanisms (U_off exists for
  // one only): one descent per policy, the best of them wins.
  std::optional<std::size_t> policyDim;
  for (std::size_t d = 0; d < plan.dimensions.size(); ++d) {
    if (plan.dimensions[d].path == "gating.policy" && plan.dimensions[d].values.size() > 1) {
      policyDim = d;
    }
  }
  if (policyDim) {
    for (std::size_t v = 0; v < plan.dimensions[*policyDim].values.size(); ++v) {
      if (Status s = descend(plan, evaluator, Fixed{*policyDim, v}, result.passes); !s.isOk()) {
        return s;
      }
    }
  } else if (Status s = descend(plan, evaluator, std::nullopt, result.passes); !s.isOk()) {
    return s;
  }
  result.rungs.push_back(evaluator.evaluatedAt(1.0));
  return Status::ok();
}

}  // namespace ebb::tune
