#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "agent/agent_host.h"
#include "agent/asio_scheduler.h"
#include "common/status.h"
#include "daemon/daemon_settings.h"
#include "daemon/event_log.h"
#include "daemon/instance_lock.h"
#include "daemon/metrics.h"
#include "daemon/metrics_server.h"
#include "daemon/osm_event_intake.h"
#include "fabric/minimal_tree.h"
#include "fabric/topology.h"
#include "ib_backend/ib_backend.h"
#include "ib_backend/umad_transport.h"

namespace ebb::daemon {

// `ebb agent` (docs/ib_agent.md): one SwitchAgent per managed switch over the
// InfiniBand backend, on one Asio io_context, next to OpenSM. run() opens the
// umad port, reads the fabric, starts the agents, the metrics endpoint and
// the OpenSM event intake, and runs until SIGTERM/SIGINT or run_for; on the
// way out it restores what it gated unless keep_state_on_exit.
//
// What it prints: a startup line, a line per decision and per Set, and a
// summary on `out`; errors and fail-safes on `err`. What it logs: the event
// log (daemon/event_log.h). What it exports: daemon/metrics.h.
class AgentDaemon {
 public:
  AgentDaemon(DaemonSettings settings, const fabric::Topology& topo, std::ostream& out,
              std::ostream& err);
  ~AgentDaemon();
  AgentDaemon(const AgentDaemon&) = delete;
  AgentDaemon& operator=(const AgentDaemon&) = delete;

  // Runs the daemon (or, with settings.sweeps, the counter sweeps) to the
  // end; returns the exit code. Call once.
  int run();

 private:
  // Start-up, in this order; each false/error ends run() with exit code 1.
  bool takeLock();
  // openPort() exits the process when the port does not open (its helper
  // thread may be stuck inside the umad library).
  void openPort();
  bool readFabric();
  void reportTopologySurvey();
  void printStartupLine();
  void startAgents();
  // Links found down at start (not by ebb) join the fault set (failed parts).
  void takeInFailedAtStart();
  Status startMetrics();
  Status startOsmEvents();

  // What the agents and the backend report.
  void onDecision(const agent::DecisionRecord& d);
  void onPortSet(const ib::PortSetEvent& e);
  void onRehome(const agent::AgentHost::Recovery& r);
  void onFailSafe(fabric::SwitchId sw, const std::string& why);

  // OpenSM's events: which switches to re-read, and what a re-read found.
  void onOsmEvent(const OsmEvent& ev);
  std::vector<fabric::SwitchId> rereadTargets(const OsmEvent& ev) const;
  void reread(fabric::SwitchId sw, const std::string& cause, std::int64_t reportedNs,
              bool retryIfUnchanged);
  void onReread(fabric::SwitchId sw, const std::string& cause, std::int64_t reportedNs,
                const Result<std::vector<ib::PortChange>>& r);

  // Stopping: the agents stop, then what they gated is restored (or kept).
  void shutdown(const std::string& why);
  void restoreGated();
  void printSummary();

  // After a re-homing turned links on: polls until every one reads up (or
  // agent.restore_timeout_ms passes) and says how long recovery took.
  // Re-enables the first hop toward every switch out of reach (IbBackend::reachOut).
  void reachOut();
  // `number`: the re-homing's (counters_.rehomings once it was counted).
  void watchRecovery(TimePs since, std::uint64_t number, std::vector<fabric::LinkId> links,
                     std::string cause);
  // At agent.restore_timeout_ms: the links of re-homing `number` not up are
  // reported timed out, or superseded (a later re-homing, or turned off again).
  void finishRecovery(TimePs since, std::uint64_t number, const std::vector<fabric::LinkId>& links,
                      const std::string& cause);

  // Safety of the management path (agent_daemon_safety.cpp).
  // The subnet manager: checked before the agents start, then every check
  // period; no link is turned off while there is no master SM.
  void checkSubnetManagerAtStart();
  void watchSubnetManager();
  void onSubnetManager(const ib::SubnetManagerState& st);
  void rereadAfterOutage();
  // What every turn-off needs beyond the guard's proofs (SafetyGuard's gate).
  Status turnOffGate() const;
  // A re-enable not delivered, or delivered after all.
  void onReenable(const ib::ReenableEvent& e);
  // The links that failed are read again every few check periods, backing
  // off while nothing changes, so a repair whose trap was lost is seen.
  void scheduleReprobe(TimePs delay);
  TimePs reprobeBasePs() const;
  void reportCutOff();
  // Flap holds that ended: said once each.
  void reportFlapHoldsEnded();

  // The state file (agent_daemon_state.cpp, daemon/gate_record.h). Read
  // before the port is opened (a bad file stops the start, nothing touched);
  // after discovery the gates it lists that the fabric still shows are taken
  // back, then it is rewritten before every gating Set and on each change.
  // Dry runs and read-only runs read it, say what it lists, and leave it.
  bool readState();
  bool adoptState();
  Status writeState();
  bool writesState() const { return !s_.readOnly && !s_.backend.dryRun; }

  // The counters plus the gauges read now, for a scrape.
  DaemonMetrics metricsNow();
  void addLinkGauges(DaemonMetrics& m) const;

  const DaemonSettings s_;
  const fabric::Topology& topo_;
  std::ostream& out_;
  std::ostream& err_;
  const std::set<fabric::SwitchId> managed_;
  const char* gatingAction_;  // "disable_port" or "reduce_width"

  boost::asio::io_context io_;
  agent::AsioScheduler sched_;
  std::unique_ptr<InstanceLock> lock_;  // held until the daemon is destroyed
  std::unique_ptr<ib::UmadTransport> mad_;
  std::unique_ptr<ib::IbBackend> backend_;
  std::unique_ptr<fabric::MinimalTree> tree_;
  EventLog log_;
  DaemonMetrics counters_;  // the counters; gauges are filled by metricsNow()
  // The last refusal logged per (switch, port index), to log each once.
  std::map<std::pair<std::uint32_t, std::uint16_t>, std::string> lastRefusal_;
  std::unique_ptr<agent::AgentHost> host_;
  std::unique_ptr<OsmEventListener> osmEvents_;
  std::unique_ptr<MetricsServer> metrics_;
  std::unique_ptr<boost::asio::signal_set> signals_;
  int exitCode_ = 0;
  bool stopping_ = false;
  std::optional<ib::SubnetManagerState> sm_;  // the last check (none before the first)
  bool smWarned_ = false;                     // the warning of this absence is out
  std::set<fabric::SwitchId> cutOff_;         // switches said to be out of reach
  std::size_t failedSeen_ = 0;                // failed links at the last re-probe
  std::string statePath_;                     // agent.state_file, or its default
  std::vector<ib::HeldGate> previousGates_;   // as read at start
  std::vector<ib::HeldGate> carried_;         // of those, not taken back and not read ungated: kept
  std::string stateText_;                     // as last written
  std::string stateError_;                    // the last write failure said ("" once it heals)
};

}  // namespace ebb::daemon
