#pragma once

#include <span>
#include <string>

#include "agent/switch_agent.h"
#include "common/status.h"
#include "configs/proto/ebb.pb.h"  // generated
#include "replay/fault_plan.h"
#include "replay/in_band.h"
#include "replay/jobs.h"
#include "sim_backend/emulator_config.h"
#include "sim_backend/synthetic_traffic.h"
#include "workload/message_limit.h"

namespace ebb::replay {

// Rows of timeseries.csv a run has at most unless report.timeseries_period_cycles
// says otherwise: check periods are merged (replay/period_rows.h) beyond it.
inline constexpr std::int64_t kMaxTimeseriesRows = 20'000;
// Runs without agents (replay/runner.cpp, idle fast-forward) keep fewer.
inline constexpr std::int64_t kFastForwardRows = 1'000;

// A validated emulator run: the config turned into typed structs, once.
struct RunSpec {
  std::string name;
  sim::EmulatorConfig emulator;
  agent::AgentConfig agent;
  bool gating = true;  // false: all links on (no agents acting)
  // Runs without agents and faults skip idle check periods (replay/runner.cpp);
  // tests turn it off to compare.
  bool idleFastForward = true;
  std::int64_t maxTimeseriesRows = kMaxTimeseriesRows;  // tests lower it
  workload::SyntheticSpec workload;
  std::string trafficFile;              // when set, the workload is this file, replayed open-loop
  workload::MessageLimit messageLimit;  // every message of the workload is checked against it
  std::uint64_t maxMessages = 1'000'000'000;  // synthetic workloads, estimated before the run
  // Runs that simulate every check period (agents or faults): the most periods
  // of the workload's span, checked before the run (gating.max_check_periods).
  std::uint64_t maxCheckPeriods = 100'000'000;
  JobsDef jobs;  // when not empty: MPI traces and collective loops, replayed closed-loop
  std::string workloadName;
  bool baseline = true;
  bool startAllOn = false;  // gating.start: FROM_ALL_ON (default: the minimal tree)
  // Something saves power (gating or low-power idle): a baseline with every
  // link on and active is worth running.
  bool savesPower() const { return gating || emulator.lpi.mode != policies::LpiMode::kOff; }
  bool plots = true;
  // Check periods merged into one timeseries row; 0: as many as keep the run
  // within kMaxTimeseriesRows rows.
  std::int64_t timeseriesGroup = 0;
  // report.latency_warmup_cycles: latency counts messages created from then.
  TimePs latencyWarmupPs = 0;
  std::string policyName;
  FaultsDef faults;            // none by default
  InBandDef inBand;            // gating.in_band: whole-link gating under in-band rules
  double oracleTarget = 0.15;  // oracle.target_utilization, default the policy's U_on
};

// A workload field only synthetic traffic reads (alonso_ramp, uniform,
// rate_points): the message sizes and arrivals. Every other pattern brings its
// own, so buildRunSpec refuses them there, and --traffic or --trace, which
// replace the pattern, drop them with it.
struct SyntheticOnlyField {
  const char* name;  // under workload.
  bool (*given)(const config::WorkloadSpec&);
  void (*clear)(config::WorkloadSpec&);
};
std::span<const SyntheticOnlyField> syntheticOnlyFields();

// Every field checked before anything runs; E_INVALID names the field and the
// rule (e.g. "gating.turn_on_cycles: T_on (3000) must not exceed the check
// period (2000)").
// Relative traffic file paths are resolved against `baseDir`.
Result<RunSpec> buildRunSpec(const config::Config& cfg, const std::string& baseDir = "");

// What a valid spec is known to do badly, for the command to say before the
// run (`ebb replay: note: ...`): deep-sleep or hybrid low-power idle on VC
// buffers of fewer than 4 packets congests at light load (docs/emulator.md,
// "Low-power idle and small buffers"); HYBRID with a zero hold is DEEP_SLEEP.
std::vector<std::string> runNotes(const RunSpec& spec);

}  // namespace ebb::replay
