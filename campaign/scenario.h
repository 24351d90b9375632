#pragma once

#include <cstdint>

#include "common/status.h"
#include "configs/proto/ebb.pb.h"  // generated
#include "fabric/topology.h"

namespace ebb::campaign {

// The shape of every scenario of a campaign, in check periods of the base
// config (docs/faults.md, "The campaign: ebb faults").
struct ScenarioShape {
  int periods = 24;       // run length
  double maxRate = 0.45;  // highest load drawn, flits/cycle/node
  int minFailures = 1;    // failures drawn per scenario
  int maxFailures = 4;
  double repairShare = 0.6;    // share of failures repaired before the end
  double hotspotShare = 0.35;  // share of scenarios with hot spots
};

// The seed of the `index`-th scenario of a campaign seeded with `campaignSeed`
// (a splitmix64 step: nearby campaign seeds share no scenario). Never 0.
std::uint64_t scenarioSeed(std::uint64_t campaignSeed, std::uint64_t index);

// One scenario: a pure function of the base config, its fabric and the seed.
// The base config gives the fabric, emulator, gating, low-power idle and the
// fault timing (detection, retransmit timeout, slack); the scenario draws a
// load swing (workload.rate_points with steps and ramps, sometimes
// workload.hotspot), scheduled link and switch failures (minimal-tree links,
// roots, other switches, single directions, host cables), repairs of some of
// them, and one RESTART_AGENT, all within the run. Baseline and plots off.
// `topo` must be the fabric of `base` (replay::topologyFromConfig); a
// relative topology file path is made absolute against `baseDir`, so the
// config replays alone from any folder.
config::Config makeScenario(const config::Config& base, const fabric::Topology& topo,
                            std::uint64_t seed, const ScenarioShape& shape = {},
                            const std::string& baseDir = "");

// The check period of `base` in cycles (its default when unset).
std::int64_t checkPeriodCycles(const config::Config& base);

// A scenario's length in check periods (shape.periods, at least 4: room for
// a failure, its repair and the run's last period).
inline int scenarioPeriods(const ScenarioShape& shape) {
  return shape.periods < 4 ? 4 : shape.periods;
}

}  // namespace ebb::campaign
