#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "configs/proto/ebb.pb.h"   // generated
#include "configs/proto/tune.pb.h"  // generated

namespace ebb::tune {

// One workload every setting must meet the budget on. Paths are absolute.
struct Workload {
  std::string name;
  config::WorkloadSpec spec;
  bool isTrace = false;
};

// Penalty bounds in percent versus all links on; nullopt: not bounded.
struct Budget {
  std::optional<double> meanLatencyPct;
  std::optional<double> p99LatencyPct;
  std::optional<double> appSlowdownPct;
};

// One point of the search space: config overrides (path, value), applied in
// order to the base config.
struct Setting {
  std::size_t id = 0;
  std::vector<std::pair<std::string, std::string>> overrides;
  std::string label;  // "policy=STATIC u_off=0.03 u_on=0.15"
  // The thresholds it resolves to (the heat map's axes).
  bool isStatic = false;
  bool gates = true;  // false: ALL_ON (low-power idle alone)
  double uOn = 0;
  double uOff = 0;
  // Outside the map of valid thresholds (static U_on <= 2*U_off): never run.
  std::string mapRule;
  bool mapValid() const { return mapRule.empty(); }
};

enum class Strategy { kGrid, kHalving, kCoordinate };

// A config field swept, with its values as override strings.
struct Dimension {
  std::string path;
  std::vector<std::string> values;
};

// A validated TuneSpec: the base config (paths absolute), the workloads, the
// budget and every setting of the grid.
inline constexpr std::uint64_t kDefaultMaxSettings = 10'000;

struct TunePlan {
  std::string name;
  config::Config base;
  std::vector<Workload> workloads;
  Budget budget;
  std::vector<Setting> settings;
  std::vector<Dimension> dimensions;                // in column order
  std::map<std::string, std::size_t> settingByKey;  // "path=value;..." -> id
  Strategy strategy = Strategy::kGrid;
  int eta = 3;
  double minFraction = 1.0 / 9;
  int maxPasses = 10;
  bool allLinksObjective = false;
  bool plots = true;
  // The most settings the grid may have (the product of the swept
  // dimensions), checked before any is built: `ebb tune --max-settings`.
  std::uint64_t maxSettings = kDefaultMaxSettings;

  std::size_t validSettings() const;
  // The replay lengths of the halving rungs, ending with 1 (otherwise just 1).
  std::vector<double> rungFractions() const;
};

// Every field checked before anything runs; E_INVALID names the field and the
// rule. Relative paths resolve against `specDir`.
// `maxSettings` bounds the grid (TunePlan::maxSettings).
Result<TunePlan> buildTunePlan(const config::TuneSpec& spec, const std::string& specDir,
                               std::uint64_t maxSettings = kDefaultMaxSettings);
Result<TunePlan> loadTunePlan(const std::string& specPath,
                              std::uint64_t maxSettings = kDefaultMaxSettings);

// Whether a workload can run on a fraction of its length (a halving rung):
// alonso-ramp (time_scale) and uniform (duration_cycles) can; every other
// (traffic files, traces, rate points, collectives, motifs, mixes) runs
// whole. The one rule resolveConfig and runFraction both follow.
bool shortens(const config::WorkloadSpec& workload);
// The config a setting runs with on a workload, its replay shortened to
// `fraction` where the workload shortens (with the latency warm-up); a
// workload that does not shorten gets exactly its full-length config.
Result<config::Config> resolveConfig(const TunePlan& plan, const Setting& s, std::size_t workload,
                                     double fraction);
// The share of its length a run of resolveConfig's `resolved` config covers
// for a rung of `fraction`: the fraction itself where its workload shortens,
// else 1 (run whole).
double runFraction(const config::Config& resolved, double fraction);
// The same workload with every link on and no low-power idle (the reference).
config::Config baselineConfig(const config::Config& resolved);

}  // namespace ebb::tune
