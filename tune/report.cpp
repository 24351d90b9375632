#include "tune/report.h"

#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <google/protobuf/text_format.h>

#include "common/file_io.h"
#include "common/json.h"
#include "common/output_set.h"
#include "tune/plots.h"

namespace ebb::tune {

namespace fs = std::filesystem;

namespace {

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string num(double v) {
  return fmt::format("{:.6f}", v);
}

std::string valueOf(const Setting& s, const std::string& path) {
  for (const auto& [p, v] : s.overrides) {
    if (p == path) return v;
  }
  return "";
}

std::string dimensionHeader(const TunePlan& plan) {
  std::string h;
  for (const Dimension& d : plan.dimensions)
    h += "," + csvField(d.path);
  return h;
}

std::string dimensionValues(const TunePlan& plan, const Setting& s) {
  std::string v;
  for (const Dimension& d : plan.dimensions)
    v += "," + csvField(valueOf(s, d.path));
  return v;
}

std::string strategyText(const TunePlan& plan, const TuneResult& r) {
  switch (plan.strategy) {
    case Strategy::kHalving:
      return fmt::format("successive halving (eta {}, {} rungs)", plan.eta, r.rungs.size());
    case Strategy::kCoordinate:
      return fmt::format("coordinate descent ({} passes)", r.passes);
    default:
      return "full grid";
  }
}

// The run's switch-link saving over the oracle bound's (docs/replay.md), or
// `none` when the report has no efficiency.
std::string efficiencyText(const RunResult& x, const char* none) {
  return x.run.oracle().has_efficiency() ? num(x.run.oracle().efficiency()) : none;
}

std::string runsCsv(const TunePlan& plan, const TuneResult& r) {
  std::string out =
      "setting,label" + dimensionHeader(plan) +
      ",workload,fraction,saving_switch_links,oracle_efficiency,saving_all_links,"
      "mean_latency_"
      "increase_pct,p99_latency_increase_pct,app_slowdown_pct,within_budget,broken,"
      "relative_power_switch_links,relative_power_all_links,mean_latency_cycles,"
      "p99_latency_cycles,baseline_mean_latency_cycles,baseline_p99_latency_cycles,"
      "app_runtime_us,baseline_app_runtime_us,link_transitions,lpi_delay_ns_per_packet,run,"
      "messages_generated,messages_delivered,messages_lost,baseline_messages_delivered\n";
  for (const RunResult& x : r.runs) {
    const Setting& s = plan.settings[x.setting];
    out += fmt::format(
        "{},{}{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        s.id, csvField(s.label), dimensionValues(plan, s),
        csvField(plan.workloads[x.workload].name), num(x.fraction), num(x.savingSwitchLinks),
        efficiencyText(x, ""), num(x.savingAllLinks), num(x.meanLatencyPct), num(x.p99LatencyPct),
        x.appSlowdownPct ? num(*x.appSlowdownPct) : "", x.broken.empty() ? 1 : 0,
        csvField(x.broken), num(x.run.relative_power_switch_links()),
        num(x.run.relative_power_all_links()), num(x.run.mean_latency_cycles()),
        num(x.run.p99_latency_cycles()), num(x.baseline.mean_latency_cycles()),
        num(x.baseline.p99_latency_cycles()),
        x.appSlowdownPct ? num(x.run.app_runtime_us()) : "",  // closed-loop workloads only
        x.appSlowdownPct ? num(x.baseline.app_runtime_us()) : "", x.run.link_transitions(),
        x.run.has_lpi() ? num(x.run.lpi().added_delay_ns_per_packet()) : "", x.hash,
        x.run.messages_generated(), x.run.messages_delivered(), x.run.faults().lost_messages(),
        x.baseline.messages_delivered());
  }
  return out;
}

// The last replay length each setting reached (halving drops most early).
std::map<std::size_t, const SettingResult*> lastResults(const TuneResult& r) {
  std::map<std::size_t, const SettingResult*> last;
  for (const auto& rung : r.rungs) {
    for (const SettingResult& s : rung)
      last[s.setting] = &s;
  }
  return last;
}

std::string settingsCsv(const TunePlan& plan, const TuneResult& r) {
  const auto last = lastResults(r);
  std::string out = "setting,label" + dimensionHeader(plan) +
                    ",policy,u_off,u_on,status,fraction,saving,penalty_pct,penalty_of,broken\n";
  for (const Setting& s : plan.settings) {
    auto it = last.find(s.id);
    const SettingResult* x = it == last.end() ? nullptr : it->second;
    const std::string status = !s.mapValid() ? "outside-threshold-map"
                               : !x          ? "not-run"
                               : x->feasible ? "within-budget"
                                             : "over-budget";
    out += fmt::format(
        "{},{}{},{},{},{},{},{},{},{},{},{}\n", s.id, csvField(s.label), dimensionValues(plan, s),
        !s.gates     ? "all-on"
        : s.isStatic ? "static"
                     : "dynamic",
        s.isStatic ? num(s.uOff) : "", s.gates ? num(s.uOn) : "", status, x ? num(x->fraction) : "",
        x ? num(x->saving) : "", x ? num(x->penaltyPct) : "", csvField(x ? x->penaltyOf : ""),
        csvField(!s.mapValid() ? "breaks " + s.mapRule
                 : x           ? x->broken
                               : ""));
  }
  return out;
}

std::string paretoCsv(const TunePlan& plan, const TuneResult& r) {
  std::string out =
      "setting,label" + dimensionHeader(plan) + ",saving,penalty_pct,within_budget,penalty_of\n";
  for (const SettingResult* x : paretoFront(r.final())) {
    const Setting& s = plan.settings[x->setting];
    out += fmt::format("{},{}{},{},{},{},{}\n", s.id, csvField(s.label), dimensionValues(plan, s),
                       num(x->saving), num(x->penaltyPct), x->feasible ? 1 : 0,
                       csvField(x->penaltyOf));
  }
  return out;
}

std::string budgetJson(const Budget& b) {
  const auto opt = [](const std::optional<double>& v) { return v ? num(*v) : "null"; };
  return fmt::format(
      "{{\"mean_latency_increase_pct\": {}, \"p99_latency_increase_pct\": {}, "
      "\"app_slowdown_pct\": {}}}",
      opt(b.meanLatencyPct), opt(b.p99LatencyPct), opt(b.appSlowdownPct));
}

std::string runsJson(const TunePlan& plan, const TuneResult& r) {
  std::string out = fmt::format(
      "{{\n  \"name\": {},\n  \"objective\": \"{}\",\n  \"budget\": {},\n  \"strategy\": "
      "\"{}\",\n  \"settings\": {},\n  \"full_length_runs\": {},\n  \"recommended\": {},\n  "
      "\"runs\": [",
      jsonQuote(plan.name), plan.allLinksObjective ? "all_links" : "switch_links",
      budgetJson(plan.budget), strategyText(plan, r), plan.settings.size(), r.fullRuns,
      r.best ? std::to_string(*r.best) : "null");
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const RunResult& x = r.runs[i];
    const Setting& s = plan.settings[x.setting];
    std::string overrides;
    for (const auto& [p, v] : s.overrides)
      overrides +=
          fmt::format("{}{}: {}", overrides.empty() ? "" : ", ", jsonQuote(p), jsonQuote(v));
    out += fmt::format(
        "{}\n    {{\"setting\": {}, \"label\": {}, \"overrides\": {{{}}}, \"workload\": {}, "
        "\"fraction\": {}, \"saving_switch_links\": {}, \"oracle_efficiency\": {}, "
        "\"saving_all_links\": {}, "
        "\"mean_latency_increase_pct\": {}, \"p99_latency_increase_pct\": {}, "
        "\"app_slowdown_pct\": {}, \"within_budget\": {}, \"broken\": {}, \"run\": {}, "
        "\"relative_power_switch_links\": {}, \"mean_latency_cycles\": {}, "
        "\"p99_latency_cycles\": {}, \"baseline_mean_latency_cycles\": {}, "
        "\"baseline_p99_latency_cycles\": {}, \"app_runtime_us\": {}, "
        "\"baseline_app_runtime_us\": {}, \"lpi_delay_ns_per_packet\": {}, "
        "\"relative_power_all_links\": {}, \"link_transitions\": {}, "
        "\"messages_generated\": {}, \"messages_delivered\": {}, \"messages_lost\": {}, "
        "\"baseline_messages_delivered\": {}}}",
        i == 0 ? "" : ",", s.id, jsonQuote(s.label), overrides,
        jsonQuote(plan.workloads[x.workload].name), num(x.fraction), num(x.savingSwitchLinks),
        efficiencyText(x, "null"), num(x.savingAllLinks), num(x.meanLatencyPct),
        num(x.p99LatencyPct), x.appSlowdownPct ? num(*x.appSlowdownPct) : "null",
        x.broken.empty() ? "true" : "false", jsonQuote(x.broken), jsonQuote(x.hash),
        num(x.run.relative_power_switch_links()), num(x.run.mean_latency_cycles()),
        num(x.run.p99_latency_cycles()), num(x.baseline.mean_latency_cycles()),
        num(x.baseline.p99_latency_cycles()),
        x.appSlowdownPct ? num(x.run.app_runtime_us()) : "null",
        x.appSlowdownPct ? num(x.baseline.app_runtime_us()) : "null",
        x.run.has_lpi() ? num(x.run.lpi().added_delay_ns_per_packet()) : "null",
        num(x.run.relative_power_all_links()), x.run.link_transitions(), x.run.messages_generated(),
        x.run.messages_delivered(), x.run.faults().lost_messages(),
        x.baseline.messages_delivered());
  }
  out += "\n  ]\n}\n";
  return out;
}

std::string budgetText(const Budget& b) {
  std::string t;
  const auto add = [&](const std::optional<double>& v, const char* what) {
    if (v) t += fmt::format("{}{} <= +{}%", t.empty() ? "" : ", ", what, *v);
  };
  add(b.meanLatencyPct, "mean latency");
  add(b.p99LatencyPct, "p99 latency");
  add(b.appSlowdownPct, "app slowdown");
  return t;
}

// "+3.48% (p99 latency on amg)": the budget bounds several penalties, each
// against its own limit, so the number is named.
std::string penaltyText(const SettingResult& x) {
  return fmt::format("{:+.2f}%{}", x.penaltyPct,
                     x.penaltyOf.empty() ? "" : fmt::format(" ({})", x.penaltyOf));
}

const SettingResult* finalOf(const TuneResult& r, std::size_t id) {
  for (const SettingResult& s : r.final()) {
    if (s.setting == id) return &s;
  }
  return nullptr;
}

}  // namespace

Result<std::string> recommendedConfig(const TunePlan& plan, const TuneResult& result) {
  if (!result.best) return Status(ErrorCode::kNotFound, "no setting within the budget");
  const Setting& s = plan.settings[*result.best];
  Result<config::Config> cfg = resolveConfig(plan, s, 0, 1.0);
  if (!cfg) return cfg.status();
  cfg->set_name(fmt::format("{}: recommended {}", plan.name, s.label));
  std::string text;
  google::protobuf::TextFormat::PrintToString(*cfg, &text);
  const SettingResult* x = finalOf(result, s.id);
  std::string head = fmt::format(
      "# Recommended by `ebb tune` ({}): {}\n# Budget versus all links on: {}.\n"
      "# Mean link power saved over the workloads: {:.2f}% ({} links); largest penalty "
      "{}.\n",
      plan.name, s.label, budgetText(plan.budget), 100 * x->saving,
      plan.allLinksObjective ? "all" : "switch", penaltyText(*x));
  for (const RunResult& r : result.runs) {
    if (r.setting != s.id || r.fraction < 1.0) continue;
    head +=
        fmt::format("#   {}: saved {:.2f}%, mean latency {:+.2f}%, p99 {:+.2f}%{}{}\n",
                    plan.workloads[r.workload].name,
                    100 * (plan.allLinksObjective ? r.savingAllLinks : r.savingSwitchLinks),
                    r.meanLatencyPct, r.p99LatencyPct,
                    r.appSlowdownPct ? fmt::format(", slowdown {:+.2f}%", *r.appSlowdownPct) : "",
                    r.run.oracle().has_efficiency()
                        ? fmt::format(", oracle efficiency {:.2f}", r.run.oracle().efficiency())
                        : "");
  }
  head += fmt::format("# Workload: {} (`ebb replay` this file; --trace or --traffic for another)\n",
                      plan.workloads[0].name);
  return head + text;
}

std::set<std::string> tuneOutputNames() {
  // The cache/ folder is not part of a run's set.
  std::set<std::string> owned = {
      "runs.csv", "runs.json", "settings.csv", "pareto.csv", "recommended.textproto", "tune.gp"};
  for (const char* name : {"points.dat", "front.dat", "best.dat", "heatmap.dat", "pareto.png",
                           "pareto.svg", "thresholds.png", "thresholds.svg"})
    owned.insert(std::string("plots/") + name);
  return owned;
}

Result<std::string> writeTuneOutputs(const std::string& dir, const TunePlan& plan,
                                     const TuneResult& result) {
  Result<OutputSet> set = OutputSet::begin(dir, tuneOutputNames());
  if (!set) return set.status();
  for (const auto& [name, text] : {std::pair{"runs.csv", runsCsv(plan, result)},
                                   std::pair{"runs.json", runsJson(plan, result)},
                                   std::pair{"settings.csv", settingsCsv(plan, result)},
                                   std::pair{"pareto.csv", paretoCsv(plan, result)}}) {
    if (Status s = set->write(name, text); !s.isOk()) return s;
  }
  if (result.best) {
    Result<std::string> rec = recommendedConfig(plan, result);
    if (!rec) return rec.status();
    if (Status s = set->write("recommended.textproto", *rec); !s.isOk()) return s;
  }
  std::string warning;
  if (plan.plots) {
    // A plotting problem costs no result: a warning.
    if (Status s = writeTunePlots(set->staging().string(), plan, result); !s.isOk())
      warning = s.message();
  }
  if (Status s = set->commit(); !s.isOk()) return s;
  return warning;
}

std::string formatTuneSummary(const TunePlan& plan, const TuneResult& r) {
  const std::size_t outside = plan.settings.size() - plan.validSettings();
  std::string out = fmt::format(
      "ebb tune: {}\n  search:   {} settings ({} outside the threshold map), {} workload{}, {}\n"
      "  budget:   {} versus all links on, on every workload\n",
      plan.name, plan.settings.size(), outside, plan.workloads.size(),
      plan.workloads.size() == 1 ? "" : "s", strategyText(plan, r), budgetText(plan.budget));
  out += fmt::format(
      "  runs:     {} gated runs at full length; {:.1f} full-length equivalents in all "
      "(references and shortened replays included); {} computed now, {} from the cache\n",
      r.fullRuns, r.fullEquivalents, r.counters.computed, r.counters.cached);
  if (!r.best) {
    out += "  => no setting meets the budget on every workload\n";
    return out;
  }
  const Setting& s = plan.settings[*r.best];
  const SettingResult* x = finalOf(r, s.id);
  out += fmt::format("  => recommended: {}: link power saved {:.1f}% ({} links), penalty {}\n",
                     s.label, 100 * x->saving, plan.allLinksObjective ? "all" : "switch",
                     penaltyText(*x));
  // The best within budget may save nothing (every gating setting broke it):
  // said plainly, not left to read from "0.0%".
  if (!(x->saving > 0)) {
    out +=
        "  ! no setting saves link power within the budget: the recommendation is to gate "
        "nothing (widen the budget or the search space to find savings)\n";
  }
  return out;
}

}  // namespace ebb::tune
