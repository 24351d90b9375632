#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "campaign/campaign.h"
#include "campaign/summary.h"
#include "common/file_io.h"
#include "common/output_set.h"
#include "common/plural.h"
#include "configs/config_loader.h"
#include "fabric/minimal_tree.h"
#include "replay/fabric_from_config.h"
#include "tools/cli_checks.h"
#include "tools/command.h"
#include "tools/topo_summary.h"

namespace ebb::tools {

namespace {

struct FaultsOptions {
  std::string configPath;
  std::uint64_t scenarios = 100;
  std::uint64_t seed = 1;
  int jobs = 0;
  int periods = campaign::ScenarioShape{}.periods;
  std::string outDir = "faults_out";
  std::uint64_t replaySeed = 0;
  bool replay = false;
  std::string emitConfig;
  bool writeOut = true;  // false: a scenario replayed without --out writes no folder
  bool quiet = false;
};

std::string clock(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

// One scenario alone: its events as the run reports them. The agents'
// re-homing and the pairs' reconnection are independent (a repair or an
// on-demand turn-on can reconnect before the agents re-home): in time order.
void printScenario(const campaign::ScenarioResult& r, std::ostream& out) {
  for (const replay::FaultRecord& f : r.faults.events) {
    std::vector<std::pair<TimePs, std::string>> after;
    if (f.detectedAt >= 0) after.emplace_back(f.detectedAt, "agents re-homed");
    if (f.recoveredAt >= 0) after.emplace_back(f.recoveredAt, "every pair reconnected");
    std::stable_sort(after.begin(), after.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string tail;
    for (const auto& [at, what] : after)
      tail += fmt::format("; {} at {} ps", what, at);
    out << fmt::format("    {:>12} ps  {:<13} {}{}\n", f.at, f.action, f.part, tail);
  }
}

int runFaults(const FaultsOptions& o, std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  Result<config::Config> base = config::loadConfigFile(o.configPath);
  if (!base) {
    err << "ebb faults: " << base.status().toString() << "\n";
    return kExitError;
  }
  const std::string baseDir = fs::path(o.configPath).parent_path().string();
  Result<fabric::Topology> topo = replay::topologyFromConfig(base->fabric(), baseDir);
  if (!topo) {
    err << "ebb faults: " << o.configPath << ": " << topo.status().toString() << "\n";
    return kExitError;
  }
  Result<fabric::MinimalTree> mt = fabric::MinimalTree::build(*topo);
  if (!mt) {
    err << "ebb faults: " << o.configPath << ": " << mt.status().toString() << "\n";
    return kExitError;
  }
  const TopoSummary shape = summarize(*topo, *mt);
  campaign::CampaignOptions opts;
  opts.seed = o.seed;
  opts.scenarios = o.scenarios;
  opts.jobs =
      o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  opts.shape.periods = o.periods;
  opts.baseDir = baseDir;
  // A base no scenario can run on is refused before --out is touched.
  if (Status s = campaign::checkCampaignBase(
          *base, *topo, o.replay ? o.replaySeed : campaign::scenarioSeed(o.seed, 0), opts.shape,
          baseDir);
      !s.isOk()) {
    err << "ebb faults: " << o.configPath << ": " << s.toString() << "\n";
    return kExitError;
  }
  if (!o.emitConfig.empty()) {
    if (Status s = checkOutputFile(o.emitConfig, "--emit-config", {o.configPath}); !s.isOk()) {
      err << "ebb faults: " << s.toString() << "\n";
      return kExitUsage;
    }
  }
  CreatedFolders created;  // removed again if the campaign fails
  if (o.writeOut) {
    if (const std::string e = prepareRunFolder(o.outDir, campaign::campaignOutputNames(), created);
        !e.empty()) {
      err << "ebb faults: " << e << "\n";
      return kExitError;
    }
  }
  campaign::CampaignInfo info;
  info.config = o.configPath;
  info.fabric = fmt::format("{} ({}, {})", shape.shape, counted(shape.hosts, "host", "hosts"),
                            counted(shape.switches, "switch", "switches"));
  info.seed = o.seed;
  info.periods = o.periods;
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  campaign::CampaignResult result;
  if (o.replay) {
    const config::Config cfg =
        campaign::makeScenario(*base, *topo, o.replaySeed, opts.shape, baseDir);
    if (!o.emitConfig.empty()) {
      if (Status s = writeFile(o.emitConfig, campaign::configText(cfg)); !s.isOk()) {
        err << "ebb faults: --emit-config: " << s.toString() << "\n";
        return kExitError;
      }
    }
    result.scenarios.push_back(campaign::runScenario(cfg, baseDir));
    result.totals = campaign::aggregate(result.scenarios);
    info.seed = o.replaySeed;
    out << fmt::format("ebb faults: scenario seed {} alone\n", o.replaySeed);
    printScenario(result.scenarios.front(), out);
  } else {
    if (!o.quiet) {
      opts.progress = [&err, &elapsed, last = std::uint64_t{0}](std::uint64_t done,
                                                                std::uint64_t total) mutable {
        // Every 5% (and the last one): a log line, not a redrawn terminal line.
        const std::uint64_t step = done * 20 / total;
        if (step == last && done != total) return;
        last = step;
        const double t = elapsed();
        err << fmt::format("ebb faults: {}/{} scenarios ({:.0f}%), {} elapsed, ETA {}\n", done,
                           total, 100.0 * static_cast<double>(done) / static_cast<double>(total),
                           clock(t),
                           clock(t / static_cast<double>(done) * static_cast<double>(total - done)))
            << std::flush;
      };
    }
    Result<campaign::CampaignResult> ran = campaign::runCampaign(*base, opts);
    if (!ran) {
      err << "ebb faults: " << o.configPath << ": " << ran.status().toString() << "\n";
      return kExitError;
    }
    result = std::move(*ran);
  }
  const double seconds = elapsed();
  out << campaign::summaryText(info, result);
  const config::Config worst =
      result.scenarios.empty()
          ? *base
          : campaign::makeScenario(*base, *topo, result.scenarios[result.totals.worst].seed,
                                   opts.shape, baseDir);
  if (o.writeOut) {
    if (Status s = campaign::writeCampaignOutputs(o.outDir, info, result, worst); !s.isOk()) {
      err << "ebb faults: " << s.toString() << "\n";
      return kExitError;
    }
    created.keep();
  }
  const int jobs = o.replay ? 1 : opts.jobs;
  out << fmt::format("  time:       {:.1f} s on {} jobs, {:.0f} ms per scenario per job\n", seconds,
                     jobs,
                     1000.0 * seconds * jobs /
                         static_cast<double>(std::max<std::size_t>(1, result.scenarios.size())));
  if (o.writeOut) {
    out << fmt::format(
        "  wrote {0}/summary.json, {0}/scenarios.csv, {0}/worst_scenario.textproto\n", o.outDir);
  }
  if (!o.emitConfig.empty()) out << "  wrote " << o.emitConfig << "\n";
  return result.totals.violations > 0 || result.totals.failedRuns > 0 ? kExitError : kExitOk;
}

}  // namespace

void addFaultsCommand(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<FaultsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "faults",
      "A randomized fault campaign on the emulated fabric: N short scenarios drawn from the "
      "config and the seed, each with load swings (steps, ramps, hot spots), link and switch "
      "failures (minimal-tree links and roots included), repairs and an agent restart. Counts "
      "host-pair periods disconnected beyond the recovery bound (violations) and writes "
      "summary.json, scenarios.csv and worst_scenario.textproto under --out; exit 1 when any "
      "violation (docs/faults.md).");
  cmd->add_option("--config", opts->configPath,
                  "The base config (text protobuf): fabric, emulator, gating, low-power idle and "
                  "fault timing (faults.detection_cycles, ...); its workload and fault events "
                  "are replaced by each scenario's")
      ->required()
      ->check(CLI::ExistingFile);
  auto* scenarios =
      cmd->add_option("--scenarios", opts->scenarios, "How many scenarios")
          ->check(CLI::Validator(
                      [](std::string& s) -> std::string {
                        unsigned long long v = 0;
                        if (parseWholeNumber(s, v) && v >= 1 && v <= 100'000'000) return {};
                        return "must be a whole number from 1 to 100000000 (is " + s + ")";
                      },
                      "1..100000000")
                      .name(kOwnLowerBound))
          ->capture_default_str();
  auto* seed = cmd->add_option("--seed", opts->seed,
                               "The campaign's seed (scenario i's seed derives from it)")
                   ->check(wholeNumber())
                   ->capture_default_str();
  auto* jobs = cmd->add_option("--jobs", opts->jobs, "Scenarios in parallel (default: every core)")
                   ->check(wholeNumberAboveZero());
  cmd->add_option("--periods", opts->periods, "Length of each scenario, in check periods")
      ->check(CLI::Range(4, 100'000))
      ->capture_default_str();
  auto* outOpt = cmd->add_option("--out", opts->outDir,
                                 "Output folder (with --replay-scenario: written only when given, "
                                 "so a replay never overwrites its campaign's results)")
                     ->capture_default_str();
  auto* replay = cmd->add_option("--replay-scenario", opts->replaySeed,
                                 "Run only the scenario of this seed (a seed from summary.json or "
                                 "scenarios.csv) and list its fault events")
                     ->check(wholeNumberAboveZero());
  // One scenario, by its own seed: a campaign's count, seed and jobs would be
  // ignored without a word.
  for (CLI::Option* campaignOnly : {scenarios, seed, jobs})
    campaignOnly->excludes(replay);
  cmd->add_option("--emit-config", opts->emitConfig,
                  "With --replay-scenario: write that scenario's config to this file "
                  "(`ebb replay FILE` runs it alone)")
      ->needs(replay);
  cmd->add_flag("--quiet", opts->quiet, "No progress on stderr");
  cmd->callback([opts, replay, outOpt, &action] {
    opts->replay = replay->count() > 0;
    opts->writeOut = !opts->replay || outOpt->count() > 0;
    action = [opts](std::ostream& out, std::ostream& err) { return runFaults(*opts, out, err); };
  });
}

}  // namespace ebb::tools
