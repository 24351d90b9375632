#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "common/file_io.h"
#include "common/fs_util.h"
#include "common/output_set.h"
#include "configs/config_loader.h"
#include "configs/overrides.h"
#include "fabric/minimal_tree.h"
#include "replay/fabric_from_config.h"
#include "replay/report_writer.h"
#include "replay/run_spec.h"
#include "replay/runner.h"
#include "tools/command.h"
#include "tools/topo_summary.h"

namespace ebb::tools {

using namespace ebb::replay;  // NOLINT(google-build-using-namespace): the library this command
                              // shells

namespace {

struct ReplayOptions {
  std::string configPath;
  std::string outDir = "out";
  std::string trafficPath;
  std::string tracePath;
  std::string traceFormat = "amg-csv";
  std::string placement = "linear";
  // Set only when given: an explicit 0 is checked like the config field.
  std::optional<std::uint32_t> ranks;
  std::optional<double> flopsPerS;
  std::string collectives;
  std::optional<double> sizeScale;
  std::vector<std::string> args;  // [CONFIG] [key=value ...]
  std::vector<std::string> overrides;
  bool quiet = false;
};

// The main job's built-in default: the paper's alonso-ramp with dynamic
// thresholds (the same as configs/alonso_ramp_dynamic_0.15.textproto).
constexpr const char* kDefaultConfig = R"cfg(
name: "alonso-ramp, dynamic U_on=0.15 (built-in default)"
fabric { kary_n_tree { k: 4 n: 4 } }
gating { policy: DYNAMIC u_on: 0.15 check_period_cycles: 2000 turn_on_cycles: 1000 turn_off_cycles: 1000 }
workload { alonso_ramp { low: 0.01 high: 0.60 time_scale: 1 } }
seed: 1
)cfg";

double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

// The command-line option or override behind a config field an error names,
// so the message points where the user wrote it: " (given as --ranks 0)".
std::string givenOnCommandLine(const ReplayOptions& o, const std::string& message) {
  const auto names = [&](const std::string& field) {
    const std::size_t at = message.find(field);
    if (at == std::string::npos) return false;
    const std::size_t end = at + field.size();
    return end == message.size() ||
           (std::isalnum(static_cast<unsigned char>(message[end])) == 0 && message[end] != '_');
  };
  for (auto it = o.overrides.rbegin(); it != o.overrides.rend(); ++it) {
    const std::string key = it->substr(0, it->find('='));
    if (names(key)) return fmt::format(" (given as {} on the command line)", *it);
  }
  if (!o.tracePath.empty()) {
    const std::pair<const char*, std::string> options[] = {
        {"workload.trace.ranks", o.ranks ? fmt::format("--ranks {}", *o.ranks) : ""},
        {"workload.trace.flops_per_s",
         o.flopsPerS ? fmt::format("--flops-per-s {}", *o.flopsPerS) : ""},
        {"workload.trace.size_scale",
         o.sizeScale ? fmt::format("--size-scale {}", *o.sizeScale) : ""},
        {"workload.trace.collectives",
         o.collectives.empty() ? "" : fmt::format("--collectives {}", o.collectives)},
        {"workload.trace.path", fmt::format("--trace {}", o.tracePath)}};
    for (const auto& [field, given] : options) {
      if (!given.empty() && names(field)) return fmt::format(" (given as {})", given);
    }
  }
  return {};
}

int runReplay(const ReplayOptions& o, std::ostream& out, std::ostream& err) {
  const std::string where = o.configPath.empty() ? "built-in default" : o.configPath;
  Result<config::Config> cfg = o.configPath.empty()
                                   ? config::parseTextConfig(kDefaultConfig, "built-in default")
                                   : config::loadConfigFile(o.configPath);
  if (!cfg) {
    err << "ebb replay: " << cfg.status().toString() << "\n";
    return kExitError;
  }
  // --traffic or --trace, which replace the workload's pattern.
  const char* const given = !o.trafficPath.empty() ? "--traffic"
                            : !o.tracePath.empty() ? "--trace"
                                                   : nullptr;
  for (const std::string& ov : o.overrides) {
    const std::string key = ov.substr(0, ov.find('='));
    // --traffic and --trace replace the workload's pattern: an override of
    // another pattern, or of synthetic sizes and arrivals, would be dropped
    // silently.
    static const std::vector<std::string> kReplaced = [] {
      std::vector<std::string> replaced = {
          "workload.alonso_ramp", "workload.uniform",    "workload.traffic_file", "workload.trace",
          "workload.mix",         "workload.collective", "workload.rate_points",  "workload.motif"};
      for (const SyntheticOnlyField& f : syntheticOnlyFields())
        replaced.push_back(std::string("workload.") + f.name);
      return replaced;
    }();
    for (const std::string& p : kReplaced) {
      const bool inPattern = key == p || key.rfind(p + ".", 0) == 0 || key.rfind(p + "[", 0) == 0;
      if (given != nullptr && inPattern) {
        err << "ebb replay: E_INVALID: override " << ov << ": " << given
            << " replaces the workload's pattern, sizes and arrivals (" << p
            << "), so this would be ignored; drop one of them\n";
        return kExitUsage;
      }
    }
  }
  std::vector<std::string> notes;
  if (Status s = config::applyCommandLineOverrides(*cfg, o.overrides, notes); !s.isOk()) {
    err << "ebb replay: " << s.toString() << "\n";
    return kExitUsage;
  }
  for (const std::string& note : notes)
    err << "ebb replay: note: " << note << "\n";
  // The report names what ran: the config and what the command line changed.
  // A config without a name is named by its file.
  if (cfg->name().empty()) cfg->set_name(std::filesystem::path(where).filename().string());
  if (!o.overrides.empty()) {
    std::string name = cfg->name() + " with";
    for (const std::string& ov : o.overrides)
      name += " " + ov;
    cfg->set_name(name);
  }
  if (given != nullptr) {
    // The config's synthetic sizes and arrivals go with the pattern replaced.
    for (const SyntheticOnlyField& f : syntheticOnlyFields())
      f.clear(*cfg->mutable_workload());
  }
  if (!o.tracePath.empty()) {
    auto* t = cfg->mutable_workload()->mutable_trace();
    t->set_path(absolutePath(o.tracePath));
    t->set_format(o.traceFormat == "simgrid-ti" ? config::TraceSpec::SIMGRID_TI
                  : o.traceFormat == "otf2"     ? config::TraceSpec::OTF2
                                                : config::TraceSpec::AMG_CSV);
    t->set_placement(o.placement == "random" ? config::TraceSpec::RANDOM
                                             : config::TraceSpec::LINEAR);
    if (o.ranks) t->set_ranks(*o.ranks);
    if (o.flopsPerS) t->set_flops_per_s(*o.flopsPerS);
    t->set_collectives(o.collectives);
    if (o.sizeScale) t->set_size_scale(*o.sizeScale);
  }
  if (!o.trafficPath.empty()) {
    // A path given on the command line is relative to the working directory.
    cfg->mutable_workload()->set_traffic_file(absolutePath(o.trafficPath));
  }
  const std::string baseDir = std::filesystem::path(o.configPath).parent_path().string();
  Result<RunSpec> spec = buildRunSpec(*cfg, baseDir);
  if (!spec) {
    err << "ebb replay: " << where << ": " << spec.status().toString()
        << givenOnCommandLine(o, spec.status().message()) << "\n";
    return kExitError;
  }
  for (const std::string& note : runNotes(*spec))
    err << "ebb replay: note: " << note << "\n";
  Result<fabric::Topology> topo = topologyFromConfig(cfg->fabric(), baseDir);
  if (!topo) {
    err << "ebb replay: " << where << ": " << topo.status().toString() << "\n";
    return kExitError;
  }
  Result<fabric::MinimalTree> mt = fabric::MinimalTree::build(*topo);
  if (!mt) {
    err << "ebb replay: " << where << ": " << mt.status().toString() << "\n";
    return kExitError;
  }
  CreatedFolders created;  // removed again if the run fails
  if (const std::string e = prepareRunFolder(o.outDir, reportOutputNames(), created); !e.empty()) {
    err << "ebb replay: " << e << "\n";
    return kExitError;
  }
  const auto progress = [&](const char* what) -> ProgressFn {
    if (o.quiet) return {};
    const bool tty = ::isatty(2) != 0;
    return [&err, what, tty](double f) {
      // A terminal gets one updating line; a log gets one line per step.
      err << fmt::format("{}  {:<8} {:3.0f}%", tty ? "\r" : "", what, 100 * f)
          << (f >= 1.0 || !tty ? "\n" : "") << std::flush;
    };
  };
  results::Report report;
  report.set_name(spec->name);
  report.set_fabric(summarize(*topo, *mt).shape);
  report.set_workload(spec->workloadName);
  Result<RunOutput> gatedRun = runEmulation(*spec, *topo, *mt, true, progress("agents"));
  if (!gatedRun) {
    err << "ebb replay: " << where << ": " << gatedRun.status().toString()
        << givenOnCommandLine(o, gatedRun.status().message()) << "\n";
    return kExitError;
  }
  const RunOutput& run = *gatedRun;
  *report.mutable_run() = run.summary;
  std::optional<RunOutput> baseline;
  if (spec->baseline && spec->savesPower()) {
    Result<RunOutput> allOn = runEmulation(*spec, *topo, *mt, false, progress("all-on"));
    if (!allOn) {
      err << "ebb replay: " << where << ": " << allOn.status().toString() << "\n";
      return kExitError;
    }
    baseline = std::move(*allOn);
    const auto& b = baseline->summary;
    *report.mutable_baseline() = b;
    // No saving where all links on drew no power: a fabric without switch
    // links, or faults that took every link all run (0 against 0 saves nothing).
    if (b.relative_power_switch_links() > 0) {
      report.set_power_saving_switch_links(
          1.0 - ratio(run.summary.relative_power_switch_links(), b.relative_power_switch_links()));
    }
    if (b.relative_power_all_links() > 0) {
      report.set_power_saving_all_links(
          1.0 - ratio(run.summary.relative_power_all_links(), b.relative_power_all_links()));
    }
    // Latencies to compare: some message measured in each run (delivered, and
    // created after report.latency_warmup_cycles).
    const bool latencies = run.summary.latency_messages() > 0 && b.latency_messages() > 0;
    if (latencies) {
      report.set_mean_latency_increase(
          ratio(run.summary.mean_latency_cycles(), b.mean_latency_cycles()) - 1.0);
      report.set_p99_latency_increase(
          ratio(run.summary.p99_latency_cycles(), b.p99_latency_cycles()) - 1.0);
    }
    if (b.app_runtime_us() > 0) {
      double worst = 0;
      for (results::JobComparison& j : compareJobs(run.summary, b, &worst))
        *report.add_jobs() = std::move(j);
      report.set_app_slowdown(worst);
    }
  }
  // Flushed: the results are known before the (possibly long) writing starts.
  out << formatSummary(report) << std::flush;
  Result<std::string> written =
      writeReport(o.outDir, report, run, baseline, spec->plots, topo->depth() - 1);
  if (!written) {
    err << "ebb replay: " << written.status().toString() << "\n";
    return kExitError;
  }
  created.keep();
  // A plot that could not be drawn costs no result: warn, exit 0.
  const bool plotted = spec->plots && written->empty();
  if (!written->empty())
    err << "ebb replay: warning: " << *written << " (the results are written; exit status 0)\n";
  out << fmt::format("  wrote {0}/report.json, {0}/timeseries.csv, {0}/decisions.jsonl{1}\n",
                     o.outDir, plotted ? fmt::format(", {}/plots/*.png|svg", o.outDir) : "");
  return kExitOk;
}

}  // namespace

void addReplayCommand(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<ReplayOptions>();
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "Run the emulated fabric with the per-switch agents on a workload; print the summary "
      "(link power, latency, transitions) and write report.json, timeseries.csv, "
      "decisions.jsonl and plots under --out. Unless report.skip_baseline, the same workload "
      "also runs with all links on for comparison.");
  cmd->add_option("args", opts->args,
                  "[CONFIG] [key=value ...]: the run's config file (text protobuf; default: the "
                  "built-in alonso-ramp with dynamic thresholds), then config fields to "
                  "override (e.g. gating.u_on=0.435 seed=7)");
  cmd->add_option("--out", opts->outDir, "Output folder")->capture_default_str();
  cmd->add_option("--traffic", opts->trafficPath,
                  "Replay this native traffic file (text or binary, docs/traffic.md) instead of "
                  "the config's workload")
      ->check(CLI::ExistingFile);
  auto* trace = cmd->add_option("--trace", opts->tracePath,
                                "Replay this MPI trace closed-loop (application runtime and "
                                "slowdown versus all links on): a file, or a folder of per-rank "
                                "files for simgrid-ti")
                    ->check(CLI::ExistingPath);
  cmd->add_option("--trace-format", opts->traceFormat,
                  "Trace format: amg-csv (AMG2013 event CSV), simgrid-ti (SimGrid "
                  "time-independent: a folder of per-rank files or one file), otf2 (the "
                  "traces.otf2 anchor file)")
      ->check(CLI::IsMember({"amg-csv", "simgrid-ti", "otf2"}))
      ->capture_default_str();
  cmd->add_option("--ranks", opts->ranks,
                  "Hosts given to the trace (default: its own rank count); a trace with more "
                  "ranks is rejected");
  cmd->add_option("--collectives", opts->collectives,
                  "Collective algorithms, op=name,... e.g. alltoall=socket-phased,allreduce=ring "
                  "(docs/traffic.md)");
  cmd->add_option("--flops-per-s", opts->flopsPerS,
                  "simgrid-ti: compute rate that turns flops into time (default 1e9)");
  cmd->add_option("--size-scale", opts->sizeScale,
                  "Multiply every message size of the trace by this (default 1)");
  cmd->add_option("--placement", opts->placement, "Ranks to hosts: linear or random (seeded)")
      ->check(CLI::IsMember({"linear", "random"}))
      ->capture_default_str();
  trace->excludes("--traffic");
  for (const char* o : {"--trace-format", "--ranks", "--collectives", "--flops-per-s",
                        "--size-scale", "--placement"}) {
    cmd->get_option(o)->needs(trace);
  }
  cmd->add_flag("--quiet", opts->quiet, "No progress on stderr");
  cmd->callback([opts, &action] {
    for (const std::string& a : opts->args) {
      if (a.find('=') != std::string::npos) {
        opts->overrides.push_back(a);
      } else if (opts->configPath.empty()) {
        opts->configPath = a;
      } else {
        // A second word is an override missing its value more often than a
        // second config: say both.
        throw CLI::ValidationError(
            "args", fmt::format("'{}' after the config file '{}': an override needs key=value "
                                "(e.g. {}=...), and one config file is read",
                                a, opts->configPath, a));
      }
    }
    action = [opts](std::ostream& out, std::ostream& err) { return runReplay(*opts, out, err); };
  });
}

}  // namespace ebb::tools
