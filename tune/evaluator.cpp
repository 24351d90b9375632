#include "tune/evaluator.h"

#include <fmt/format.h>

namespace ebb::tune {

namespace {

struct Pair {
  std::size_t setting;
  std::size_t workload;
  RunKey gated;
  RunKey baseline;
  double ran = 1;  // the share of the workload's length it ran
};

RunResult failedRun(std::size_t workload, const std::string& failure) {
  RunResult r;
  r.workload = workload;
  r.failed = true;
  r.broken = "run failed: " + failure;
  return r;
}

}  // namespace

Result<std::vector<SettingResult>> Evaluator::evaluate(const std::vector<std::size_t>& ids,
                                                       double fraction, const std::string& stage) {
  std::vector<RunJob> jobs;
  std::vector<Pair> pairs;
  std::set<std::size_t> queued;
  for (std::size_t id : ids) {
    if (done_.count({fraction, id}) || !queued.insert(id).second) continue;
    const Setting& s = plan_.settings[id];
    for (std::size_t w = 0; w < plan_.workloads.size(); ++w) {
      Result<config::Config> cfg = resolveConfig(plan_, s, w, fraction);
      if (!cfg) return cfg.status();
      const config::Config base = baselineConfig(*cfg);
      Result<RunKey> gk = runKey(*cfg, true, digests_);
      if (!gk) return gk.status();
      Result<RunKey> bk = runKey(base, false, digests_);
      if (!bk) return bk.status();
      const std::string on =
          fmt::format("on {}{}", plan_.workloads[w].name,
                      fraction < 1 ? fmt::format(" ({:.3g} of the length)", fraction) : "");
      jobs.push_back({*gk, *cfg, true, s.label + " " + on});
      jobs.push_back({*bk, base, false, "all links on " + on});
      // What the search costs: each distinct run once, by the length it ran.
      const double ran = runFraction(*cfg, fraction);
      pairs.push_back({id, w, *gk, *bk, ran});
      for (const RunJob* j : {&jobs[jobs.size() - 2], &jobs.back()}) {
        if (!distinct_.insert(j->key.hash).second) continue;
        result_.fullEquivalents += ran;
        if (j->gated && ran >= 1.0) ++result_.fullRuns;
      }
    }
  }
  ExecOptions o = exec_;
  o.stage = stage;
  Result<std::map<std::string, RunOutcome>> ran = executeRuns(jobs, cache_, o, result_.counters);
  if (!ran) return ran.status();
  if (exec_.shardCount > 1) {
    result_.complete = false;
    return std::vector<SettingResult>{};
  }
  // Runs of one setting are adjacent: group them.
  const std::size_t first = result_.runs.size();
  for (const Pair& p : pairs) {
    const RunOutcome& gated = ran->at(p.gated.hash);
    RunResult r = compare(plan_, gated.summary, ran->at(p.baseline.hash).summary, p.workload);
    if (!gated.failure.empty()) r = failedRun(p.workload, gated.failure);
    r.setting = p.setting;
    r.fraction = p.ran;
    r.hash = p.gated.hash;
    result_.runs.push_back(std::move(r));
  }
  for (std::size_t i = first; i < result_.runs.size();) {
    std::vector<const RunResult*> group;
    const std::size_t id = result_.runs[i].setting;
    for (; i < result_.runs.size() && result_.runs[i].setting == id; ++i)
      group.push_back(&result_.runs[i]);
    SettingResult agg = aggregate(plan_, group);
    agg.fraction = fraction;  // the rung's, whatever its workloads ran at
    done_[{fraction, id}] = agg;
  }
  std::vector<SettingResult> out;
  for (std::size_t id : ids)
    out.push_back(done_.at({fraction, id}));
  return out;
}

std::vector<SettingResult> Evaluator::evaluatedAt(double fraction) const {
  std::vector<SettingResult> out;
  for (const auto& [key, s] : done_) {
    if (key.first == fraction) out.push_back(s);
  }
  return out;
}

}  // namespace ebb::tune
