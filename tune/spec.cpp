#include "tune/spec.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "common/fs_util.h"
#include "configs/config_loader.h"
#include "configs/overrides.h"
#include "fabric/minimal_tree.h"
#include "replay/fabric_from_config.h"
#include "replay/run_spec.h"
#include "tune/grid.h"

namespace ebb::tune {

namespace fs = std::filesystem;

namespace {

std::string absolute(const std::string& path, const std::string& dir) {
  fs::path p(path);
  if (p.is_relative() && !dir.empty()) p = fs::path(dir) / p;
  return fs::path(absolutePath(p)).lexically_normal().string();
}

// Files named by a workload, absolute so that every run (and the
// recommended config, wherever it is written) finds them.
void absolutizeWorkload(config::WorkloadSpec& w, const std::string& dir) {
  if (w.pattern_case() == config::WorkloadSpec::kTrafficFile && !w.traffic_file().empty()) {
    w.set_traffic_file(absolute(w.traffic_file(), dir));
  }
  if (w.pattern_case() == config::WorkloadSpec::kTrace && !w.trace().path().empty()) {
    w.mutable_trace()->set_path(absolute(w.trace().path(), dir));
  }
  if (w.pattern_case() == config::WorkloadSpec::kMix) {
    for (auto& job : *w.mutable_mix()->mutable_jobs()) {
      if (job.has_trace() && !job.trace().path().empty()) {
        job.mutable_trace()->set_path(absolute(job.trace().path(), dir));
      }
    }
  }
}

std::string defaultName(const config::WorkloadSpec& w) {
  switch (w.pattern_case()) {
    case config::WorkloadSpec::kTrafficFile:
      return fs::path(w.traffic_file()).stem().string();
    case config::WorkloadSpec::kTrace:
      return fs::path(w.trace().path()).stem().string();
    case config::WorkloadSpec::kMix:
      return fmt::format("mix-{}", w.mix().jobs_size());
    case config::WorkloadSpec::kCollective:
      return fmt::format("{}-loop", w.collective().op());
    case config::WorkloadSpec::kMotif:
      return fmt::format("{}-{}", w.motif().name(), w.motif().ranks());
    case config::WorkloadSpec::kUniform:
      return fmt::format("uniform-{}", w.uniform().rate());
    default:
      return "alonso-ramp";
  }
}

Result<config::Config> baseOf(const config::TuneSpec& spec, const std::string& specDir) {
  config::Config base;
  std::string baseDir = specDir;
  if (!spec.base_config().empty()) {
    const std::string path = absolute(spec.base_config(), specDir);
    Result<config::Config> loaded = config::loadConfigFile(path);
    if (!loaded) return Status(loaded.status().code(), "base_config: " + loaded.status().message());
    base = *loaded;
    baseDir = fs::path(path).parent_path().string();
  }
  // The base's own relative paths are relative to its file.
  absolutizeWorkload(*base.mutable_workload(), baseDir);
  if (base.fabric().has_topology_file()) {
    auto* t = base.mutable_fabric()->mutable_topology_file();
    t->set_path(absolute(t->path(), baseDir));
  }
  if (spec.has_base()) {
    config::Config inlineBase = spec.base();
    absolutizeWorkload(*inlineBase.mutable_workload(), specDir);
    if (inlineBase.fabric().has_topology_file()) {
      auto* t = inlineBase.mutable_fabric()->mutable_topology_file();
      t->set_path(absolute(t->path(), specDir));
    }
    config::mergeReplacing(inlineBase, base);
  }
  if (spec.base_config().empty() && !spec.has_base()) {
    return invalidArgument(
        "base_config: name an `ebb replay` config (or give an inline base { ... })");
  }
  return base;
}

// `openLoop`: the name of a workload without an application runtime, if any.
Status checkBudget(const config::Budget& b, bool anyTrace, const std::string& openLoop,
                   Budget& out) {
  const auto check = [](bool has, double v, const char* field,
                        std::optional<double>& dst) -> Status {
    if (!has) return Status::ok();
    if (!(v >= 0) || !std::isfinite(v)) {
      return invalidArgument(fmt::format("budget.{}: must be >= 0 (is {})", field, v));
    }
    dst = v;
    return Status::ok();
  };
  if (Status s = check(b.has_latency_increase_pct(), b.latency_increase_pct(),
                       "latency_increase_pct", out.meanLatencyPct);
      !s.isOk()) {
    return s;
  }
  out.p99LatencyPct = out.meanLatencyPct;
  if (Status s = check(b.has_p99_latency_increase_pct(), b.p99_latency_increase_pct(),
                       "p99_latency_increase_pct", out.p99LatencyPct);
      !s.isOk()) {
    return s;
  }
  if (Status s = check(b.has_app_slowdown_pct(), b.app_slowdown_pct(), "app_slowdown_pct",
                       out.appSlowdownPct);
      !s.isOk()) {
    return s;
  }
  if (!out.meanLatencyPct && !out.p99LatencyPct && !out.appSlowdownPct) {
    return invalidArgument(
        "budget: empty: set at least one of latency_increase_pct, p99_latency_increase_pct, "
        "app_slowdown_pct");
  }
  if (out.appSlowdownPct && !anyTrace) {
    return invalidArgument(
        "budget.app_slowdown_pct: needs a closed-loop workload (a trace, collective, motif or "
        "mix: workload { spec { trace { ... } } }); only those have an application runtime");
  }
  if (out.appSlowdownPct && !out.meanLatencyPct && !out.p99LatencyPct && !openLoop.empty()) {
    // Every setting would be within budget on that workload, however slow.
    return invalidArgument(fmt::format(
        "budget: app_slowdown_pct alone bounds nothing on workload '{}', which has no "
        "application runtime (open loop): add latency_increase_pct or p99_latency_increase_pct",
        openLoop));
  }
  return Status::ok();
}

Status checkSearch(const config::Search& s, TunePlan& plan) {
  plan.strategy = s.strategy() == config::Search::HALVING      ? Strategy::kHalving
                  : s.strategy() == config::Search::COORDINATE ? Strategy::kCoordinate
                                                               : Strategy::kGrid;
  // A field the strategy never reads would be silently ignored: refused.
  const std::string strategy = s.strategy() == config::Search::STRATEGY_UNSPECIFIED
                                   ? "GRID (the default)"
                                   : config::Search::Strategy_Name(s.strategy());
  const auto notFor = [&](const char* field, const char* owner) {
    return invalidArgument(
        fmt::format("search.{}: does not apply to strategy {}; only {} reads it (remove it or set "
                    "strategy: {})",
                    field, strategy, owner, owner));
  };
  if (plan.strategy != Strategy::kHalving) {
    if (s.has_eta()) return notFor("eta", "HALVING");
    if (s.has_min_fraction()) return notFor("min_fraction", "HALVING");
  }
  if (plan.strategy != Strategy::kCoordinate && s.has_max_passes()) {
    return notFor("max_passes", "COORDINATE");
  }
  plan.maxPasses = s.has_max_passes() ? s.max_passes() : 10;
  if (plan.maxPasses < 1) {
    return invalidArgument(fmt::format("search.max_passes: must be >= 1 (is {})", s.max_passes()));
  }
  plan.eta = s.has_eta() ? s.eta() : 3;
  if (plan.eta < 2)
    return invalidArgument(fmt::format("search.eta: must be >= 2 (is {})", s.eta()));
  plan.minFraction = s.has_min_fraction() ? s.min_fraction() : 1.0 / (plan.eta * plan.eta);
  // Below 1/10 000 of the workload a shortened replay measures nothing (a few
  // check periods of a long run), and the rungs only multiply.
  constexpr double kLeastFraction = 1e-4;
  if (!(plan.minFraction >= kLeastFraction && plan.minFraction <= 1)) {
    return invalidArgument(fmt::format("search.min_fraction: must be in [{:g}, 1] (is {})",
                                       kLeastFraction, s.min_fraction()));
  }
  return Status::ok();
}

// Every setting's run, on every workload, is a valid `ebb replay` config.
Status checkRunnable(const TunePlan& plan) {
  std::set<std::string> fabrics;
  for (const Setting& s : plan.settings) {
    if (!s.mapValid()) continue;
    for (std::size_t w = 0; w < plan.workloads.size(); ++w) {
      Result<config::Config> cfg = resolveConfig(plan, s, w, 1.0);
      if (!cfg) return cfg.status();
      Result<replay::RunSpec> run = replay::buildRunSpec(*cfg);
      if (!run) {
        return invalidArgument(fmt::format("search_space: setting '{}' on workload '{}': {}",
                                           s.label, plan.workloads[w].name,
                                           run.status().message()));
      }
      if (fabrics.insert(cfg->fabric().SerializeAsString()).second) {
        Result<fabric::Topology> topo = replay::topologyFromConfig(cfg->fabric(), "");
        if (!topo) return topo.status();
        // Switch links to save on, or the objective measures nothing (a
        // one-level tree's sweep would recommend "gate nothing").
        const bool anySwitchLink = [&] {
          for (std::size_t l = 0; l < topo->numLinks(); ++l) {
            if (topo->isSwitchLink(fabric::LinkId(static_cast<std::uint32_t>(l)))) return true;
          }
          return false;
        }();
        if (!plan.allLinksObjective && !anySwitchLink) {
          return invalidArgument(fmt::format(
              "objective: SWITCH_LINKS (the default) saves nothing on workload '{}': its fabric "
              "has no switch-to-switch link (a one-level tree); use objective: ALL_LINKS, "
              "where low-power idle on host links saves power",
              plan.workloads[w].name));
        }
      }
    }
  }
  return Status::ok();
}

// Clears the gating fields the spec's policy does not read, which the base
// may carry for another policy: a setting or the baseline then has none the
// runner would refuse (in-band control without gating) or ignore.
void dropFieldsPolicyIgnores(config::GatingSpec& g) {
  const config::GatingSpec::Policy policy = g.policy();
  if (policy != config::GatingSpec::STATIC) g.clear_u_off();
  if (policy != config::GatingSpec::PROPORTIONAL) g.clear_hysteresis();
  if (policy == config::GatingSpec::ALL_ON) {
    g.clear_u_on();
    g.clear_wait_on();
    g.clear_start();
    g.clear_in_band();
  }
}

}  // namespace

std::size_t TunePlan::validSettings() const {
  return static_cast<std::size_t>(std::count_if(settings.begin(), settings.end(),
                                                [](const Setting& s) { return s.mapValid(); }));
}

std::vector<double> TunePlan::rungFractions() const {
  if (strategy != Strategy::kHalving) return {1.0};
  std::vector<double> f;
  for (double x = minFraction; x < 1.0 - 1e-9; x *= eta)
    f.push_back(x);
  f.push_back(1.0);
  return f;
}

Result<TunePlan> buildTunePlan(const config::TuneSpec& spec, const std::string& specDir,
                               std::uint64_t maxSettings) {
  TunePlan plan;
  plan.maxSettings = maxSettings;
  plan.name = spec.name().empty() ? "tune" : spec.name();
  Result<config::Config> base = baseOf(spec, specDir);
  if (!base) return base.status();
  plan.base = std::move(*base);
  std::set<std::string> names;
  for (int i = 0; i < spec.workload_size(); ++i) {
    // Without its spec a workload would run the built-in alonso-ramp, not
    // the base's workload: a forgotten `spec { }` must not tune the wrong one.
    if (!spec.workload(i).has_spec()) {
      return invalidArgument(fmt::format(
          "workload[{}].spec: missing: a tune workload gives its pattern (workload {{ spec {{ "
          "uniform {{ ... }} }} }}); leave every workload out to tune on the base's",
          i));
    }
    Workload w;
    w.spec = spec.workload(i).spec();
    absolutizeWorkload(w.spec, specDir);
    w.name = spec.workload(i).name().empty() ? defaultName(w.spec) : spec.workload(i).name();
    if (!names.insert(w.name).second) {
      return invalidArgument(fmt::format("workload[{}].name: '{}' is used twice", i, w.name));
    }
    plan.workloads.push_back(std::move(w));
  }
  if (plan.workloads.empty()) {
    plan.workloads.push_back({defaultName(plan.base.workload()), plan.base.workload(), false});
  }
  bool anyTrace = false;
  std::string openLoop;
  for (Workload& w : plan.workloads) {
    // Closed loop: an application runtime to compare.
    w.isTrace = w.spec.pattern_case() == config::WorkloadSpec::kTrace ||
                w.spec.pattern_case() == config::WorkloadSpec::kMix ||
                w.spec.pattern_case() == config::WorkloadSpec::kCollective ||
                w.spec.pattern_case() == config::WorkloadSpec::kMotif;
    anyTrace = anyTrace || w.isTrace;
    if (!w.isTrace && openLoop.empty()) openLoop = w.name;
  }
  if (Status s = checkBudget(spec.budget(), anyTrace, openLoop, plan.budget); !s.isOk()) {
    return s;
  }
  if (Status s = checkSearch(spec.search(), plan); !s.isOk()) return s;
  if (Status s = expandGrid(spec.search_space(), plan); !s.isOk()) return s;
  plan.allLinksObjective = spec.objective() == config::TuneSpec::ALL_LINKS;
  plan.plots = !spec.skip_plots();
  if (Status s = checkRunnable(plan); !s.isOk()) return s;
  return plan;
}

Result<TunePlan> loadTunePlan(const std::string& specPath, std::uint64_t maxSettings) {
  Result<std::string> text = config::readFile(specPath);
  if (!text) return text.status();
  config::TuneSpec spec;
  if (Status s = config::parseTextMessage(*text, specPath, spec); !s.isOk()) return s;
  return buildTunePlan(spec, fs::path(specPath).parent_path().string(), maxSettings);
}

bool shortens(const config::WorkloadSpec& workload) {
  return workload.has_alonso_ramp() || workload.has_uniform();
}

Result<config::Config> resolveConfig(const TunePlan& plan, const Setting& s, std::size_t workload,
                                     double fraction) {
  config::Config cfg = plan.base;
  *cfg.mutable_workload() = plan.workloads.at(workload).spec;
  for (const auto& [path, value] : s.overrides) {
    if (Status st = config::applyOverride(cfg, path + "=" + value); !st.isOk()) return st;
  }
  dropFieldsPolicyIgnores(*cfg.mutable_gating());
  // A setting without low-power idle has no hold, timers or speed (the base
  // may carry them for the settings with it).
  if (cfg.lpi().mode() == config::LpiSpec::OFF ||
      cfg.lpi().mode() == config::LpiSpec::MODE_UNSPECIFIED) {
    const config::LpiSpec::Mode mode = cfg.lpi().mode();
    cfg.mutable_lpi()->Clear();
    cfg.mutable_lpi()->set_mode(mode);
  }
  if (fraction < 1.0 && shortens(cfg.workload())) {
    auto* w = cfg.mutable_workload();
    if (w->has_alonso_ramp()) {
      const double scale = w->alonso_ramp().has_time_scale() ? w->alonso_ramp().time_scale() : 1.0;
      w->mutable_alonso_ramp()->set_time_scale(scale * fraction);
    } else {  // uniform
      const double d = static_cast<double>(w->uniform().duration_cycles()) * fraction;
      w->mutable_uniform()->set_duration_cycles(std::max<std::int64_t>(1, std::llround(d)));
    }
    // A shortened replay keeps the same share of it out of the latency.
    if (cfg.report().latency_warmup_cycles() > 0) {
      const double warm = static_cast<double>(cfg.report().latency_warmup_cycles()) * fraction;
      cfg.mutable_report()->set_latency_warmup_cycles(std::llround(warm));
    }
  }
  cfg.set_name(fmt::format("{}: {} on {}", plan.name, s.label, plan.workloads[workload].name));
  return cfg;
}

double runFraction(const config::Config& resolved, double fraction) {
  return shortens(resolved.workload()) ? fraction : 1.0;
}

config::Config baselineConfig(const config::Config& resolved) {
  config::Config b = resolved;
  auto* g = b.mutable_gating();
  g->set_policy(config::GatingSpec::ALL_ON);
  dropFieldsPolicyIgnores(*g);
  // With every link on and nothing failing, no link ever changes state: the
  // transition times and the agents' message latency cannot change the run,
  // so a sweep over them shares one reference. (A repaired cable retrains in
  // T_on, so with faults they stay.) 0 keeps T <= check period valid.
  if (!b.has_faults()) {
    g->set_turn_on_cycles(0);
    g->set_turn_off_cycles(0);
    g->set_control_latency_cycles(0);
  }
  b.clear_lpi();
  return b;
}

}  // namespace ebb::tune
