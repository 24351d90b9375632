#include "daemon/agent_daemon.h"

#include <fmt/format.h>

#include <boost/asio/signal_set.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "agent/agent_host.h"
#include "daemon/counter_sweep.h"
#include "daemon/metrics_server.h"
#include "daemon/osm_event_intake.h"
#include "fabric/minimal_tree.h"
#include "ib_backend/asio_scheduler.h"
#include "ib_backend/verbs_devices.h"

namespace ebb::daemon {
namespace {

constexpr TimePs kMs = 1'000'000'000;

Status invalid(std::string m) {
  return {ErrorCode::kInvalidArgument, std::move(m)};
}

Result<std::uint64_t> parseGuid(const std::string& field, const std::string& text) {
  std::size_t used = 0;
  std::uint64_t v = 0;
  try {
    v = std::stoull(text, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size()) {
    return invalid(
        fmt::format("{}: '{}' is not a GUID (write it as 0x0002c90000000000)", field, text));
  }
  return v;
}

Status nonNegative(const char* field, std::int64_t v) {
  return v < 0 ? invalid(fmt::format("agent.{}: must be >= 0 (is {})", field, v)) : Status::ok();
}

}  // namespace

Result<DaemonSettings> buildDaemonSettings(const config::Config& cfg, const std::string& baseDir,
                                           const fabric::Topology& topo) {
  DaemonSettings s;
  const config::AgentDaemonSpec& a = cfg.agent();
  for (auto [field, v] :
       {std::pair{"check_period_ms", a.check_period_ms()},
        std::pair{"rate_window_ms", a.rate_window_ms()},
        std::pair{"min_dwell_ms", a.min_dwell_ms()},
        std::pair{"mad_timeout_ms", a.mad_timeout_ms()},
        std::pair{"link_poll_ms", a.link_poll_ms()}, std::pair{"run_for_ms", a.run_for_ms()},
        std::pair{"restore_timeout_ms", a.restore_timeout_ms()},
        std::pair{"lost_contact_ms", a.lost_contact_ms()},
        std::pair{"max_off_per_window", std::int64_t{a.max_off_per_window()}},
        std::pair{"mad_retries", std::int64_t{a.mad_retries()}},
        std::pair{"max_outstanding", std::int64_t{a.max_outstanding()}},
        std::pair{"ca_port", std::int64_t{a.ca_port()}}}) {
    if (Status st = nonNegative(field, v); !st.isOk()) return st;
  }
  s.port.caName = a.ca();
  s.port.port = a.ca_port();
  s.transport.timeoutPs = (a.mad_timeout_ms() == 0 ? 200 : a.mad_timeout_ms()) * kMs;
  s.transport.retries = a.mad_retries() == 0 ? 2 : a.mad_retries();
  s.transport.maxOutstanding = a.max_outstanding() == 0 ? 16 : a.max_outstanding();
  if (Status st = s.transport.validate(); !st.isOk()) return invalid("agent." + st.message());

  if (cfg.lpi().mode() != config::LpiSpec::MODE_UNSPECIFIED &&
      cfg.lpi().mode() != config::LpiSpec::OFF) {
    return invalid(
        "lpi.mode: InfiniBand has no low-power idle; `ebb agent` gates whole links only (LPI is "
        "an emulator feature)");
  }
  // Gating: the same policies and thresholds as in the emulator.
  const auto& g = cfg.gating();
  const double uOn = g.u_on() == 0 ? 0.15 : g.u_on();
  switch (g.policy()) {
    case config::GatingSpec::STATIC:
      s.agent.thresholds = policies::Thresholds::makeStatic(g.u_off(), uOn);
      s.policyName = fmt::format("static [{}, {}]", g.u_off(), uOn);
      break;
    case config::GatingSpec::ALL_ON:
      s.agent.gating = false;
      s.policyName = "observe only (gating.policy ALL_ON)";
      break;
    default:
      s.agent.thresholds = policies::Thresholds::makeDynamic(uOn);
      s.policyName = fmt::format("dynamic [U_on={}]", uOn);
      break;
  }
  s.agent.checkPeriodPs = (a.check_period_ms() == 0 ? 1000 : a.check_period_ms()) * kMs;
  s.agent.rateLimits.maxOffPerWindow = a.max_off_per_window();
  s.agent.rateLimits.windowPs =
      a.rate_window_ms() == 0 ? s.agent.checkPeriodPs : a.rate_window_ms() * kMs;
  s.agent.rateLimits.minDwellPs = a.min_dwell_ms() * kMs;
  if (Status st = s.agent.validate(); !st.isOk()) return invalid(st.message());

  s.backend.dryRun = a.dry_run();
  s.backend.action = a.gating_action() == config::AgentDaemonSpec::REDUCE_WIDTH
                         ? ib::GatingAction::kReduceWidth
                         : ib::GatingAction::kDisablePort;
  s.backend.linkPollPs = (a.link_poll_ms() == 0 ? 100 : a.link_poll_ms()) * kMs;
  if (a.restore_timeout_ms() > 0) s.backend.restoreTimeoutPs = a.restore_timeout_ms() * kMs;
  if (a.lost_contact_ms() > 0) s.backend.lostContactPs = a.lost_contact_ms() * kMs;
  if (!a.m_key().empty()) {
    auto k = parseGuid("agent.m_key", a.m_key());
    if (!k) return k.status();
    s.backend.mKey = *k;
  }
  for (int i = 0; i < a.allow_switches_size(); ++i) {
    const std::string field = fmt::format("agent.allow_switches[{}]", i);
    auto guid = parseGuid(field, a.allow_switches(i));
    if (!guid) return guid.status();
    const auto sw = topo.findSwitchByGuid(*guid);
    if (!sw) {
      return invalid(fmt::format("{}: 0x{:016x} is not a switch of the topology", field, *guid));
    }
    if (!s.backend.allowGuids.insert(*guid).second) continue;
    s.managed.push_back(*sw);
  }
  std::sort(s.managed.begin(), s.managed.end());
  if (s.managed.empty()) {
    // Read-only: every switch's agent decides and logs; nothing is ever Set.
    s.readOnly = true;
    s.backend.dryRun = true;
    for (std::uint32_t i = 0; i < topo.numSwitches(); ++i)
      s.managed.emplace_back(i);
  }
  s.keepStateOnExit = a.keep_state_on_exit();
  s.metricsListen = a.metrics_listen().empty() ? "127.0.0.1:9464" : a.metrics_listen();
  if (s.metricsListen == "off") s.metricsListen.clear();
  if (!a.decision_log().empty()) {
    const std::filesystem::path p(a.decision_log());
    s.decisionLog = p.is_absolute() ? p.string() : (std::filesystem::path(baseDir) / p).string();
  }
  if (!a.osm_events().empty()) {
    const std::filesystem::path p(a.osm_events());
    s.osmEvents = p.is_absolute() ? p.string() : (std::filesystem::path(baseDir) / p).string();
  }
  s.runForPs = a.run_for_ms() * kMs;
  return s;
}

namespace {

// What the daemon counts for its metrics and its summary.
struct DaemonCounters {
  std::map<std::string, std::uint64_t> decisions;  // by "source,action,refused"
  std::uint64_t failSafe = 0;
  std::map<std::string, std::uint64_t> osmEvents;  // by "event,trap" labels
  std::uint64_t osmMalformed = 0;
  std::uint64_t osmRereads = 0;       // switches re-read on an OpenSM event
  std::uint64_t osmRereadFailed = 0;  // re-reads that failed
};

std::string renderMetrics(const fabric::Topology& topo, const ib::IbBackend& backend,
                          const ib::MadTransport& mad, const agent::AgentHost& host,
                          const DaemonCounters& c) {
  std::string m;
  const fabric::LinkStates ls = backend.linkStates();
  const auto& narrowed = backend.narrowedLinks();
  std::map<int, std::pair<int, int>> byLevel;  // upper-switch level -> on, off
  int all = 0;
  double power = 0;  // in links at full width
  for (std::size_t l = 0; l < topo.numLinks(); ++l) {
    const fabric::Link& L = topo.links()[l];
    if (L.lowerIsHost) continue;
    const bool up = ls.isFullyOn(fabric::LinkId(static_cast<std::uint32_t>(l)));
    auto& e = byLevel[topo.sw(L.upper.sw).level];
    (up ? e.first : e.second) += 1;
    ++all;
    if (up) {
      power += 1.0;
    } else if (auto it = narrowed.find(static_cast<std::uint32_t>(l)); it != narrowed.end()) {
      // Reduced width: the lanes still on, as a share of the lanes before
      // (SerDes power goes with lanes; the port logic stays on).
      const auto& e0 = it->second.ends.front();
      const int before = ib::widestLanes(e0.restoreTo);
      power += before > 0 ? static_cast<double>(ib::widestLanes(e0.widthEnabled)) / before : 1.0;
    }
  }
  m += "# HELP ebb_links Switch-to-switch links by the level of their upper switch and state.\n"
       "# TYPE ebb_links gauge\n";
  for (const auto& [level, n] : byLevel) {
    m += fmt::format("ebb_links{{level=\"{}\",state=\"on\"}} {}\n", level, n.first);
    m += fmt::format("ebb_links{{level=\"{}\",state=\"off\"}} {}\n", level, n.second);
  }
  m += "# HELP ebb_link_power_relative Estimated switch-link power relative to all links on.\n"
       "# TYPE ebb_link_power_relative gauge\n";
  m += fmt::format("ebb_link_power_relative {:.6f}\n",
                   all == 0 ? 1.0 : power / static_cast<double>(all));
  m += fmt::format(
      "# HELP ebb_gating_action How links are gated (disable_port or reduce_width).\n"
      "# TYPE ebb_gating_action gauge\nebb_gating_action{{action=\"{}\"}} 1\n"
      "# HELP ebb_links_reduced_width Switch links at reduced width (LinkWidthEnabled).\n"
      "# TYPE ebb_links_reduced_width gauge\nebb_links_reduced_width {}\n",
      ib::gatingActionName(backend.gatingAction()), narrowed.size());
  m += "# HELP ebb_decisions_total Gating decisions by source, action and outcome.\n"
       "# TYPE ebb_decisions_total counter\n";
  for (const auto& [key, n] : c.decisions)
    m += fmt::format("ebb_decisions_total{{{}}} {}\n", key, n);
  const ib::TransportStats& t = mad.stats();
  m += fmt::format(
      "# TYPE ebb_mads_sent_total counter\nebb_mads_sent_total {}\n"
      "# TYPE ebb_mads_failed_total counter\nebb_mads_failed_total {}\n"
      "# TYPE ebb_mads_timeouts_total counter\nebb_mads_timeouts_total {}\n"
      "# TYPE ebb_mads_malformed_total counter\nebb_mads_malformed_total {}\n"
      "# TYPE ebb_mads_outstanding gauge\nebb_mads_outstanding {}\n"
      "# TYPE ebb_mads_queued gauge\nebb_mads_queued {}\n",
      t.sent, t.failed, t.timeouts, t.malformed, t.outstanding, t.queued);
  const ib::IbBackendStats& b = backend.stats();
  m += fmt::format(
      "# TYPE ebb_port_sets_total counter\nebb_port_sets_total {}\n"
      "# HELP ebb_port_sets_suppressed_total Sets a dry run decided but did not send.\n"
      "# TYPE ebb_port_sets_suppressed_total counter\nebb_port_sets_suppressed_total {}\n"
      "# HELP ebb_period_seconds Time of the last counter read of one switch.\n"
      "# TYPE ebb_period_seconds gauge\nebb_period_seconds {:.6f}\n"
      "# TYPE ebb_agents gauge\nebb_agents {}\n"
      "# TYPE ebb_agents_failed_safe gauge\nebb_agents_failed_safe {}\n"
      "# HELP ebb_smp_reroutes_total SMPs sent again on a new directed route after a timeout.\n"
      "# TYPE ebb_smp_reroutes_total counter\nebb_smp_reroutes_total {}\n"
      "# HELP ebb_counters_held_total Counter reads with no LID route while the switch answered "
      "by directed route (its agent holds).\n"
      "# TYPE ebb_counters_held_total counter\nebb_counters_held_total {}\n"
      "# HELP ebb_width_sets_total LinkWidthEnabled Sets by what they did.\n"
      "# TYPE ebb_width_sets_total counter\nebb_width_sets_total{{action=\"reduce\"}} {}\n"
      "ebb_width_sets_total{{action=\"restore\"}} {}\n",
      b.setsSent, b.setsSuppressed, static_cast<double>(b.lastSweepPs) * 1e-12,
      host.agents().size(), c.failSafe, b.reroutes, b.countersHeld, b.widthReduced,
      b.widthRestored);
  if (!c.osmEvents.empty() || c.osmRereads > 0 || c.osmMalformed > 0) {
    m += "# HELP ebb_osm_events_total Events from OpenSM's ebb_osm_events plugin.\n"
         "# TYPE ebb_osm_events_total counter\n";
    for (const auto& [key, n] : c.osmEvents)
      m += fmt::format("ebb_osm_events_total{{{}}} {}\n", key, n);
    m += fmt::format(
        "# HELP ebb_osm_event_rereads_total Switches whose ports were re-read at once on an "
        "OpenSM event.\n"
        "# TYPE ebb_osm_event_rereads_total counter\nebb_osm_event_rereads_total {}\n"
        "# TYPE ebb_osm_event_rereads_failed_total counter\nebb_osm_event_rereads_failed_total {}\n"
        "# HELP ebb_osm_event_port_changes_total Port changes those re-reads found.\n"
        "# TYPE ebb_osm_event_port_changes_total counter\nebb_osm_event_port_changes_total {}\n"
        "# TYPE ebb_osm_events_malformed_total counter\nebb_osm_events_malformed_total {}\n",
        c.osmRereads, c.osmRereadFailed, b.portChanges, c.osmMalformed);
  }
  return m;
}

// Without agent.ca: the first active InfiniBand port libibverbs sees (real
// hardware); with no verbs device (ibsim) libibumad picks its first CA.
// Returns the sentence for the startup log.
std::string pickPort(ib::UmadPortSpec& port) {
  auto devices = ib::listVerbsDevices();
  if (!devices) return devices.status().message() + "; libibumad picks the CA";
  if (devices->empty()) {
    return "libibverbs sees no RDMA device (no hardware, or ibsim: it simulates umad only); "
           "libibumad picks the CA";
  }
  if (const auto pick = ib::pickDefaultPort(*devices)) {
    port.caName = pick->ca;
    if (port.port == 0) port.port = pick->port;
    return fmt::format(
        "libibverbs: {} port {} is the first active InfiniBand port: ebb talks through it",
        pick->ca, port.port);
  }
  return fmt::format(
      "libibverbs sees {} RDMA devices but no active InfiniBand port; libibumad picks the CA "
      "(set agent.ca)",
      devices->size());
}

// Opens the umad port on a helper thread: under ibsim the preload library
// retries forever while no simulator listens (already when libibverbs looks
// at sysfs), and a daemon must not hang. `note` gets the port choice.
Result<std::unique_ptr<ib::UmadTransport>> openPort(ib::AsioScheduler& sched,
                                                    const DaemonSettings& s, std::string& note) {
  using Opened = std::pair<Result<std::unique_ptr<ib::UmadTransport>>, std::string>;
  auto task = std::make_shared<std::packaged_task<Opened()>>([&sched, s] {
    ib::UmadPortSpec port = s.port;
    std::string why;
    if (port.caName.empty()) why = pickPort(port);
    return Opened(ib::UmadTransport::open(sched, port, s.transport), why);
  });
  auto fut = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (fut.wait_for(std::chrono::nanoseconds(s.openTimeoutPs / 1000)) != std::future_status::ready) {
    return Status(ErrorCode::kUnavailable,
                  fmt::format("opening the umad port took more than {} s: no HCA answers (under "
                              "ibsim: is ibsim running with this IBSIM_SOCKNAME?)",
                              s.openTimeoutPs / (1000 * kMs)));
  }
  Opened o = fut.get();
  note = std::move(o.second);
  return std::move(o.first);
}

}  // namespace

int runAgentDaemon(const DaemonSettings& s, const fabric::Topology& topo, std::ostream& out,
                   std::ostream& err) {
  std::signal(SIGPIPE, SIG_IGN);
  boost::asio::io_context io;
  ib::AsioScheduler sched(io);
  std::string portNote;
  auto opened = openPort(sched, s, portNote);
  if (!portNote.empty()) out << "ebb agent: " << portNote << "\n" << std::flush;
  if (!opened) {
    err << "ebb agent: " << opened.status().toString() << "\n";
    std::fflush(nullptr);
    std::_Exit(1);  // the open thread may still be blocked inside libumad2sim
  }
  std::unique_ptr<ib::UmadTransport> mad = std::move(*opened);
  ib::IbBackend backend(topo, *mad, sched, s.backend);

  bool initDone = false;
  Status initStatus;
  backend.initialize([&](Status st) {
    initStatus = std::move(st);
    initDone = true;
  });
  while (!initDone && io.run_one()) {
  }
  if (!initStatus.isOk()) {
    err << "ebb agent: cannot start: " << initStatus.toString() << "\n";
    return 1;
  }
  Result<fabric::MinimalTree> mtr = fabric::MinimalTree::build(topo);
  if (!mtr) {
    err << "ebb agent: " << mtr.status().toString() << "\n";
    return 1;
  }
  const fabric::MinimalTree& mt = *mtr;
  const fabric::LinkStates initial = backend.linkStates();
  std::size_t reachable = 0, linksDown = 0;
  for (std::size_t i = 0; i < topo.numSwitches(); ++i) {
    reachable += backend.reachable(fabric::SwitchId(static_cast<std::uint32_t>(i))) ? 1u : 0u;
  }
  for (std::size_t l = 0; l < topo.numLinks(); ++l) {
    linksDown += initial.isFullyOn(fabric::LinkId(static_cast<std::uint32_t>(l))) ? 0u : 1u;
  }
  const char* mode = s.readOnly         ? "read-only (no switch is allow-listed: decides and "
                                          "logs, never sets)"
                     : s.backend.dryRun ? "dry run (decides and logs, never sets)"
                                        : "active";
  out << fmt::format(
      "ebb agent: {} switches ({} reachable), {} links ({} down); {} switches watched; policy "
      "{}; check period {} ms; mode: {}; gating action: {}\n",
      topo.numSwitches(), reachable, topo.numLinks(), linksDown, s.managed.size(), s.policyName,
      s.agent.checkPeriodPs / kMs, mode,
      s.backend.action == ib::GatingAction::kReduceWidth
          ? fmt::format("reduce width (LinkWidthEnabled; {} links found reduced)",
                        backend.narrowedLinks().size())
          : std::string("disable port (PortPhysicalState)"));
  if (s.sweeps > 0) {
    const int rc =
        runCounterSweeps(backend, io, topo, s.sweeps, s.transport.maxOutstanding, out, err);
    mad->close();
    return rc;
  }

  std::ofstream log;
  if (!s.decisionLog.empty()) {
    log.open(s.decisionLog, std::ios::app);
    if (!log) {
      err << "ebb agent: E_IO: cannot write the decision log " << s.decisionLog << "\n";
      return 1;
    }
  }
  DaemonCounters counters;
  const char* gatingAction = ib::gatingActionName(s.backend.action);
  std::map<std::pair<std::uint32_t, std::uint16_t>, std::string> lastRefusal;
  auto sink = [&](const agent::DecisionRecord& d) {
    const std::string name = topo.sw(d.port.sw).name;
    const std::string key =
        fmt::format("source=\"{}\",action=\"{}\",refused=\"{}\",gating_action=\"{}\"", d.source,
                    d.turnOn ? "on" : "off", d.refused.empty() ? "no" : "yes", gatingAction);
    ++counters.decisions[key];
    // A refused decision repeats every period while its cause lasts: log it
    // once, until the switch decides something else for that port.
    std::string& last = lastRefusal[{d.port.sw.value(), d.port.index}];
    if (!d.refused.empty() && d.refused == last) return;
    last = d.refused;
    if (log.is_open()) {
      // The agent's record, plus how the decision is carried out.
      std::string line = agent::toJsonLine(d, name);
      if (!line.empty() && line.back() == '}') {
        line.pop_back();
        line += fmt::format(",\"gating_action\":\"{}\"}}", gatingAction);
      }
      log << line << "\n" << std::flush;
    }
    out << fmt::format("{:.3f}s {} {} {}{}\n", static_cast<double>(d.time) * 1e-12,
                       topo.describePort(d.port), d.turnOn ? "on" : "off", d.source,
                       d.refused.empty() ? "" : ": " + d.refused)
        << std::flush;
  };
  // What ebb did to the fabric, beside what it decided: one line per Set.
  backend.setSetObserver([&](const ib::PortSetEvent& e) {
    const fabric::PortId port = e.port;
    const std::string name = topo.sw(port.sw).name;
    std::string what, text;
    if (e.isWidth()) {
      const bool reduce = ib::widestLanes(e.widthEnabled) < ib::widestLanes(e.widthBefore);
      what = fmt::format(
          "\"action\":\"{}\",\"link_width_enabled\":{},\"link_width_enabled_before\":{},"
          "\"width\":\"{}\",\"width_before\":\"{}\"",
          reduce ? "reduce_width" : "restore_width", e.widthEnabled, e.widthBefore,
          ib::linkWidthName(e.widthEnabled), ib::linkWidthName(e.widthBefore));
      text = fmt::format("LinkWidthEnabled {} (was {})", ib::linkWidthName(e.widthEnabled),
                         ib::linkWidthName(e.widthBefore));
    } else {
      what = fmt::format("\"action\":\"{}\",\"phys_state\":\"{}\"",
                         e.phys == ib::PhysState::kDisabled ? "disable_port" : "enable_port",
                         ib::physStateName(e.phys));
      text = ib::physStateName(e.phys);
    }
    if (log.is_open()) {
      log << fmt::format(
                 "{{\"time_ps\":{},\"event\":\"port_set\",\"switch\":{},\"switch_name\":\"{}\","
                 "\"port\":{},{}}}\n",
                 sched.now(), port.sw.value(), agent::jsonEscape(name), port.ibPortNumber(), what)
          << std::flush;
    }
    out << fmt::format("{:.3f}s {} set {}\n", static_cast<double>(sched.now()) * 1e-12,
                       topo.describePort(port), text)
        << std::flush;
  });
  agent::AgentHost host(topo, mt, s.agent, backend, sched, initial, sink);
  host.setFailSafeHook([&](fabric::SwitchId sw, const std::string& why) {
    ++counters.failSafe;
    err << fmt::format(
               "ebb agent: {} failed safe (stops gating, re-enables what it disabled): {}\n",
               topo.sw(sw).name, why)
        << std::flush;
  });
  if (backend.attachSwitch()) host.guard().setManagementRoot(*backend.attachSwitch());
  if (Status c = host.guard().checkAll(); !c.isOk()) {
    err << "ebb agent: warning: the fabric as read is not fully connected (" << c.message()
        << "); ebb will not turn anything off that makes it worse\n";
  }
  host.start(s.managed);

  std::unique_ptr<OsmEventListener> osmEvents;
  std::unique_ptr<MetricsServer> metrics;
  if (!s.metricsListen.empty()) {
    auto m = MetricsServer::start(io, s.metricsListen, [&] {
      if (osmEvents) counters.osmMalformed = osmEvents->malformed();
      return renderMetrics(topo, backend, *mad, host, counters);
    });
    if (!m) {
      err << "ebb agent: " << m.status().toString() << "\n";
      return 1;
    }
    metrics = std::move(*m);
    out << fmt::format("ebb agent: metrics on http://{}/metrics (port {})\n", s.metricsListen,
                       metrics->port());
  }

  // OpenSM's events: a trap naming a switch ebb manages re-reads its ports at
  // once; in width mode a heavy sweep re-reads the switches holding reduced
  // ends (OpenSM may have reset their width).
  if (!s.osmEvents.empty()) {
    const std::set<fabric::SwitchId> managed(s.managed.begin(), s.managed.end());
    auto onEvent = [&, managed](const OsmEvent& ev) {
      ++counters.osmEvents[ev.trap >= 0 ? fmt::format("event=\"{}\",trap=\"{}\"", ev.event, ev.trap)
                                        : fmt::format("event=\"{}\"", ev.event)];
      std::vector<fabric::SwitchId> targets;
      if (ev.event == "trap" && ev.lid != 0) {
        if (auto sw = backend.switchByLid(ev.lid); sw && managed.count(*sw)) targets.push_back(*sw);
      } else if (ev.event == "heavy_sweep_done" &&
                 s.backend.action == ib::GatingAction::kReduceWidth) {
        std::set<fabric::SwitchId> holding;
        for (const auto& [l, n] : backend.narrowedLinks()) {
          for (const auto& e : n.ends) {
            if (managed.count(e.end.sw)) holding.insert(e.end.sw);
          }
        }
        targets.assign(holding.begin(), holding.end());
      }
      const std::string cause =
          ev.trap >= 0 ? fmt::format("trap {}", ev.trap) : std::string(ev.event);
      std::string names;
      for (fabric::SwitchId sw : targets)
        names +=
            fmt::format("{}\"{}\"", names.empty() ? "" : ",", agent::jsonEscape(topo.sw(sw).name));
      if (log.is_open()) {
        log << fmt::format(
                   "{{\"time_ps\":{},\"event\":\"osm_event\",\"osm_event\":\"{}\",\"trap\":{},"
                   "\"lid\":{},\"seq\":{},\"reread\":[{}]}}\n",
                   sched.now(), agent::jsonEscape(ev.event), ev.trap, ev.lid, ev.seq, names)
            << std::flush;
      }
      for (fabric::SwitchId sw : targets) {
        ++counters.osmRereads;
        const std::int64_t reportedNs = ev.timeNs;
        backend.rereadPorts(sw, [&, sw, cause, reportedNs](Result<std::vector<ib::PortChange>> r) {
          const std::string name = topo.sw(sw).name;
          const auto nowNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
          const double latencyMs =
              reportedNs > 0 ? static_cast<double>(nowNs - reportedNs) * 1e-6 : -1.0;
          if (!r) {
            ++counters.osmRereadFailed;
            err << fmt::format("ebb agent: re-reading {} on OpenSM {}: {}\n", name, cause,
                               r.status().toString())
                << std::flush;
            return;
          }
          std::string changes, text;
          for (const ib::PortChange& c : *r) {
            changes += fmt::format("{}{{\"port\":{},\"state\":\"{}\"}}", changes.empty() ? "" : ",",
                                   c.port.ibPortNumber(), agent::jsonEscape(c.what));
            text += fmt::format(" [{}] {};", c.port.ibPortNumber(), c.what);
          }
          if (log.is_open()) {
            log << fmt::format(
                       "{{\"time_ps\":{},\"event\":\"port_reread\",\"switch\":{},"
                       "\"switch_name\":\"{}\",\"cause\":\"{}\",\"since_reported_ms\":{:.3f},"
                       "\"changes\":[{}]}}\n",
                       sched.now(), sw.value(), agent::jsonEscape(name), cause, latencyMs, changes)
                << std::flush;
          }
          out << fmt::format(
                     "{:.3f}s {} re-read on OpenSM {} ({:.1f} ms after OpenSM reported it):{}\n",
                     static_cast<double>(sched.now()) * 1e-12, name, cause, latencyMs,
                     text.empty() ? " no change" : text)
              << std::flush;
        });
      }
    };
    auto l = OsmEventListener::start(io, s.osmEvents, onEvent);
    if (!l) {
      err << "ebb agent: " << l.status().toString() << "\n";
      return 1;
    }
    osmEvents = std::move(*l);
    out << fmt::format("ebb agent: OpenSM events on {}\n", s.osmEvents) << std::flush;
  }

  int exitCode = 0;
  bool stopping = false;
  auto shutdown = [&](const std::string& why) {
    if (stopping) return;
    stopping = true;
    out << "ebb agent: stopping (" << why << ")\n" << std::flush;
    host.stopAll();
    if (metrics) metrics->stop();
    if (osmEvents) osmEvents->stop();
    const char* gated =
        s.backend.action == ib::GatingAction::kReduceWidth ? "at reduced width" : "disabled";
    if (s.keepStateOnExit || backend.gatedLinks().empty()) {
      if (!backend.gatedLinks().empty()) {
        out << fmt::format("ebb agent: keeping {} links {} (keep_state_on_exit)\n",
                           backend.gatedLinks().size(), gated);
      }
      io.stop();
      return;
    }
    const std::size_t n = backend.gatedLinks().size();
    const bool width = s.backend.action == ib::GatingAction::kReduceWidth;
    out << (width ? fmt::format("ebb agent: restoring the width of the {} links it reduced\n", n)
                  : fmt::format("ebb agent: re-enabling the {} links it disabled\n", n))
        << std::flush;
    // Each Set is logged as a decision with source "restore".
    auto logSet = [&](fabric::LinkId, fabric::PortId end) {
      agent::DecisionRecord d;
      d.time = sched.now();
      d.port = end;
      d.up = topo.sw(end.sw).ports.at(end.index).role == fabric::PortRole::kUp;
      d.turnOn = true;
      d.source = "restore";
      sink(d);
    };
    backend.restoreAll(
        [&, n, width](Status st) {
          if (st.isOk()) {
            out << (width ? fmt::format("ebb agent: restored the width of the {} links it had "
                                        "reduced\n",
                                        n)
                          : fmt::format("ebb agent: re-enabled the {} links it had disabled\n", n));
          } else {
            err << "ebb agent: could not re-enable every link: " << st.toString() << "\n";
            exitCode = 1;
          }
          io.stop();
        },
        logSet);
  };
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (!ec) shutdown(sig == SIGTERM ? "SIGTERM" : "SIGINT");
  });
  if (s.runForPs > 0) {
    sched.after(s.runForPs, agent::Phase::kControl, [&] { shutdown("run_for_ms elapsed"); });
  }
  io.run();
  mad->close();
  out << fmt::format(
             "ebb agent: {} MADs sent, {} failed; {} port Sets; {} agents failed safe{}\n",
             mad->stats().sent, mad->stats().failed, backend.stats().setsSent, counters.failSafe,
             osmEvents
                 ? fmt::format("; {} OpenSM events ({} malformed), {} re-reads",
                               osmEvents->received(), osmEvents->malformed(), counters.osmRereads)
                 : std::string())
      << std::flush;
  return exitCode;
}

}  // namespace ebb::daemon
