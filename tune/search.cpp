#include "tune/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "replay/jobs.h"

#include "tune/descent.h"
#include "tune/evaluator.h"

namespace ebb::tune {

namespace {

// Rounding slack: a penalty equal to its bound is within budget.
constexpr double kTolerancePct = 1e-9;

double increasePct(double run, double base) {
  return base > 0 ? 100.0 * (run / base - 1.0) : 0.0;
}

double saving(double run, double base) {
  return base > 0 ? 1.0 - run / base : 0.0;
}

std::string lengthName(double f) {
  return f >= 1.0 ? "full length" : fmt::format("{:.3g} of the length", f);
}

}  // namespace

RunResult compare(const TunePlan& plan, const results::RunSummary& run,
                  const results::RunSummary& baseline, std::size_t workload) {
  RunResult r;
  r.workload = workload;
  r.run = run;
  r.baseline = baseline;
  r.savingSwitchLinks =
      saving(run.relative_power_switch_links(), baseline.relative_power_switch_links());
  r.savingAllLinks = saving(run.relative_power_all_links(), baseline.relative_power_all_links());
  r.meanLatencyPct = increasePct(run.mean_latency_cycles(), baseline.mean_latency_cycles());
  r.p99LatencyPct = increasePct(run.p99_latency_cycles(), baseline.p99_latency_cycles());
  if (baseline.app_runtime_us() > 0) {
    // Mixes: the worst job (each job's slowdown must fit the budget).
    double worst = 0;
    replay::compareJobs(run, baseline, &worst);
    r.appSlowdownPct = run.jobs_size() > 0
                           ? 100.0 * worst
                           : increasePct(run.app_runtime_us(), baseline.app_runtime_us());
  }
  // Latency counts what arrived: a setting that strands messages (neither
  // delivered nor lost to a fault, more than all links on) is out, whatever
  // its latency.
  const auto stranded = [](const results::RunSummary& s) {
    const std::uint64_t done = s.messages_delivered() + s.faults().lost_messages();
    return s.messages_generated() > done ? s.messages_generated() - done : 0;
  };
  if (baseline.messages_delivered() == 0) {
    // Nothing to compare against: no setting can be judged on this workload.
    r.broken = fmt::format(
        "all links on delivered no message ({} generated): nothing to compare "
        "(a workload without traffic?)",
        baseline.messages_generated());
  } else if (stranded(run) > stranded(baseline)) {
    r.undelivered = true;
    r.broken =
        fmt::format("delivered {} of {} messages (all links on: {})", run.messages_delivered(),
                    run.messages_generated(), baseline.messages_delivered());
  }
  const Budget& b = plan.budget;
  // Every bound broken is named (the penalty is the largest of them).
  const auto check = [&](const std::optional<double>& limit, double value, const char* what) {
    if (limit && value > *limit + kTolerancePct) {
      r.broken +=
          fmt::format("{}{} {:+.2f}% > {}%", r.broken.empty() ? "" : "; ", what, value, *limit);
    }
  };
  check(b.meanLatencyPct, r.meanLatencyPct, "mean latency");
  check(b.p99LatencyPct, r.p99LatencyPct, "p99 latency");
  if (r.appSlowdownPct) check(b.appSlowdownPct, *r.appSlowdownPct, "app slowdown");
  return r;
}

SettingResult aggregate(const TunePlan& plan, const std::vector<const RunResult*>& runs) {
  SettingResult s;
  s.feasible = true;
  const Budget& b = plan.budget;
  double sum = 0;
  for (const RunResult* r : runs) {
    s.setting = r->setting;
    s.fraction = r->fraction;
    sum += plan.allLinksObjective ? r->savingAllLinks : r->savingSwitchLinks;
    // The penalty is the largest bounded value, named (mean latency, p99 and
    // slowdown have budgets of their own, so the number alone is ambiguous).
    const auto bound = [&](const std::optional<double>& limit, double value, const char* what) {
      if (!limit) return;
      // Floored at 0: a metric that improved is no penalty and is not named.
      if (value > s.penaltyPct)
        s.penaltyOf = fmt::format("{} on {}", what, plan.workloads[r->workload].name);
      s.penaltyPct = std::max(s.penaltyPct, value);
      s.excess = std::max(s.excess, value - *limit);
    };
    bound(b.meanLatencyPct, r->meanLatencyPct, "mean latency");
    bound(b.p99LatencyPct, r->p99LatencyPct, "p99 latency");
    if (r->appSlowdownPct) bound(b.appSlowdownPct, *r->appSlowdownPct, "app slowdown");
    if (!r->broken.empty() && s.feasible) {
      s.feasible = false;
      s.broken = fmt::format("{} on {}", r->broken, plan.workloads[r->workload].name);
    }
    s.brokenWhole = s.brokenWhole || (!r->broken.empty() && r->fraction >= 1.0);
  }
  s.saving = runs.empty() ? 0 : sum / static_cast<double>(runs.size());
  s.excess = std::max(0.0, s.excess);
  bool undelivered = false;
  for (const RunResult* r : runs) {
    s.failed = s.failed || r->failed;
    undelivered = undelivered || r->undelivered;
  }
  if (s.failed || undelivered) s.excess = std::numeric_limits<double>::infinity();
  return s;
}

bool betterThan(const SettingResult& a, const SettingResult& b) {
  if (a.feasible != b.feasible) return a.feasible;
  if (!a.feasible && a.excess != b.excess) return a.excess < b.excess;
  if (a.saving != b.saving) return a.saving > b.saving;
  if (a.penaltyPct != b.penaltyPct) return a.penaltyPct < b.penaltyPct;
  return a.setting < b.setting;
}

std::vector<const SettingResult*> paretoFront(const std::vector<SettingResult>& settings) {
  std::vector<const SettingResult*> sorted;
  for (const SettingResult& s : settings) {
    if (!s.failed) sorted.push_back(&s);
  }
  // By penalty, then the larger saving first: a point is on the front when it
  // saves strictly more than every point with a smaller or equal penalty, or
  // ties the front's last point exactly (two settings that measure the same
  // are both non-dominated).
  std::sort(sorted.begin(), sorted.end(), [](const SettingResult* a, const SettingResult* b) {
    if (a->penaltyPct != b->penaltyPct) return a->penaltyPct < b->penaltyPct;
    if (a->saving != b->saving) return a->saving > b->saving;
    return a->setting < b->setting;
  });
  std::vector<const SettingResult*> front;
  for (const SettingResult* s : sorted) {
    if (front.empty() || s->saving > front.back()->saving ||
        (s->saving == front.back()->saving && s->penaltyPct == front.back()->penaltyPct)) {
      front.push_back(s);
    }
  }
  return front;
}

std::vector<std::size_t> survivors(const std::vector<SettingResult>& settings, std::size_t keep) {
  // Shortened replays exaggerate every penalty (the ramp is steeper than the
  // agents can follow), so the budget cannot be applied to them; the order of
  // the settings on saving and on penalty holds better. Keep whole Pareto
  // layers (non-dominated sorting), best layer first.
  // A setting that broke the budget on a workload run whole breaks it at
  // full length too (the same run): only the others go on, if any.
  std::vector<const SettingResult*> left;
  for (const SettingResult& s : settings) {
    if (!s.failed && !s.brokenWhole) left.push_back(&s);
  }
  if (left.empty()) {
    for (const SettingResult& s : settings) {
      if (!s.failed) left.push_back(&s);
    }
  }
  std::vector<std::size_t> kept;
  while (kept.size() < keep && !left.empty()) {
    std::vector<const SettingResult*> layer, rest;
    for (const SettingResult* a : left) {
      const bool dominated = std::any_of(left.begin(), left.end(), [&](const SettingResult* b) {
        return b->saving >= a->saving && b->penaltyPct <= a->penaltyPct &&
               (b->saving > a->saving || b->penaltyPct < a->penaltyPct);
      });
      (dominated ? rest : layer).push_back(a);
    }
    std::sort(layer.begin(), layer.end(), [](const SettingResult* a, const SettingResult* b) {
      if (a->saving != b->saving) return a->saving > b->saving;
      if (a->penaltyPct != b->penaltyPct) return a->penaltyPct < b->penaltyPct;
      return a->setting < b->setting;
    });
    const std::size_t room = keep - kept.size();
    if (layer.size() <= room) {
      for (const SettingResult* s : layer)
        kept.push_back(s->setting);
    } else if (room == 1) {
      kept.push_back((*std::min_element(layer.begin(), layer.end(),
                                        [](const SettingResult* a, const SettingResult* b) {
                                          return betterThan(*a, *b);
                                        }))
                         ->setting);
    } else {
      // Evenly along the layer, both ends included: where the budget falls at
      // full length is not known yet.
      for (std::size_t i = 0; i < room; ++i)
        kept.push_back(layer[(i * (layer.size() - 1) + (room - 1) / 2) / (room - 1)]->setting);
    }
    left = std::move(rest);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

Result<TuneResult> runTune(const TunePlan& plan, const std::string& cacheDir,
                           const ExecOptions& exec) {
  if (exec.shardCount > 1 && plan.strategy != Strategy::kGrid) {
    return Status(ErrorCode::kInvalidArgument,
                  "--shard: only a grid search splits across machines (search.strategy: GRID); "
                  "halving and coordinate descent choose each step from the one before");
  }
  TuneResult result;
  Evaluator evaluator(plan, cacheDir, exec, result);
  if (plan.strategy == Strategy::kCoordinate) {
    if (Status s = coordinateDescent(plan, evaluator, result); !s.isOk()) return s;
  } else {
    std::vector<std::size_t> alive;
    for (const Setting& s : plan.settings) {
      if (s.mapValid()) alive.push_back(s.id);
    }
    const std::vector<double> fractions = plan.rungFractions();
    for (std::size_t rung = 0; rung < fractions.size(); ++rung) {
      const double f = fractions[rung];
      const std::string stage = fractions.size() > 1 ? fmt::format("rung {}/{} ({})", rung + 1,
                                                                   fractions.size(), lengthName(f))
                                                     : "";
      Result<std::vector<SettingResult>> settings = evaluator.evaluate(alive, f, stage);
      if (!settings) return settings.status();
      if (!result.complete) return result;
      result.rungs.push_back(*settings);
      if (rung + 1 == fractions.size()) break;
      // Successive halving: the best 1/eta go on to a replay eta times longer.
      const auto keep =
          std::max<std::size_t>(1, (settings->size() + static_cast<std::size_t>(plan.eta) - 1) /
                                       static_cast<std::size_t>(plan.eta));
      alive = survivors(*settings, keep);
    }
  }
  if (!result.complete) return result;
  const SettingResult* best = nullptr;
  for (const SettingResult& s : result.final()) {
    if (s.feasible && (!best || betterThan(s, *best))) best = &s;
  }
  if (best) result.best = best->setting;
  return result;
}

}  // namespace ebb::tune
