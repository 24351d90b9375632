#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent/decision.h"
#include "common/status.h"
#include "configs/proto/replay.pb.h"  // generated
#include "configs/proto/report.pb.h"  // generated
#include "fabric/minimal_tree.h"
#include "fabric/topology.h"
#include "replay/run_spec.h"

namespace ebb::replay {

// One row per check period of the time series (timeseries.csv).
struct PeriodRow {
  double timeCycles = 0;             // end of the period
  double spanCycles = 0;             // length: a check period, or more (idle fast-forward)
  double injectedRate = 0;           // the workload's rate, flits/cycle/node, mid-period
  bool rising = true;                // before the peak (the increasing curve)
  double offered = 0;                // generated in the period, flits/cycle/node
  double accepted = 0;               // delivered in the period, flits/cycle/node
  std::vector<double> linksOnShare;  // per level pair (l, l+1): share of directions usable
  double powerSwitchLinks = 0;       // relative power over the period
  double powerAllLinks = 0;
  double oraclePowerSwitchLinks = 0;  // the oracle bound's (replay/oracle.h)
  // Of messages delivered in the period (0 if none; timeseries.csv leaves it empty).
  double meanLatencyCycles = 0;
  std::uint64_t delivered = 0;
  bool drain = false;  // after the workload's end, while the network empties
};

struct RunOutput {
  results::RunSummary summary;
  std::vector<PeriodRow> rows;
  std::vector<agent::DecisionRecord> decisions;
  // Connectivity proofs run: one after every direction that stopped being usable.
  std::uint64_t connectivityProofs = 0;
  FaultOutcome faults;  // empty events when the run had none
};

// The faults section of report.json from a run's outcome.
void fillFaultsReport(const FaultOutcome& f, results::FaultsReport& r);

using ProgressFn = std::function<void(double fraction)>;

// Runs the emulator with the workload, and with the agents when `gated`
// (starting from the minimal tree, as in the paper); otherwise every link on
// and no low-power idle: the baseline. Deterministic: a pure function of the
// spec and the topology. Every gating change is followed by a connectivity
// proof of the links actually usable. Errors: E_INTERNAL for a broken proof
// (naming the time, the link and a disconnected pair), E_INVALID for a closed
// loop that cannot finish, and the workload's own errors (file, trace).
[[nodiscard]] Result<RunOutput> runEmulation(const RunSpec& spec, const fabric::Topology& topo,
                                             const fabric::MinimalTree& mt, bool gated,
                                             const ProgressFn& progress);

}  // namespace ebb::replay
