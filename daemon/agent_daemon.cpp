#include "daemon/agent_daemon.h"

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>

#include "common/plural.h"
#include "daemon/counter_sweep.h"
#include "daemon/instance_lock.h"
#include "daemon/preload_noise_filter.h"
#include "daemon/umad_port.h"
#include "ib_backend/in_band_guard.h"

namespace ebb::daemon {

AgentDaemon::AgentDaemon(DaemonSettings settings, const fabric::Topology& topo, std::ostream& out,
                         std::ostream& err)
    : s_(std::move(settings)),
      topo_(topo),
      out_(out),
      err_(err),
      managed_(s_.managed.begin(), s_.managed.end()),
      gatingAction_(ib::gatingActionName(s_.backend.action)),
      sched_(io_) {}

AgentDaemon::~AgentDaemon() = default;

int AgentDaemon::run() {
  std::signal(SIGPIPE, SIG_IGN);
  // One agent per fabric, before the port is opened; the counter sweep sets
  // nothing and may run next to an agent.
  if (s_.sweeps == 0 && (!takeLock() || !readState())) return 1;
  openPort();
  // Until run() returns: libumad2sim's flood once ibsim is gone, summed up.
  const auto noise = PreloadNoiseFilter::installIfUnderIbsim();
  if (!readFabric()) return 1;
  if (s_.sweeps == 0 && !adoptState()) return 1;
  printStartupLine();
  if (s_.sweeps > 0) {
    const int rc =
        runCounterSweeps(*backend_, io_, topo_, s_.sweeps, s_.transport.maxOutstanding, out_, err_);
    mad_->close();
    return rc;
  }
  if (!s_.decisionLog.empty()) {
    if (Status st = log_.open(s_.decisionLog); !st.isOk()) {
      err_ << "ebb agent: " << st.toString() << "\n";
      return 1;
    }
  }
  for (const ib::TopologyDifference& d : backend_->topologySurvey().differences)
    log_.topologyMismatch(sched_.now(), d);
  checkSubnetManagerAtStart();
  startAgents();
  // SIGTERM restores from here on; the lines that follow (metrics, OpenSM
  // events) tell a supervisor the daemon is up and stoppable.
  signals_ = std::make_unique<boost::asio::signal_set>(io_, SIGINT, SIGTERM);
  signals_->async_wait([this](const boost::system::error_code& ec, int sig) {
    if (!ec) shutdown(sig == SIGTERM ? "SIGTERM" : "SIGINT");
  });
  if (Status st = startMetrics(); !st.isOk()) {
    err_ << "ebb agent: " << st.toString() << "\n";
    return 1;
  }
  if (Status st = startOsmEvents(); !st.isOk()) {
    err_ << "ebb agent: " << st.toString() << "\n";
    return 1;
  }
  if (s_.runForPs > 0) {
    sched_.after(s_.runForPs, agent::Phase::kControl, [this] { shutdown("run_for_ms elapsed"); });
  }
  io_.run();
  if (!stopping_) {
    // Only a signal, run_for_ms or a failure ends a daemon: an event loop
    // with nothing left to do means the agents stopped scheduling. Fail
    // loudly (a service manager restarts on failure) after putting back
    // what this run gated.
    err_ << "ebb agent: internal error: no agent is running any more; stopping\n";
    io_.restart();
    shutdown("no agent running");
    if (!io_.stopped()) io_.run();
    exitCode_ = 1;
  }
  mad_->close();
  printSummary();
  return exitCode_;
}

bool AgentDaemon::takeLock() {
  const std::string path = lockFileFor(s_.port, s_.lockFile);
  auto lock = InstanceLock::acquire(path);
  if (!lock) {
    err_ << "ebb agent: cannot start: " << lock.status().toString() << "\n";
    return false;
  }
  lock_ = std::make_unique<InstanceLock>(std::move(*lock));
  out_ << "ebb agent: holding " << path << " (one agent per fabric)\n" << std::flush;
  return true;
}

void AgentDaemon::openPort() {
  std::string note;
  auto opened = openUmadPort(sched_, s_, note);
  if (!note.empty()) out_ << "ebb agent: " << note << "\n" << std::flush;
  if (!opened) {
    err_ << "ebb agent: " << opened.status().toString() << "\n";
    std::fflush(nullptr);
    std::_Exit(1);  // the open thread may still be blocked inside libumad2sim
  }
  mad_ = std::move(*opened);
}

bool AgentDaemon::readFabric() {
  ib::IbBackendOptions opts = s_.backend;
  // The agents may start before a subnet manager gave the switches LIDs:
  // they turn nothing off until a master SM answers, and the LIDs are read
  // again then. The counter sweep needs them now.
  opts.allowMissingLids = s_.sweeps == 0;
  backend_ = std::make_unique<ib::IbBackend>(topo_, *mad_, sched_, std::move(opts));
  bool initDone = false;
  Status initStatus;
  backend_->initialize([&](Status st) {
    initStatus = std::move(st);
    initDone = true;
  });
  while (!initDone && io_.run_one()) {
  }
  // The event loop ran dry before discovery answered: a completion was lost.
  // Never go on with a half-read fabric (and a stopped loop, which would make
  // the daemon exit 0 at once, doing nothing).
  if (!initDone) {
    err_ << "ebb agent: cannot start: discovery of the fabric ended without completing (an "
            "internal error: a reply's completion was lost); nothing was changed\n";
    return false;
  }
  // The last reply can leave the loop with no work (replies come from a
  // receiving thread, which is no work to Asio): it then counts as stopped,
  // and every later run() would return at once until restarted.
  if (io_.stopped()) io_.restart();
  if (!initStatus.isOk()) {
    err_ << "ebb agent: cannot start: " << initStatus.toString() << "\n";
    return false;
  }
  reportTopologySurvey();
  Result<fabric::MinimalTree> mt = fabric::MinimalTree::build(topo_);
  if (!mt) {
    err_ << "ebb agent: " << mt.status().toString() << "\n";
    return false;
  }
  tree_ = std::make_unique<fabric::MinimalTree>(std::move(*mt));
  return true;
}

// Under topology_mismatch WARN (REFUSE stopped in initialize): every
// difference on stderr, then what ebb could not check either way.
void AgentDaemon::reportTopologySurvey() {
  const ib::TopologySurvey& t = backend_->topologySurvey();
  if (!t.matches()) {
    err_ << fmt::format(
                "ebb agent: warning: the fabric's cables differ from the topology in {} "
                "(topology_mismatch WARN: those links are left alone, read as off):\n{}\n",
                counted(t.differences.size(), "place", "places"), t.listing("  "))
         << std::flush;
  }
  if (!t.unverified.empty()) {
    std::string lines;
    for (const std::string& u : t.unverified)
      lines += "  " + u + "\n";
    err_ << fmt::format(
                "ebb agent: note: {} links could not be checked against the fabric (left alone, "
                "read as off):\n{}",
                t.unverified.size(), lines)
         << std::flush;
  }
}

void AgentDaemon::printStartupLine() {
  const fabric::LinkStates initial = backend_->linkStates();
  std::size_t reachable = 0, linksDown = 0;
  for (std::size_t i = 0; i < topo_.numSwitches(); ++i) {
    reachable += backend_->reachable(fabric::SwitchId(static_cast<std::uint32_t>(i))) ? 1u : 0u;
  }
  for (std::size_t l = 0; l < topo_.numLinks(); ++l) {
    linksDown += initial.isFullyOn(fabric::LinkId(static_cast<std::uint32_t>(l))) ? 0u : 1u;
  }
  const char* mode = s_.readOnly         ? "read-only (no switch is allow-listed: decides and "
                                           "logs, never sets)"
                     : s_.backend.dryRun ? "dry run (decides and logs, never sets)"
                                         : "active";
  out_ << fmt::format(
      "ebb agent: {} switches ({} reachable), {} links ({} down); {} switches watched; policy "
      "{}; check period {} ms; mode: {}; gating action: {}\n",
      topo_.numSwitches(), reachable, topo_.numLinks(), linksDown, s_.managed.size(), s_.policyName,
      s_.agent.checkPeriodPs / kPsPerMs, mode,
      s_.backend.action == ib::GatingAction::kReduceWidth
          ? fmt::format("reduce width (LinkWidthEnabled; {} links found reduced)",
                        backend_->narrowedLinks().size())
          : std::string("disable port (PortPhysicalState)"));
}

void AgentDaemon::startAgents() {
  backend_->setSetObserver([this](const ib::PortSetEvent& e) { onPortSet(e); });
  backend_->setReenableObserver([this](const ib::ReenableEvent& e) { onReenable(e); });
  host_ = std::make_unique<agent::AgentHost>(
      topo_, *tree_, s_.agent, *backend_, sched_, backend_->linkStates(),
      [this](const agent::DecisionRecord& d) { onDecision(d); });
  host_->setFailSafeHook(
      [this](fabric::SwitchId sw, const std::string& why) { onFailSafe(sw, why); });
  host_->setRecoveryHook([this](const agent::AgentHost::Recovery& r) { onRehome(r); });
  host_->setResumeHook([this](fabric::SwitchId sw, std::uint32_t failSafes) {
    ++counters_.agentsResumed;
    err_ << fmt::format(
                "ebb agent: {} resumes gating after {} fail-safe(s): it reads its ports again "
                "and moves to what the measured load needs\n",
                topo_.sw(sw).name, failSafes)
         << std::flush;
  });
  ib::attachGuard(*backend_, host_->guard(), s_.resilience);
  // No turn-off without a master SM, nor before pending re-enables went out.
  host_->guard().setTurnOffGate([this] { return turnOffGate(); });
  watchSubnetManager();
  scheduleReprobe(reprobeBasePs());
  takeInFailedAtStart();
  if (Status c = host_->guard().checkAll(); !c.isOk()) {
    err_ << "ebb agent: warning: the fabric as read is not fully connected (" << c.message()
         << "); ebb will not turn anything off that makes it worse\n";
  }
  host_->start(s_.managed);
}

// Links down at start that ebb did not disable (a host powered off, a failed
// cable) are failed parts, as if they had gone down a moment after: the
// guard's proofs then ask only for the pairs the surviving cables connect (a
// host that is off blocks no turn-off), the tree is re-homed around them, and
// when one comes back (a trap, a re-probe) it is taken in as repaired.
void AgentDaemon::takeInFailedAtStart() {
  std::vector<std::string> names;
  for (fabric::LinkId l : backend_->failedLinks()) {
    const fabric::Link& L = topo_.link(l);
    if (!L.lowerIsHost) host_->onPortDown(L.lower);
    host_->onPortDown(L.upper);
    names.push_back(topo_.describeLink(l));
  }
  if (names.empty()) return;
  out_ << fmt::format("ebb agent: {} link(s) down at start, taken as failed: {}\n", names.size(),
                      fmt::join(names, ", "))
       << std::flush;
}

Status AgentDaemon::startMetrics() {
  if (s_.metricsListen.empty()) return Status::ok();
  auto m = MetricsServer::start(io_, s_.metricsListen,
                                [this] { return renderPrometheus(metricsNow()); });
  if (!m) return m.status();
  metrics_ = std::move(*m);
  // The port bound, not the one asked for (0: any free one).
  const std::string host = s_.metricsListen.substr(0, s_.metricsListen.rfind(':'));
  out_ << fmt::format("ebb agent: metrics on http://{}:{}/metrics (port {})\n", host,
                      metrics_->port(), metrics_->port())
       << std::flush;
  return Status::ok();
}

Status AgentDaemon::startOsmEvents() {
  if (s_.osmEvents.empty()) return Status::ok();
  auto l =
      OsmEventListener::start(io_, s_.osmEvents, [this](const OsmEvent& ev) { onOsmEvent(ev); });
  if (!l) return l.status();
  osmEvents_ = std::move(*l);
  out_ << fmt::format("ebb agent: OpenSM events on {}\n", s_.osmEvents) << std::flush;
  return Status::ok();
}

void AgentDaemon::onDecision(const agent::DecisionRecord& d) {
  ++counters_.decisions[{d.source, d.turnOn, !d.refused.empty(), gatingAction_}];
  // A refused decision repeats every period while its cause lasts: log it
  // once, until the switch decides something else for that port. A flap
  // hold's refusals (its start, then "held on for N ms more") count as one:
  // the end of the hold is said apart (reportFlapHoldsEnded).
  std::string& last = lastRefusal_[{d.port.sw.value(), d.port.index}];
  const auto isFlap = [](const std::string& r) { return r.rfind("flap damping:", 0) == 0; };
  const bool holdGoesOn = isFlap(d.refused) && isFlap(last) &&
                          d.refused.find(" went off ") == std::string::npos;  // not a new hold
  if (!d.refused.empty() && (d.refused == last || holdGoesOn)) return;
  last = d.refused;
  log_.decision(d, topo_.sw(d.port.sw).name, gatingAction_);
  out_ << fmt::format("{:.3f}s {} {} {}{}\n", toSeconds(d.time), topo_.describePort(d.port),
                      d.turnOn ? "on" : "off", d.source, d.refused.empty() ? "" : ": " + d.refused)
       << std::flush;
}

// What ebb did to the fabric, beside what it decided: one line per Set.
void AgentDaemon::onPortSet(const ib::PortSetEvent& e) {
  log_.portSet(sched_.now(), e, topo_.sw(e.port.sw).name);
  const std::string text =
      e.isWidth() ? fmt::format("LinkWidthEnabled {} (was {})", ib::linkWidthName(e.widthEnabled),
                                ib::linkWidthName(e.widthBefore))
                  : std::string(ib::physStateName(e.phys));
  out_ << fmt::format("{:.3f}s {} set {}\n", toSeconds(sched_.now()), topo_.describePort(e.port),
                      text)
       << std::flush;
}

void AgentDaemon::onFailSafe(fabric::SwitchId sw, const std::string& why) {
  ++counters_.agentsFailedSafe;
  // Not "re-enabled": each link counts so only once its Set is acknowledged
  // (a port_set line; one not delivered is said and retried, onReenable).
  err_ << fmt::format(
              "ebb agent: {} failed safe (stops gating, re-enabling what it disabled): {}\n",
              topo_.sw(sw).name, why)
       << std::flush;
}

// A trap naming a switch ebb manages re-reads its ports at once; in width
// mode a heavy sweep re-reads the switches holding reduced ends (OpenSM may
// have reset their width).
std::vector<fabric::SwitchId> AgentDaemon::rereadTargets(const OsmEvent& ev) const {
  std::vector<fabric::SwitchId> targets;
  if (ev.event == "trap" && ev.lid != 0) {
    if (auto sw = backend_->switchByLid(ev.lid); sw && managed_.count(*sw)) targets.push_back(*sw);
  } else if (ev.event == "heavy_sweep_done" &&
             s_.backend.action == ib::GatingAction::kReduceWidth) {
    std::set<fabric::SwitchId> holding;
    for (const auto& [l, n] : backend_->narrowedLinks()) {
      for (const auto& e : n.ends) {
        if (managed_.count(e.end.sw)) holding.insert(e.end.sw);
      }
    }
    targets.assign(holding.begin(), holding.end());
  }
  return targets;
}

void AgentDaemon::onOsmEvent(const OsmEvent& ev) {
  ++counters_.osmEvents[{ev.event, ev.trap >= 0 ? ev.trap : -1}];
  const std::vector<fabric::SwitchId> targets = rereadTargets(ev);
  const std::string cause = ev.trap >= 0 ? fmt::format("trap {}", ev.trap) : ev.event;
  std::vector<std::string> names;
  for (fabric::SwitchId sw : targets)
    names.push_back(topo_.sw(sw).name);
  log_.osmEvent(sched_.now(), ev, names);
  for (fabric::SwitchId sw : targets)
    reread(sw, cause, ev.timeNs, ev.event == "trap");
}

void AgentDaemon::reread(fabric::SwitchId sw, const std::string& cause, std::int64_t reportedNs,
                         bool retryIfUnchanged) {
  ++counters_.osmRereads;
  backend_->rereadPorts(sw, [this, sw, cause, reportedNs,
                             retryIfUnchanged](Result<std::vector<ib::PortChange>> r) {
    onReread(sw, cause, reportedNs, r);
    // A trap can reach ebb before the port it reports has finished
    // training (the far end's trap, or a fast OpenSM): a re-read that
    // finds nothing new looks once more, one link-poll period later.
    if (r && r->empty() && retryIfUnchanged && !stopping_) {
      sched_.after(s_.backend.linkPollPs, agent::Phase::kControl, [this, sw, cause, reportedNs] {
        if (!stopping_) reread(sw, cause, reportedNs, false);
      });
    }
  });
}

void AgentDaemon::onReread(fabric::SwitchId sw, const std::string& cause, std::int64_t reportedNs,
                           const Result<std::vector<ib::PortChange>>& r) {
  const std::string& name = topo_.sw(sw).name;
  const auto nowNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  const double latencyMs = reportedNs > 0 ? static_cast<double>(nowNs - reportedNs) * 1e-6 : -1.0;
  if (!r) {
    ++counters_.osmRereadsFailed;
    err_ << fmt::format("ebb agent: re-reading {} on OpenSM {}: {}\n", name, cause,
                        r.status().toString())
         << std::flush;
    return;
  }
  std::string text;
  for (const ib::PortChange& c : *r)
    text += fmt::format(" [{}] {};", c.port.ibPortNumber(), c.what);
  log_.portReread(sched_.now(), sw, name, cause, latencyMs, *r);
  out_ << fmt::format("{:.3f}s {} re-read on OpenSM {} ({:.1f} ms after OpenSM reported it):{}\n",
                      toSeconds(sched_.now()), name, cause, latencyMs,
                      text.empty() ? " no change" : text)
       << std::flush;
}

void AgentDaemon::shutdown(const std::string& why) {
  if (stopping_) return;
  stopping_ = true;
  out_ << "ebb agent: stopping (" << why << ")\n" << std::flush;
  host_->stopAll();
  if (metrics_) metrics_->stop();
  if (osmEvents_) osmEvents_->stop();
  const std::size_t n = backend_->gatedLinks().size();
  if (s_.keepStateOnExit || n == 0) {
    if (n > 0) {
      out_ << fmt::format(
          "ebb agent: keeping {} links {} (keep_state_on_exit)\n", n,
          s_.backend.action == ib::GatingAction::kReduceWidth ? "at reduced width" : "disabled");
    }
    io_.stop();
    return;
  }
  restoreGated();
}

// Re-enables (or widens) every link this run gated; each Set is logged as a
// decision with source "restore".
void AgentDaemon::restoreGated() {
  const std::size_t n = backend_->gatedLinks().size();
  const bool width = s_.backend.action == ib::GatingAction::kReduceWidth;
  out_ << (width ? fmt::format("ebb agent: restoring the width of the {} links it reduced\n", n)
                 : fmt::format("ebb agent: re-enabling the {} links it disabled\n", n))
       << std::flush;
  // What it restored, counted as it goes: a Disabled Set still in flight at
  // the signal lands during the restore and is undone too.
  auto restored = std::make_shared<std::set<fabric::LinkId>>();
  auto logSet = [this, restored](fabric::LinkId link, fabric::PortId end) {
    restored->insert(link);
    agent::DecisionRecord d;
    d.time = sched_.now();
    d.port = end;
    d.up = topo_.sw(end.sw).ports.at(end.index).role == fabric::PortRole::kUp;
    d.turnOn = true;
    d.source = "restore";
    onDecision(d);
  };
  backend_->restoreAll(
      [this, restored, width](Status st) {
        if (st.isOk()) {
          const std::size_t done = restored->size();
          out_ << (width
                       ? fmt::format(
                             "ebb agent: restored the width of the {} links it had reduced\n", done)
                       : fmt::format("ebb agent: re-enabled the {} links it had disabled\n", done));
        } else {
          err_ << "ebb agent: could not re-enable every link: " << st.toString() << "\n";
          exitCode_ = 1;
        }
        io_.stop();
      },
      logSet);
}

void AgentDaemon::printSummary() {
  out_ << fmt::format(
              "ebb agent: {} MADs sent, {} failed; {} port Sets; {} agents failed safe{}{}\n",
              mad_->stats().sent, mad_->stats().failed, backend_->stats().setsSent,
              counters_.agentsFailedSafe,
              counters_.agentsResumed > 0 ? fmt::format(" ({} resumed)", counters_.agentsResumed)
                                          : std::string(),
              osmEvents_ ? fmt::format("; {} OpenSM events ({} malformed), {} re-reads",
                                       osmEvents_->received(), osmEvents_->malformed(),
                                       counters_.osmRereads)
                         : std::string())
       << std::flush;
}

DaemonMetrics AgentDaemon::metricsNow() {
  DaemonMetrics m = counters_;
  if (osmEvents_) m.osmEventsMalformed = osmEvents_->malformed();
  addLinkGauges(m);
  m.gatingAction = ib::gatingActionName(backend_->gatingAction());
  m.linksReducedWidth = backend_->narrowedLinks().size();
  const ib::TransportStats& t = mad_->stats();
  m.madsSent = t.sent;
  m.madsFailed = t.failed;
  m.madsTimeouts = t.timeouts;
  m.madsMalformed = t.malformed;
  m.madsOutstanding = t.outstanding;
  m.madsQueued = t.queued;
  const ib::IbBackendStats& b = backend_->stats();
  m.portSets = b.setsSent;
  m.portSetsSuppressed = b.setsSuppressed;
  m.periodSeconds = toSeconds(b.lastSweepPs);
  m.agents = host_->agents().size();
  m.smpReroutes = b.reroutes;
  m.countersHeld = b.countersHeld;
  m.widthSetsReduce = b.widthReduced;
  m.widthSetsRestore = b.widthRestored;
  m.osmPortChanges = b.portChanges;
  m.flapHolds = host_->guard().flapHolds();
  m.subnetManagerMaster = sm_ && sm_->master;
  m.reenablesPending = backend_->pendingReenables().size();
  m.switchesOutOfReach = backend_->switchesCutOff().size();
  m.reprobes = b.reprobes;
  m.linksHeldOn = host_->guard().linksHeldOn(sched_.now());
  return m;
}

// Switch-to-switch links on and off by level, and their estimated power: a
// link at reduced width counts its lanes still on over its lanes before
// (SerDes power goes with lanes; the port logic stays on).
void AgentDaemon::addLinkGauges(DaemonMetrics& m) const {
  const fabric::LinkStates ls = backend_->linkStates();
  const auto& narrowed = backend_->narrowedLinks();
  int all = 0;
  double power = 0;  // in links at full width
  for (std::size_t l = 0; l < topo_.numLinks(); ++l) {
    const fabric::Link& L = topo_.links()[l];
    if (L.lowerIsHost) continue;
    const bool up = ls.isFullyOn(fabric::LinkId(static_cast<std::uint32_t>(l)));
    LinkCount& count = m.linksByLevel[topo_.sw(L.upper.sw).level];
    (up ? count.on : count.off) += 1;
    ++all;
    if (up) {
      power += 1.0;
    } else if (auto it = narrowed.find(static_cast<std::uint32_t>(l)); it != narrowed.end()) {
      const auto& e0 = it->second.ends.front();
      const int before = ib::widestLanes(e0.restoreTo);
      power += before > 0 ? static_cast<double>(ib::widestLanes(e0.widthEnabled)) / before : 1.0;
    }
  }
  m.linkPowerRelative = all == 0 ? 1.0 : power / static_cast<double>(all);
}

}  // namespace ebb::daemon
