#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "campaign/scenario.h"
#include "common/status.h"
#include "configs/proto/ebb.pb.h"  // generated
#include "replay/fault_plan.h"

namespace ebb::campaign {

// What one scenario measured (a row of scenarios.csv).
struct ScenarioResult {
  std::uint64_t index = 0;
  std::uint64_t seed = 0;
  std::uint64_t faultsScheduled = 0;  // FAIL events in its config
  std::uint64_t repairsScheduled = 0;
  std::uint64_t faultsInjected = 0;  // failures the run reports ("fail" records)
  std::uint64_t messagesGenerated = 0;
  std::uint64_t messagesDelivered = 0;
  // Packets neither delivered nor lost when the run's drain ended (stuck, or
  // a backlog the drain's bound cut short).
  std::uint64_t packetsStranded = 0;
  std::int64_t periods = 0;  // check periods run
  replay::FaultOutcome faults;
  std::string error;   // the run failed (a bug: the config is generated valid)
  double seconds = 0;  // wall time; never in summary.json (determinism)
};

// The totals of a campaign (summary.json); counters summed over scenarios.
struct CampaignTotals {
  std::uint64_t scenarios = 0;
  std::uint64_t violations = 0;
  std::uint64_t scenariosWithViolations = 0;
  std::uint64_t physicallyCutPairs = 0;
  std::uint64_t scenariosWithCutPairs = 0;  // some pair cut off
  std::uint64_t scenariosWithCutHosts = 0;  // some host cut off from the main part
  TimePs maxRecoveryPs = 0;
  TimePs recoveryBoundPs = 0;  // the largest bound of any scenario
  std::uint64_t lostMessages = 0;
  std::uint64_t retransmittedMessages = 0;
  std::uint64_t packetsRerouted = 0;
  std::uint64_t packetsStranded = 0;
  std::uint64_t scenariosWithStranded = 0;
  std::uint64_t packetsDropped = 0;
  std::uint64_t agentRestarts = 0;
  std::uint64_t faultsInjected = 0;
  std::uint64_t faultsScheduled = 0;
  std::uint64_t repairsScheduled = 0;
  std::uint64_t messagesGenerated = 0;
  std::uint64_t messagesDelivered = 0;
  std::uint64_t failedRuns = 0;
  std::size_t worst = 0;       // index into the scenarios
  std::string worstReason;     // "3 violations", "longest recovery: 2100000 ps", ...
  std::string firstViolation;  // "scenario 17 (seed ...): <the runner's text>"
  std::string firstError;
};

struct CampaignResult {
  std::vector<ScenarioResult> scenarios;  // in scenario order
  CampaignTotals totals;
};

struct CampaignOptions {
  std::uint64_t seed = 1;
  std::uint64_t scenarios = 100;
  int jobs = 1;
  ScenarioShape shape;
  std::string baseDir;  // the base config's folder (relative topology files)
  // Called with (done, total) as scenarios finish, from the worker threads
  // one at a time.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
};

// Runs one scenario config (makeScenario's) alone: gated, violations counted
// rather than fatal. Never fails itself: a run error is recorded in `error`.
ScenarioResult runScenario(const config::Config& scenario, const std::string& baseDir = "");

// Whether a campaign can run on `base` (whose fabric is `topo`, already
// built with its minimal tree) at all, before anything is run or written: the
// fabric has at least two hosts (a fault campaign keeps host pairs
// connected), and a scenario built on it (seed `seed`) validates. E_INVALID
// naming the field or the rule otherwise.
Status checkCampaignBase(const config::Config& base, const fabric::Topology& topo,
                         std::uint64_t seed, const ScenarioShape& shape,
                         const std::string& baseDir);

// Runs `options.scenarios` scenarios on `options.jobs` threads. The result
// depends only on the base config, the seed and the count, not on the jobs.
// E_INVALID (naming the field) when the base config itself is unusable: its
// fabric, or a scenario built on it that does not validate.
Result<CampaignResult> runCampaign(const config::Config& base, const CampaignOptions& options);

// Totals, worst scenario and first violation over `scenarios` (in order).
CampaignTotals aggregate(const std::vector<ScenarioResult>& scenarios);

}  // namespace ebb::campaign
