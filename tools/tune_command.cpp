#include <unistd.h>

#include <filesystem>
#include <memory>
#include <ostream>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "common/file_io.h"
#include "common/output_set.h"
#include "tools/cli_checks.h"
#include "tools/command.h"
#include "tune/interrupt_notice.h"
#include "tune/report.h"
#include "tune/search.h"
#include "tune/spec.h"

namespace ebb::tools {

namespace {

struct TuneOptions {
  std::string specPath;
  std::string outDir = "tune_out";
  int jobs = 0;
  std::string shard;
  int shardIndex = 0;
  int shardCount = 1;
  std::vector<std::string> merge;
  bool quiet = false;
  std::uint64_t maxSettings = tune::kDefaultMaxSettings;
};

// "I/N" with 0 <= I < N.
bool parseShard(const std::string& text, int& index, int& count) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) return false;
  try {
    std::size_t used = 0;
    index = std::stoi(text.substr(0, slash), &used);
    if (used != slash) return false;
    count = std::stoi(text.substr(slash + 1), &used);
    if (used != text.size() - slash - 1) return false;
  } catch (const std::exception&) {
    return false;
  }
  return count >= 1 && index >= 0 && index < count;
}

int runTuneCommand(const TuneOptions& o, std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  Result<tune::TunePlan> plan = tune::loadTunePlan(o.specPath, o.maxSettings);
  if (!plan) {
    err << "ebb tune: " << plan.status().toString() << "\n";
    return kExitError;
  }
  // Every --merge folder is checked before --out is touched and before any
  // is merged: a bad one is refused with nothing created or copied.
  std::vector<fs::path> froms;
  for (const std::string& dir : o.merge) {
    // A shard's --out folder, or its cache folder itself.
    std::error_code ec;
    const fs::path sub = fs::path(dir) / "cache";
    const fs::path from = fs::is_directory(sub, ec) ? sub : fs::path(dir);
    if (!fs::is_directory(from, ec)) {
      err << fmt::format("ebb tune: --merge: {}: not a folder of cached runs{}\n", dir,
                         ec ? " (" + ec.message() + ")" : "");
      return kExitError;
    }
    froms.push_back(from);
  }
  // Removed again if the sweep fails with nothing in them (the cache keeps
  // what was computed or merged, for the next try).
  CreatedFolders created;
  if (const std::string e = prepareRunFolder(o.outDir, tune::tuneOutputNames(), created);
      !e.empty()) {
    err << "ebb tune: " << e << "\n";
    return kExitError;
  }
  const tune::RunCache cache((fs::path(o.outDir) / "cache").string());
  if (std::error_code ec = created.create(cache.dir()); ec) {
    err << fmt::format("ebb tune: --out: cannot create {}: {}\n", cache.dir(), ec.message());
    return kExitError;
  }
  for (const fs::path& from : froms) {
    std::vector<std::string> corrupt;
    Result<std::size_t> n = cache.importFrom(from.string(), &corrupt);
    if (!n) {
      err << "ebb tune: --merge: " << n.status().toString() << "\n";
      return kExitError;
    }
    // Not fatal here: another folder may hold a good copy; a run left
    // without one is an error naming its file when the results are gathered.
    for (const std::string& c : corrupt)
      err << "ebb tune: --merge: warning: " << c << " (not merged)\n";
    if (!o.quiet) err << fmt::format("ebb tune: merged {} runs from {}\n", *n, from.string());
  }
  tune::ExecOptions exec;
  exec.jobs =
      o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  exec.shardIndex = o.shardIndex;
  exec.shardCount = o.shardCount;
  exec.computeMissing = o.merge.empty();
  exec.progress = o.quiet ? nullptr : &err;
  exec.tty = ::isatty(2) != 0;
  tune::InterruptNotice notice(cache.dir());
  exec.stored = notice.stored();
  Result<tune::TuneResult> result = tune::runTune(*plan, cache.dir(), exec);
  if (!result) {
    err << "ebb tune: " << result.status().toString() << "\n";
    return kExitError;
  }
  created.keep();
  if (!result->complete) {
    out << fmt::format(
        "ebb tune: shard {}/{}: {} runs computed, {} found in {}, {} left to the other shards\n"
        "  merge when every shard is done: ebb tune {} --merge DIR... --out OUT\n",
        o.shardIndex, o.shardCount, result->counters.computed, result->counters.cached, cache.dir(),
        result->counters.skipped, o.specPath);
    return kExitOk;
  }
  out << tune::formatTuneSummary(*plan, *result);
  Result<std::string> written = tune::writeTuneOutputs(o.outDir, *plan, *result);
  if (!written) {
    err << "ebb tune: " << written.status().toString() << "\n";
    return kExitError;
  }
  if (!written->empty()) err << "ebb tune: warning: " << *written << " (the results are written)\n";
  out << fmt::format(
      "  wrote {0}/runs.csv, {0}/runs.json, {0}/settings.csv, {0}/pareto.csv{1}{2}\n", o.outDir,
      result->best ? fmt::format(", {}/recommended.textproto", o.outDir) : "",
      plan->plots && written->empty() ? fmt::format(", {}/plots/*.png|svg", o.outDir) : "");
  if (!result->best) {
    err << "ebb tune: no setting of the search space meets the budget on every workload (see "
        << o.outDir << "/settings.csv)\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace

void addTuneCommand(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<TuneOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "Sweep gating and low-power-idle settings (or any config field) on the emulated fabric and "
      "recommend the one that saves the most link power within a latency or slowdown budget "
      "versus all links on, on every workload of the spec. Writes runs.csv, runs.json, "
      "settings.csv, pareto.csv, recommended.textproto and plots under --out; runs are cached "
      "there, so an interrupted sweep resumes (docs/tune.md).");
  cmd->add_option("spec", opts->specPath,
                  "The sweep (text protobuf TuneSpec, configs/proto/tune.proto)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", opts->outDir, "Output folder (and its cache/ of finished runs)")
      ->capture_default_str();
  cmd->add_option("--jobs", opts->jobs, "Runs in parallel (default: every core)")
      ->check(wholeNumberAboveZero());
  auto* shard = cmd->add_option(
      "--shard", opts->shard,
      "I/N: run only the I-th of N parts of the grid (0 <= I < N), e.g. a Slurm array "
      "task; then merge the shards' folders with --merge");
  auto* merge = cmd->add_option("--merge", opts->merge,
                                "Folders of finished shards: gather their runs into --out and "
                                "write the results (no run is computed)")
                    ->expected(1, -1);
  merge->excludes("--shard");
  cmd->add_option("--max-settings", opts->maxSettings,
                  "Refuse a grid of more settings than this (the product of the swept "
                  "dimensions, counted before any is built); raise it deliberately for a big "
                  "sweep")
      ->check(wholeNumberAboveZero())
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000}))
      ->capture_default_str();
  cmd->add_flag("--quiet", opts->quiet, "No progress on stderr");
  cmd->callback([opts, shard, &action] {
    // Given, even empty (a job script's unset variable), it must be I/N: an
    // empty one must not make every array task run the whole grid.
    if (shard->count() > 0 && !parseShard(opts->shard, opts->shardIndex, opts->shardCount)) {
      throw CLI::ValidationError("--shard", "expected I/N with 0 <= I < N, got " + opts->shard);
    }
    action = [opts](std::ostream& out, std::ostream& err) {
      return runTuneCommand(*opts, out, err);
    };
  });
}

}  // namespace ebb::tools
