#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <optional>
#include <ostream>
#include <thread>
#include <utility>

#include "common/fs_util.h"
#include "common/plural.h"
#include "configs/config_loader.h"
#include "configs/overrides.h"
#include "daemon/agent_daemon.h"
#include "daemon/instance_lock.h"
#include "ib_backend/verbs_devices.h"
#include "replay/fabric_from_config.h"
#include "tools/cli_checks.h"
#include "tools/command.h"

namespace ebb::tools {

using namespace ebb::replay;  // NOLINT(google-build-using-namespace): the library this command
                              // shells
namespace {

struct AgentOptions {
  std::string configPath;
  std::vector<std::string> overrides;
  bool dryRun = false;
  std::string ca;
  int port = -1;
  std::string metrics;
  std::string decisionLog;
  std::string osmEvents;
  std::int64_t runForMs = -1;
  std::int64_t openTimeoutMs = 10000;
  int sweeps = 0;
  bool listDevices = false;
  bool checkConfig = false;
};

int listDevices(std::ostream& out, std::ostream& err) {
  // Under ibsim the preload library hooks sysfs and waits forever for a
  // simulator that is not there: give up after a while.
  using Listed = Result<std::vector<ib::VerbsDevice>>;
  auto task = std::make_shared<std::packaged_task<Listed()>>([] { return ib::listVerbsDevices(); });
  auto fut = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (fut.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    err << "ebb agent: libibverbs did not answer in 10 s (under ibsim's preload library: is "
           "ibsim running with this IBSIM_SOCKNAME?)\n";
    std::fflush(nullptr);
    std::_Exit(kExitError);  // the thread may still be blocked inside the preload library
  }
  Listed devices = fut.get();
  if (!devices) {
    err << "ebb agent: " << devices.status().toString() << "\n";
    return kExitError;
  }
  out << ib::describeDevices(*devices);
  return 0;
}

// The config file, the command line's overrides and flags on top, the
// topology it names and the daemon's settings checked against it: everything
// `ebb agent` validates before it opens the umad port. kExitOk or the exit
// code, with the message on `err`.
int loadAgentSettings(const AgentOptions& o, std::ostream& err,
                      std::optional<fabric::Topology>& topoOut,
                      std::optional<daemon::DaemonSettings>& settingsOut) {
  Result<config::Config> cfg = config::loadConfigFile(o.configPath);
  if (!cfg) {
    err << "ebb agent: " << cfg.status().toString() << "\n";
    return kExitError;
  }
  std::vector<std::string> notes;
  if (Status s = config::applyCommandLineOverrides(*cfg, o.overrides, notes); !s.isOk()) {
    err << "ebb agent: " << s.toString() << "\n";
    return kExitUsage;
  }
  for (const std::string& note : notes)
    err << "ebb agent: note: " << note << "\n";
  config::AgentDaemonSpec* a = cfg->mutable_agent();
  if (o.dryRun) a->set_dry_run(true);
  if (!o.ca.empty()) a->set_ca(o.ca);
  if (o.port >= 0) a->set_ca_port(o.port);
  if (!o.metrics.empty()) a->set_metrics_listen(o.metrics);
  if (o.runForMs >= 0) a->set_run_for_ms(o.runForMs);
  if (!o.decisionLog.empty()) {
    a->set_decision_log(absolutePath(o.decisionLog));
  }
  if (!o.osmEvents.empty()) a->set_osm_events(absolutePath(o.osmEvents));
  const std::string baseDir = std::filesystem::path(o.configPath).parent_path().string();
  Result<fabric::Topology> topo = topologyFromConfig(cfg->fabric(), baseDir);
  if (!topo) {
    err << "ebb agent: " << o.configPath << ": " << topo.status().toString() << "\n";
    return kExitError;
  }
  Result<daemon::DaemonSettings> s = daemon::buildDaemonSettings(*cfg, baseDir, *topo);
  if (!s) {
    err << "ebb agent: " << o.configPath << ": " << s.status().toString() << "\n";
    return kExitError;
  }
  // A file the agent writes on the config itself would destroy it.
  for (auto [field, path] :
       {std::pair{"decision_log", &s->decisionLog}, std::pair{"lock_file", &s->lockFile},
        std::pair{"state_file", &s->stateFile}}) {
    std::error_code ec;
    if (!path->empty() && std::filesystem::equivalent(*path, o.configPath, ec)) {
      err << fmt::format("ebb agent: {}: agent.{}: {} is the config file itself\n", o.configPath,
                         field, *path);
      return kExitError;
    }
  }
  if (o.openTimeoutMs <= 0) {
    err << "ebb agent: --open-timeout-ms must be > 0\n";
    return kExitUsage;
  }
  s->openTimeoutPs = milliseconds(o.openTimeoutMs);
  s->sweeps = o.sweeps;
  topoOut.emplace(std::move(*topo));
  settingsOut.emplace(std::move(*s));
  return kExitOk;
}

// --check-config: what ebb agent would run with, after every check it makes
// before opening the port; no port opened, no lock taken, nothing sent.
int checkConfig(const AgentOptions& o, std::ostream& out, std::ostream& err) {
  std::optional<fabric::Topology> topo;
  std::optional<daemon::DaemonSettings> s;
  if (int rc = loadAgentSettings(o, err, topo, s); rc != kExitOk) return rc;
  const std::size_t allowed = s->readOnly ? 0 : s->managed.size();
  // By name and GUID, so a mistyped GUID that names another switch shows.
  std::string allowList;
  for (std::size_t i = 0; i < allowed && i < 8; ++i) {
    const fabric::Switch& sw = topo->sw(s->managed[i]);
    allowList += fmt::format("{}{} (0x{:016x})", i == 0 ? ": " : ", ", sw.name, sw.guid);
  }
  if (allowed > 8) allowList += fmt::format(", and {} more", allowed - 8);
  const char* mode = s->readOnly ? "read-only (no switch is allow-listed: decides and logs, "
                                   "never sets)"
                     : s->backend.dryRun ? "dry run (decides and logs, never sets)"
                                         : "active";
  out << fmt::format(
      "ebb agent: {}: config OK\n"
      "  fabric:        {} switches, {} links\n"
      "  allow-listed:  {}{}\n"
      "  mode:          {}\n"
      "  policy:        {}; check period {} ms\n"
      "  on SIGTERM:    {} (restore_timeout_ms {})\n"
      "  metrics:       {}\n"
      "  decision log:  {}\n"
      "  OpenSM events: {}\n"
      "  lock file:     {}\n"
      "  state file:    {}\n",
      o.configPath, topo->numSwitches(), topo->numLinks(), counted(allowed, "switch", "switches"),
      allowList, mode, s->policyName, s->agent.checkPeriodPs / kPsPerMs,
      s->keepStateOnExit ? "keeps links as they are" : "re-enables every link it disabled",
      s->backend.restoreTimeoutPs / kPsPerMs,
      s->metricsListen.empty() ? "off" : "http://" + s->metricsListen + "/metrics",
      s->decisionLog.empty() ? "none" : s->decisionLog,
      s->osmEvents.empty() ? "none" : s->osmEvents,
      daemon::lockFileFor(s->port, s->lockFile) + (s->lockFile.empty() ? " (default)" : ""),
      daemon::stateFileFor(s->port, s->stateFile) + (s->stateFile.empty() ? " (default)" : ""));
  return kExitOk;
}

int runAgent(const AgentOptions& o, std::ostream& out, std::ostream& err) {
  std::optional<fabric::Topology> topo;
  std::optional<daemon::DaemonSettings> s;
  if (int rc = loadAgentSettings(o, err, topo, s); rc != kExitOk) return rc;
  int rc = 0;
  {
    daemon::AgentDaemon d(std::move(*s), *topo, out, err);
    rc = d.run();
  }  // the umad port, the event log and the sockets are closed here
  // ibsim's preload library (libumad2sim) joins its reader thread from an
  // atexit handler while holding the lock that thread takes to deliver a MAD
  // reply: with MADs still in flight (the agents' reads at SIGTERM) exit()
  // could hang or crash. Nothing of ebb's is left to tear down: flush and
  // leave without the exit handlers.
  out.flush();
  err.flush();
  std::fflush(nullptr);
  std::_Exit(rc);
}

}  // namespace

void addAgentCommand(CLI::App& app, CommandAction& action) {
  auto o = std::make_shared<AgentOptions>();
  CLI::App* cmd = app.add_subcommand(
      "agent",
      "Run the per-switch agents next to OpenSM on an InfiniBand subnet (or ibsim). Reads the "
      "fabric's topology from the config (an ibnetdiscover dump or ibsim net file), checks it "
      "against the subnet by directed route, reads PortCountersExtended every check period and "
      "disables/enables whole links (PortInfo PhysPortState) without ever disconnecting a host "
      "pair. Read-only unless switches are allow-listed (agent.allow_switches); --dry-run decides "
      "and logs without sending a Set. SIGTERM re-enables every link it disabled unless "
      "agent.keep_state_on_exit. Prometheus metrics on agent.metrics_listen. See "
      "docs/ib_agent.md.");
  cmd->add_option("--config", o->configPath,
                  "ebb config (text protobuf) with fabric, gating, agent")
      ->check(CLI::ExistingFile);
  cmd->add_option("overrides", o->overrides, "key=value overrides of config fields");
  cmd->add_flag("--dry-run", o->dryRun, "decide and log, never send a Set (agent.dry_run)");
  cmd->add_option("--ca", o->ca, "CA name (agent.ca); default: the first CA");
  cmd->add_option("--port", o->port, "CA port (agent.ca_port); default: the first active port")
      ->check(CLI::Range(0, 254));
  cmd->add_option("--metrics", o->metrics,
                  "Prometheus endpoint host:port, or 'off' (agent.metrics_listen)");
  cmd->add_option("--decision-log", o->decisionLog, "JSON-lines decision log (agent.decision_log)");
  cmd->add_option("--osm-events", o->osmEvents,
                  "Unix datagram socket to bind for OpenSM's events (the ebb_osm_events plugin; "
                  "agent.osm_events): a trap about a switch re-reads its ports at once");
  cmd->add_option("--run-for-ms", o->runForMs, "stop after this long (agent.run_for_ms)")
      ->check(wholeNumber());
  cmd->add_option("--open-timeout-ms", o->openTimeoutMs,
                  "give up when the umad port does not open in this time (default 10000)");
  cmd->add_option("--sweep", o->sweeps,
                  "time N counter sweeps of the whole fabric (PortCountersExtended of every "
                  "port, agent.max_outstanding MADs in flight), print them and exit; no agent "
                  "runs, no Set is sent")
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--list-devices", o->listDevices,
                "list the local RDMA devices and ports libibverbs sees (state, LID, link layer) "
                "and the umad port ebb would pick, then exit; no --config needed");
  cmd->add_flag("--check-config", o->checkConfig,
                "check the config, the overrides and the topology as at start (fields, "
                "allow-list against the topology) and print what would run, then exit 0, or 1 "
                "naming the field; opens no port, takes no lock");
  cmd->callback([o, &action] {
    if (o->listDevices) {
      action = [](std::ostream& out, std::ostream& err) { return listDevices(out, err); };
      return;
    }
    if (o->configPath.empty()) throw CLI::RequiredError("--config");
    if (o->checkConfig) {
      action = [o](std::ostream& out, std::ostream& err) { return checkConfig(*o, out, err); };
      return;
    }
    action = [o](std::ostream& out, std::ostream& err) { return runAgent(*o, out, err); };
  });
}

}  // namespace ebb::tools
