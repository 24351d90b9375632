// `ebb tune` search: the Pareto front, the recommendation, halving's survivors,
// resuming an interrupted sweep from the cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "tests/tune/tune_test_util.h"
#include "tune/report.h"
#include "tune/search.h"

namespace ebb::tune {
namespace {

using testing::planFrom;
using testing::scratch;
using testing::slurp;
using testing::tinyRampBase;

SettingResult point(std::size_t id, double saving, double penalty, bool feasible = true) {
  SettingResult s;
  s.setting = id;
  s.saving = saving;
  s.penaltyPct = penalty;
  s.feasible = feasible;
  return s;
}

std::vector<std::size_t> ids(const std::vector<const SettingResult*>& v) {
  std::vector<std::size_t> out;
  for (const SettingResult* s : v)
    out.push_back(s->setting);
  return out;
}

TEST(TunePareto, KeepsOnlyPointsNoOtherBeatsOnSavingAndPenalty) {
  const std::vector<SettingResult> pts = {
      point(0, 0.10, 0.0), point(1, 0.20, 1.0), point(2, 0.15, 2.0),  // 2: beaten by 1
      point(3, 0.30, 5.0), point(4, 0.30, 6.0),                       // 4: beaten by 3
      point(5, 0.05, 0.0)};                                           // 5: beaten by 0
  EXPECT_EQ(ids(paretoFront(pts)), (std::vector<std::size_t>{0, 1, 3}));
  // Two settings that measure exactly the same are both non-dominated.
  std::vector<SettingResult> tied = pts;
  tied.push_back(point(6, 0.20, 1.0));
  EXPECT_EQ(ids(paretoFront(tied)), (std::vector<std::size_t>{0, 1, 6, 3}));
}

TEST(TuneHalving, SurvivorsAreWholeParetoLayersThenSpreadAlongTheLast) {
  // Layer 1: 0, 1, 3; layer 2 (once those are gone): 2, 4, 5.
  const std::vector<SettingResult> pts = {point(0, 0.10, 0.0), point(1, 0.20, 1.0),
                                          point(2, 0.15, 2.0), point(3, 0.30, 5.0),
                                          point(4, 0.30, 6.0), point(5, 0.05, 0.5)};
  EXPECT_EQ(survivors(pts, 3), (std::vector<std::size_t>{0, 1, 3}));
  EXPECT_EQ(survivors(pts, 6), (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
  // Two of the second layer: its ends by saving (4 and 5), not its middle.
  EXPECT_EQ(survivors(pts, 5), (std::vector<std::size_t>{0, 1, 3, 4, 5}));
  // Two of the first layer: its two ends.
  EXPECT_EQ(survivors(pts, 2), (std::vector<std::size_t>{0, 3}));
}

// A setting that broke the budget on a workload run whole would break it at
// full length: halving drops it, unless nothing else is left.
TEST(TuneHalving, ASettingOverBudgetOnAWholeRunDoesNotSurvive) {
  std::vector<SettingResult> pts = {point(0, 0.10, 0.0), point(1, 0.40, 9.0, false),
                                    point(2, 0.20, 1.0)};
  pts[1].brokenWhole = true;
  EXPECT_EQ(survivors(pts, 2), (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(survivors(pts, 3), (std::vector<std::size_t>{0, 2}));
  for (SettingResult& p : pts)
    p.brokenWhole = true;
  EXPECT_EQ(survivors(pts, 3), (std::vector<std::size_t>{0, 1, 2}));
}

// A traffic file does not shorten: halving runs it whole at every rung, says
// so (fraction 1) and counts it at its full length in the search's cost.
TEST(TuneHalving, AWorkloadThatDoesNotShortenRunsAndCountsWhole) {
  const auto dir = scratch("halving-file");
  const auto file = dir / "pairs.txt";
  {
    std::ofstream out(file);
    for (int i = 0; i < 200; ++i)
      out << i * 500 << " " << i % 16 << " " << (i * 7 + 3) % 16 << " 256\n";
  }
  Result<TunePlan> plan =
      planFrom(tinyRampBase(0.25) +
               "workload { name: \"ramp\" spec { alonso_ramp { time_scale: 0.25 } } } "
               "workload { name: \"file\" spec { traffic_file: \"" +
               file.string() +
               "\" } } budget { latency_increase_pct: 50 } search_space { policy: [DYNAMIC] "
               "u_on { values: [0.1, 0.2, 0.3, 0.45, 0.6] } } search { strategy: HALVING eta: 3 }");
  ASSERT_TRUE(plan) << plan.status().toString();
  ExecOptions exec;
  exec.jobs = 2;
  Result<TuneResult> r = runTune(*plan, (dir / "cache").string(), exec);
  ASSERT_TRUE(r) << r.status().toString();
  ASSERT_GT(r->rungs.size(), 1u);
  std::set<std::string> fileRuns;
  for (const RunResult& run : r->runs) {
    if (plan->workloads[run.workload].name == "file") {
      EXPECT_EQ(run.fraction, 1.0);
      fileRuns.insert(run.hash);
    } else {  // the ramp shortens: each run at its rung's length
      EXPECT_TRUE(std::any_of(r->rungs.begin(), r->rungs.end(), [&](const auto& rung) {
        return rung.front().fraction == run.fraction;
      })) << run.fraction;
    }
  }
  // Each distinct whole run of the file counts once as a full-length run,
  // with the ramp's full-length runs of the last rung.
  EXPECT_EQ(r->fullRuns, fileRuns.size() + r->final().size());
  EXPECT_LT(r->rungs.front().front().fraction, 1.0);
}

// shortens() is the one rule of what a halving rung runs: a uniform workload
// at each rung's share of its length (its warm-up with it), a traffic file
// whole at every rung, as exactly its full-length run (the same cache key,
// warm-up included), with the fraction and the cost to match.
TEST(TuneHalving, ShortensAgreesWithWhatAHalvingRunRuns) {
  const auto dir = scratch("halving-shortens");
  const auto file = dir / "pairs.txt";
  {
    std::ofstream out(file);
    for (int i = 0; i < 200; ++i)
      out << i * 500 << " " << i % 16 << " " << (i * 7 + 3) % 16 << " 256\n";
  }
  Result<TunePlan> plan = planFrom(
      "base { fabric { kary_n_tree { k: 4 n: 2 } } report { latency_warmup_cycles: 900 } } "
      "skip_plots: true workload { name: \"uniform\" spec { uniform { rate: 0.1 "
      "duration_cycles: 18000 } } } workload { name: \"file\" spec { traffic_file: \"" +
      file.string() +
      "\" } } budget { latency_increase_pct: 50 } search_space { policy: [DYNAMIC] "
      "u_on { values: [0.1, 0.2, 0.3, 0.45, 0.6] } } search { strategy: HALVING eta: 3 }");
  ASSERT_TRUE(plan) << plan.status().toString();
  ASSERT_EQ(plan->workloads.size(), 2u);
  EXPECT_TRUE(shortens(plan->workloads[0].spec));
  EXPECT_FALSE(shortens(plan->workloads[1].spec));
  ExecOptions exec;
  exec.jobs = 2;
  Result<TuneResult> r = runTune(*plan, (dir / "cache").string(), exec);
  ASSERT_TRUE(r) << r.status().toString();
  const std::vector<double> fractions = plan->rungFractions();
  ASSERT_EQ(r->rungs.size(), fractions.size());
  ASSERT_LT(fractions.front(), 1.0);
  // The runs of each rung follow those of the one before, every workload of
  // each setting of the rung.
  FileDigests digests;
  std::size_t next = 0;
  std::size_t shortened = 0;
  std::set<std::string> fileRuns;
  for (std::size_t rung = 0; rung < fractions.size(); ++rung) {
    const double f = fractions[rung];
    const std::size_t n = r->rungs[rung].size() * plan->workloads.size();
    ASSERT_LE(next + n, r->runs.size());
    for (std::size_t i = next; i < next + n; ++i) {
      const RunResult& run = r->runs[i];
      const Setting& s = plan->settings[run.setting];
      Result<config::Config> cfg = resolveConfig(*plan, s, run.workload, f);
      Result<config::Config> whole = resolveConfig(*plan, s, run.workload, 1.0);
      ASSERT_TRUE(cfg && whole);
      EXPECT_EQ(run.hash, runKey(*cfg, true, digests).value().hash) << s.label;
      EXPECT_EQ(run.fraction, runFraction(*cfg, f));
      const std::string wholeHash = runKey(*whole, true, digests).value().hash;
      if (shortens(plan->workloads[run.workload].spec)) {
        EXPECT_EQ(run.fraction, f);
        EXPECT_EQ(cfg->workload().uniform().duration_cycles(), std::llround(18000 * f));
        EXPECT_EQ(cfg->report().latency_warmup_cycles(), std::llround(900 * f));
        if (f < 1.0) {
          EXPECT_NE(run.hash, wholeHash);
          ++shortened;
        }
      } else {
        EXPECT_EQ(run.fraction, 1.0);
        EXPECT_EQ(run.hash, wholeHash) << "rung " << rung << ": " << s.label;
        EXPECT_EQ(cfg->report().latency_warmup_cycles(), 900);
        fileRuns.insert(run.hash);
      }
    }
    next += n;
  }
  EXPECT_EQ(next, r->runs.size());
  EXPECT_GT(shortened, 0u);
  // The file's runs at a shortened rung are its full-length runs: counted
  // once each, with the uniform's full-length runs of the last rung.
  EXPECT_EQ(r->fullRuns, fileRuns.size() + r->final().size());
}

// Static and dynamic thresholds on a 4-ary 2-tree, mean and p99 latency <= 3%.
std::string tinyGrid(double scale, const std::string& uOn) {
  return tinyRampBase(scale) +
         "budget { latency_increase_pct: 3 } search_space { policy: [STATIC, DYNAMIC] "
         "u_off { values: [0.04, 0.1] } u_on { values: [" +
         uOn + "] } }";
}

TEST(TuneSearch, TinyGridFrontIsUndominatedAndTheRecommendationIsTheBestWithinBudget) {
  Result<TunePlan> plan = planFrom(tinyGrid(0.5, "0.1, 0.2, 0.3, 0.45, 0.6"));
  ASSERT_TRUE(plan) << plan.status().toString();
  const auto dir = scratch("tiny-grid");
  ExecOptions exec;
  exec.jobs = 2;
  Result<TuneResult> r = runTune(*plan, (dir / "cache").string(), exec);
  ASSERT_TRUE(r) << r.status().toString();
  const auto& all = r->final();
  ASSERT_EQ(all.size(), plan->validSettings());
  EXPECT_EQ(r->fullRuns, all.size());
  const auto front = paretoFront(all);
  ASSERT_FALSE(front.empty());
  for (const SettingResult* f : front) {
    for (const SettingResult& s : all) {
      EXPECT_FALSE(s.saving >= f->saving && s.penaltyPct <= f->penaltyPct &&
                   (s.saving > f->saving || s.penaltyPct < f->penaltyPct))
          << "setting " << s.setting << " dominates front point " << f->setting;
    }
  }
  for (const SettingResult& s : all) {
    const bool onFront = std::any_of(front.begin(), front.end(), [&](const SettingResult* f) {
      return f->setting == s.setting;
    });
    const bool beaten = std::any_of(front.begin(), front.end(), [&](const SettingResult* f) {
      return f->saving >= s.saving && f->penaltyPct <= s.penaltyPct;
    });
    EXPECT_TRUE(onFront || beaten)
        << "setting " << s.setting << " is neither on nor under the front";
  }
  for (std::size_t i = 1; i < front.size(); ++i) {
    EXPECT_GT(front[i]->saving, front[i - 1]->saving);
    EXPECT_GE(front[i]->penaltyPct, front[i - 1]->penaltyPct);
  }
  // Within budget means every penalty within 3%; the recommendation saves most among those.
  ASSERT_TRUE(r->best);
  std::size_t within = 0;
  for (const SettingResult& s : all) {
    within += s.feasible ? 1u : 0u;
    if (s.feasible) {
      EXPECT_LE(s.penaltyPct, 3.0 + 1e-9);
    }
  }
  EXPECT_GT(within, 0u);
  EXPECT_LT(within, all.size()) << "the budget should rule some settings out";
  const SettingResult& best = *std::find_if(
      all.begin(), all.end(), [&](const SettingResult& s) { return s.setting == *r->best; });
  EXPECT_TRUE(best.feasible);
  for (const SettingResult& s : all) {
    if (s.feasible) {
      EXPECT_LE(s.saving, best.saving) << "setting " << s.setting;
    }
  }
  // The files: one pareto.csv row per front point, the outside point listed.
  ASSERT_TRUE(writeTuneOutputs(dir.string(), *plan, *r).isOk());
  const std::string pareto = slurp(dir / "pareto.csv");
  EXPECT_EQ(static_cast<std::size_t>(std::count(pareto.begin(), pareto.end(), '\n')),
            front.size() + 1);
  EXPECT_NE(slurp(dir / "settings.csv").find("outside-threshold-map"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir / "recommended.textproto"));
}

// Thresholds and check period on a 4-ary 2-tree: 44 settings within the map.
std::string widerGrid(const char* strategy) {
  return tinyRampBase(0.25) + "budget { latency_increase_pct: 2 } search_space { " +
         "policy: [STATIC, DYNAMIC] u_off { values: [0.02, 0.04, 0.06, 0.1] } u_on { values: "
         "[0.1, 0.2, 0.3, 0.45, 0.6] } check_period_cycles { values: [1000, 2000] } } "
         "search { strategy: " +
         strategy + " }";
}

TEST(TuneSearch, CoordinateDescentFindsTheGridsBestWithFewerFullRuns) {
  const auto dir = scratch("descent");
  ExecOptions exec;
  exec.jobs = 2;
  Result<TunePlan> grid = planFrom(widerGrid("GRID"));
  Result<TunePlan> descent = planFrom(widerGrid("COORDINATE"));
  ASSERT_TRUE(grid && descent);
  Result<TuneResult> g = runTune(*grid, (dir / "cache").string(), exec);
  Result<TuneResult> d = runTune(*descent, (dir / "cache").string(), exec);
  ASSERT_TRUE(g && d);
  EXPECT_EQ(g->fullRuns, grid->validSettings());
  ASSERT_TRUE(g->best);
  ASSERT_TRUE(d->best);
  EXPECT_EQ(grid->settings[*g->best].label, descent->settings[*d->best].label);
  EXPECT_LT(d->fullRuns, g->fullRuns);
  EXPECT_GE(d->passes, 1u);
  // It ran nothing the grid had not: every run came from the shared cache.
  EXPECT_EQ(d->counters.computed, 0u);
}

TEST(TuneHalving, EachRungKeepsAThirdOfTheOneBeforeAtThriceTheLength) {
  Result<TunePlan> plan = planFrom(widerGrid("HALVING eta: 3"));
  ASSERT_TRUE(plan);
  ExecOptions exec;
  exec.jobs = 2;
  Result<TuneResult> r = runTune(*plan, (scratch("halving") / "cache").string(), exec);
  ASSERT_TRUE(r) << r.status().toString();
  ASSERT_EQ(r->rungs.size(), 3u);
  EXPECT_EQ(r->rungs[0].size(), plan->validSettings());
  for (std::size_t i = 1; i < r->rungs.size(); ++i) {
    EXPECT_EQ(r->rungs[i].size(), (r->rungs[i - 1].size() + 2) / 3);
    EXPECT_NEAR(r->rungs[i].front().fraction, 3 * r->rungs[i - 1].front().fraction, 1e-12);
    for (const SettingResult& s : r->rungs[i]) {
      EXPECT_TRUE(std::any_of(r->rungs[i - 1].begin(), r->rungs[i - 1].end(),
                              [&](const SettingResult& p) { return p.setting == s.setting; }));
    }
  }
  EXPECT_EQ(r->final().front().fraction, 1.0);
  EXPECT_EQ(r->fullRuns, r->final().size());
  EXPECT_LT(r->fullEquivalents, static_cast<double>(plan->validSettings()));
}

TEST(TuneResume, APartialSweepIsNeverRecomputedAndGivesTheSameResult) {
  const auto dir = scratch("resume");
  // The "interrupted" sweep: only part of the grid ran.
  Result<TunePlan> partial = planFrom(tinyGrid(0.25, "0.1, 0.3"));
  Result<TunePlan> full = planFrom(tinyGrid(0.25, "0.1, 0.2, 0.3, 0.45"));
  ASSERT_TRUE(partial && full);
  ExecOptions exec;
  exec.jobs = 2;
  Result<TuneResult> first = runTune(*partial, (dir / "cache").string(), exec);
  ASSERT_TRUE(first) << first.status().toString();
  EXPECT_EQ(first->counters.cached, 0u);
  ASSERT_GT(first->counters.computed, 0u);
  Result<TuneResult> resumed = runTune(*full, (dir / "cache").string(), exec);
  ASSERT_TRUE(resumed) << resumed.status().toString();
  // Every run of the partial sweep came from the cache, none was redone.
  EXPECT_EQ(resumed->counters.cached, first->counters.computed);
  EXPECT_GT(resumed->counters.computed, 0u);
  Result<TuneResult> again = runTune(*full, (dir / "cache").string(), exec);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->counters.computed, 0u);
  EXPECT_EQ(again->counters.cached, resumed->counters.computed + resumed->counters.cached);
  // The same result as a sweep that never stopped.
  const auto fresh = scratch("resume-fresh");
  Result<TuneResult> whole = runTune(*full, (fresh / "cache").string(), exec);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->counters.computed, again->counters.cached);
  ASSERT_TRUE(writeTuneOutputs((dir / "out").string(), *full, *resumed).isOk());
  ASSERT_TRUE(writeTuneOutputs((fresh / "out").string(), *full, *whole).isOk());
  for (const char* f : {"runs.csv", "runs.json", "settings.csv", "pareto.csv"}) {
    EXPECT_EQ(slurp(dir / "out" / f), slurp(fresh / "out" / f)) << f;
  }
}

TEST(TuneSearch, AFailedRunMakesItsSettingInfeasibleAndTheSweepGoesOn) {
  const auto dir = scratch("failed-run");
  Result<TunePlan> plan = planFrom(tinyRampBase(0.1) +
                                   "budget { latency_increase_pct: 50 } search_space { u_on { "
                                   "values: [0.15, 0.3] } }");
  ASSERT_TRUE(plan);
  // A run the emulator gave up on (as a trace that never finishes does), found in the cache.
  FileDigests digests;
  const RunKey key =
      runKey(resolveConfig(*plan, plan->settings[1], 0, 1.0).value(), true, digests).value();
  ASSERT_TRUE(
      RunCache((dir / "cache").string()).store(key, {{}, "E_INVALID: did not finish"}).isOk());
  Result<TuneResult> r = runTune(*plan, (dir / "cache").string(), ExecOptions{});
  ASSERT_TRUE(r) << r.status().toString();
  ASSERT_EQ(r->final().size(), 2u);
  EXPECT_TRUE(r->final()[1].failed);
  EXPECT_FALSE(r->final()[1].feasible);
  EXPECT_NE(r->final()[1].broken.find("run failed: E_INVALID: did not finish"), std::string::npos);
  EXPECT_FALSE(r->final()[0].failed);
  ASSERT_TRUE(r->best);
  EXPECT_EQ(*r->best, 0u);
  for (const SettingResult* f : paretoFront(r->final())) {
    EXPECT_NE(f->setting, 1u);
  }
}

// Latency is over the messages that arrived: a setting whose run strands
// messages (neither delivered nor lost to a fault) looks fast and is out of
// budget however small its latency, and ranks below every setting that only
// breaks a latency bound.
TEST(TuneSearch, ARunThatStrandsMessagesIsOutOfBudget) {
  Result<TunePlan> plan = planFrom(tinyRampBase(0.1) +
                                   "budget { latency_increase_pct: 50 } search_space { u_on { "
                                   "values: [0.15, 0.3] } }");
  ASSERT_TRUE(plan);
  results::RunSummary base;
  base.set_messages_generated(100);
  base.set_messages_delivered(100);
  base.set_mean_latency_cycles(40);
  base.set_relative_power_switch_links(1.0);
  results::RunSummary stranding = base;
  stranding.set_messages_delivered(97);
  stranding.set_mean_latency_cycles(30);
  stranding.set_relative_power_switch_links(0.4);
  RunResult r = compare(*plan, stranding, base, 0);
  EXPECT_TRUE(r.undelivered);
  EXPECT_EQ(r.broken, "delivered 97 of 100 messages (all links on: 100)");
  // Lost to a fault is accounted for, not stranded.
  results::RunSummary lossy = stranding;
  lossy.mutable_faults()->set_lost_messages(3);
  EXPECT_FALSE(compare(*plan, lossy, base, 0).undelivered);
  results::RunSummary slow = base;
  slow.set_mean_latency_cycles(80);  // +100% > 50%
  slow.set_relative_power_switch_links(0.5);
  RunResult late = compare(*plan, slow, base, 0);
  EXPECT_FALSE(late.undelivered);
  EXPECT_EQ(late.broken, "mean latency +100.00% > 50%");
  // Every bound broken is named, not only the first.
  Result<TunePlan> both = planFrom(tinyRampBase(0.1) +
                                   "budget { latency_increase_pct: 50 p99_latency_increase_pct: 10 "
                                   "} search_space { u_on { values: [0.15, 0.3] } }");
  ASSERT_TRUE(both);
  base.set_p99_latency_cycles(100);
  slow.set_p99_latency_cycles(150);
  EXPECT_EQ(compare(*both, slow, base, 0).broken,
            "mean latency +100.00% > 50%; p99 latency +50.00% > 10%");
  // The penalty is the largest bounded value, named with its metric and
  // workload (each metric has its own limit).
  const RunResult slowBoth = compare(*both, slow, base, 0);
  const SettingResult worst = aggregate(*both, {&slowBoth});
  EXPECT_DOUBLE_EQ(worst.penaltyPct, 100.0);
  EXPECT_EQ(worst.penaltyOf, "mean latency on " + both->workloads[0].name);
  slow.set_mean_latency_cycles(44);  // +10%, now under the p99's +50%
  const RunResult tailOnly = compare(*both, slow, base, 0);
  const SettingResult tail = aggregate(*both, {&tailOnly});
  EXPECT_DOUBLE_EQ(tail.penaltyPct, 50.0);
  EXPECT_EQ(tail.penaltyOf, "p99 latency on " + both->workloads[0].name);
  // Better than all links on everywhere: no penalty, none named.
  results::RunSummary faster = base;
  faster.set_mean_latency_cycles(38);
  faster.set_p99_latency_cycles(90);
  const RunResult quick = compare(*both, faster, base, 0);
  const SettingResult better = aggregate(*both, {&quick});
  EXPECT_DOUBLE_EQ(better.penaltyPct, 0.0);
  EXPECT_EQ(better.penaltyOf, "");
  slow.set_mean_latency_cycles(80);
  r.setting = 1;
  late.setting = 0;
  const SettingResult a = aggregate(*plan, {&r});
  const SettingResult b = aggregate(*plan, {&late});
  EXPECT_FALSE(a.feasible);
  EXPECT_TRUE(betterThan(b, a));
  // A workload on which all links on delivers nothing judges no setting.
  results::RunSummary empty;
  empty.set_relative_power_switch_links(1.0);
  results::RunSummary gatedEmpty = empty;
  gatedEmpty.set_relative_power_switch_links(0.5);
  const RunResult none = compare(*plan, gatedEmpty, empty, 0);
  EXPECT_NE(none.broken.find("all links on delivered no message"), std::string::npos)
      << none.broken;
  EXPECT_FALSE(aggregate(*plan, {&none}).feasible);
}

TEST(TuneResume, AHalfWrittenCacheEntryIsRunAgain) {
  const auto dir = scratch("resume-half");
  Result<TunePlan> plan = planFrom(tinyGrid(0.1, "0.1, 0.3"));
  ASSERT_TRUE(plan);
  ExecOptions exec;
  Result<TuneResult> first = runTune(*plan, (dir / "cache").string(), exec);
  ASSERT_TRUE(first);
  const auto entry = std::filesystem::directory_iterator(dir / "cache")->path();
  const std::string text = slurp(entry);
  std::ofstream(entry) << text.substr(0, text.size() / 3);
  Result<TuneResult> second = runTune(*plan, (dir / "cache").string(), exec);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->counters.computed, 1u);
  EXPECT_EQ(second->counters.cached, first->counters.computed - 1);
}

}  // namespace
}  // namespace ebb::tune
