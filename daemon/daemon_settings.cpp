#include "daemon/daemon_settings.h"

#include <fmt/format.h>

#include "agent/gating_config.h"
#include "common/guid.h"
#include "common/units.h"
#include "daemon/metrics_server.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <tuple>

namespace ebb::daemon {
namespace {

Result<std::uint64_t> parseGuidField(const std::string& field, const std::string& text) {
  const std::optional<std::uint64_t> v = parseGuid(text);
  if (!v) {
    return invalidArgument(
        fmt::format("{}: '{}' is not a GUID: 1 to 16 hexadecimal digits, with or without 0x "
                    "(write it as 0x0002c90000000000)",
                    field, text));
  }
  return *v;
}

// The longest wait before a failed-safe agent resumes (its backoff doubles
// it to at most 64 x, which must still fit in picoseconds).
constexpr std::int64_t kMaxResumeMs = 86'400'000;

// IB port numbers of a CA, as `ebb agent --port` takes them.
constexpr std::int32_t kMaxCaPort = 254;

// The folders the ebb-agent service has systemd make at each start
// (RuntimeDirectory=ebb, LogsDirectory=ebb, StateDirectory=ebb): they may
// not exist before it.
bool madeByTheService(const std::filesystem::path& folder) {
  return folder == "/run/ebb" || folder == "/var/log/ebb" || folder == "/var/lib/ebb";
}

// A file the agent opens or creates at `path`: refused now, before anything
// is opened, when it is a folder, its folder is a file, or its folder does
// not exist (ebb creates the file, never its folder; it would fail only once
// it had read the fabric), except the folders the service makes.
Status checkFilePath(const char* field, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return invalidArgument(
        fmt::format("agent.{}: {} is a folder, expected a file in a folder", field, path));
  }
  const fs::path parent = fs::path(path).parent_path();
  const fs::file_status st = fs::status(parent.empty() ? fs::path(".") : parent, ec);
  if (fs::exists(st) && !fs::is_directory(st)) {
    return invalidArgument(fmt::format("agent.{}: {} is not a folder, so {} cannot be made in it",
                                       field, parent.string(), path));
  }
  if (!fs::exists(st) && !madeByTheService(parent.lexically_normal())) {
    return invalidArgument(
        fmt::format("agent.{}: the folder {} does not exist, so {} cannot be made in it (ebb "
                    "creates the file, not its folder)",
                    field, parent.string(), path));
  }
  return Status::ok();
}

Status nonNegative(const char* field, std::int64_t v) {
  return v < 0 ? invalidArgument(fmt::format("agent.{}: must be >= 0 (is {})", field, v))
               : Status::ok();
}

// Two of the agent's files on one path would overwrite each other (the state
// file is renamed over its path; the lock file holds a pid).
Status checkDistinctFiles(const DaemonSettings& s) {
  namespace fs = std::filesystem;
  const std::pair<const char*, const std::string*> files[] = {{"decision_log", &s.decisionLog},
                                                              {"osm_events", &s.osmEvents},
                                                              {"lock_file", &s.lockFile},
                                                              {"state_file", &s.stateFile}};
  // Each file as a file, by any spelling: absolute or relative, through
  // `..` or a symbolic link, existing yet or not.
  std::error_code ec;
  const auto resolve = [&ec](const std::string& p) {
    fs::path abs = fs::absolute(p, ec);
    // A link to a file not made yet: weakly_canonical stops before it.
    for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(abs, ec)); ++hops) {
      const fs::path target = fs::read_symlink(abs, ec);
      if (ec) break;
      abs = target.is_absolute() ? target : abs.parent_path() / target;
    }
    const fs::path canon = fs::weakly_canonical(abs, ec);
    return (ec ? abs : canon).lexically_normal();
  };
  fs::path resolved[std::size(files)];
  for (std::size_t i = 0; i < std::size(files); ++i) {
    if (!files[i].second->empty()) resolved[i] = resolve(*files[i].second);
  }
  for (std::size_t i = 0; i < std::size(files); ++i) {
    for (std::size_t j = i + 1; j < std::size(files); ++j) {
      const std::string& a = *files[i].second;
      const std::string& b = *files[j].second;
      if (a.empty() || b.empty()) continue;
      if (resolved[i] == resolved[j] || fs::equivalent(a, b, ec)) {
        return invalidArgument(
            fmt::format("agent.{}: {} is also agent.{}; each needs a file of its own",
                        files[j].first, b, files[i].first));
      }
    }
  }
  return Status::ok();
}

}  // namespace

Result<DaemonSettings> buildDaemonSettings(const config::Config& cfg, const std::string& baseDir,
                                           const fabric::Topology& topo) {
  DaemonSettings s;
  const config::AgentDaemonSpec& a = cfg.agent();
  // Fields with presence: an explicit 0 is a value, checked like any other.
  for (auto [field, has, v, minimum] :
       {std::tuple{"check_period_ms", a.has_check_period_ms(), a.check_period_ms(), 1},
        std::tuple{"rate_window_ms", a.has_rate_window_ms(), a.rate_window_ms(), 1},
        std::tuple{"mad_timeout_ms", a.has_mad_timeout_ms(), a.mad_timeout_ms(), 1},
        std::tuple{"link_poll_ms", a.has_link_poll_ms(), a.link_poll_ms(), 1},
        std::tuple{"restore_timeout_ms", a.has_restore_timeout_ms(), a.restore_timeout_ms(), 1},
        std::tuple{"lost_contact_ms", a.has_lost_contact_ms(), a.lost_contact_ms(), 1},
        std::tuple{"mad_retries", a.has_mad_retries(), std::int64_t{a.mad_retries()}, 0},
        std::tuple{"max_outstanding", a.has_max_outstanding(), std::int64_t{a.max_outstanding()},
                   1}}) {
    if (has && v < minimum) {
      return invalidArgument(
          fmt::format("agent.{}: must be {} (is {})", field, minimum == 1 ? "> 0" : ">= 0", v));
    }
  }
  // Unset means no limit, so a written 0 (or less) is a mistake, not "unlimited".
  if (a.has_max_off_per_window() && a.max_off_per_window() <= 0) {
    return invalidArgument(
        fmt::format("agent.max_off_per_window: must be > 0 (is {}); leave it out for no limit",
                    a.max_off_per_window()));
  }
  for (auto [field, v] :
       {std::pair{"min_dwell_ms", a.min_dwell_ms()}, std::pair{"run_for_ms", a.run_for_ms()},
        std::pair{"resume_after_fail_safe_ms", a.resume_after_fail_safe_ms()},
        std::pair{"ca_port", std::int64_t{a.ca_port()}}}) {
    if (Status st = nonNegative(field, v); !st.isOk()) return st;
  }
  // Every millisecond setting in picoseconds, checked for range.
  const auto ms = [](const char* field, std::int64_t v) {
    return msToPs(fmt::format("agent.{}", field), v);
  };
  s.port.caName = a.ca();
  if (a.ca_port() > kMaxCaPort) {
    // As `--port`: IB port numbers of a CA are 1..254 (0: the first active).
    return invalidArgument(
        fmt::format("agent.ca_port: must be in 0..{} (is {})", kMaxCaPort, a.ca_port()));
  }
  s.port.port = a.ca_port();
  if (a.resume_after_fail_safe_ms() > kMaxResumeMs) {
    return invalidArgument(
        fmt::format("agent.resume_after_fail_safe_ms: must be <= {} (one day; is {})", kMaxResumeMs,
                    a.resume_after_fail_safe_ms()));
  }
  if (Result<TimePs> t = ms("resume_after_fail_safe_ms", a.resume_after_fail_safe_ms()); t) {
    s.agent.resumeAfterFailSafePs = *t;
  } else {
    return t.status();
  }
  if (a.has_mad_timeout_ms()) {
    Result<TimePs> t = ms("mad_timeout_ms", a.mad_timeout_ms());
    if (!t) return t.status();
    s.transport.timeoutPs = *t;
  }
  if (a.has_mad_retries()) s.transport.retries = a.mad_retries();
  if (a.has_max_outstanding()) s.transport.maxOutstanding = a.max_outstanding();
  if (Status st = s.transport.validate(); !st.isOk())
    return invalidArgument("agent." + st.message());

  // Sections only the emulator reads: refused, not ignored (a reader of the
  // config must not think they act on the real fabric).
  for (const auto& [section, present] :
       {std::pair{"emulator", cfg.has_emulator()}, std::pair{"workload", cfg.has_workload()},
        std::pair{"faults", cfg.has_faults()}, std::pair{"report", cfg.has_report()},
        std::pair{"oracle", cfg.has_oracle()}}) {
    if (present) {
      return invalidArgument(fmt::format(
          "{}: does not apply to `ebb agent`, which drives a real fabric (it is read by ebb "
          "replay, tune and faults); give the agent a config without it",
          section));
    }
  }
  if (cfg.lpi().mode() != config::LpiSpec::MODE_UNSPECIFIED &&
      cfg.lpi().mode() != config::LpiSpec::OFF) {
    return invalidArgument(
        "lpi.mode: InfiniBand has no low-power idle; `ebb agent` gates whole links only (LPI is "
        "an emulator feature)");
  }
  // Gating: the same policies and thresholds as in the emulator. Its timing
  // fields are the emulator's (in cycles); on a real fabric the agent's own
  // fields or the hardware set them: refused, not ignored.
  const auto& g = cfg.gating();
  for (const auto& [field, present, instead] :
       {std::tuple{"check_period_cycles", g.has_check_period_cycles(),
                   "the agent's period is agent.check_period_ms"},
        std::tuple{"turn_on_cycles", g.has_turn_on_cycles(),
                   "a real link takes as long as it trains; agent.link_poll_ms and "
                   "agent.restore_timeout_ms bound the wait"},
        std::tuple{"turn_off_cycles", g.has_turn_off_cycles(),
                   "a real link goes down when the Set is applied"},
        std::tuple{"control_latency_cycles", g.control_latency_cycles() != 0,
                   "real messages take the time they take"},
        std::tuple{"in_band", g.has_in_band(),
                   "the agent gates whole links in-band; its safety rule is agent.resilience"},
        std::tuple{"start", g.start() != config::GatingSpec::START_UNSPECIFIED,
                   "the agent starts from the links as it finds them"},
        std::tuple{"max_check_periods", g.has_max_check_periods(),
                   "the agent runs until stopped, or agent.run_for_ms"}}) {
    if (present) {
      return invalidArgument(
          fmt::format("gating.{}: applies to the emulator only (ebb replay, tune and faults); {}: "
                      "give the agent a config without it",
                      field, instead));
    }
  }
  if (Status st = agent::checkGatingFields(g); !st.isOk()) return st;
  const agent::GatingChoice gating = agent::gatingFromConfig(g);
  s.agent.gating = gating.gating;
  s.agent.thresholds = gating.thresholds;
  s.policyName = gating.gating ? gating.policyName : "observe only (gating.policy ALL_ON)";
  // A real fabric is sampled far less often than the emulator (AgentConfig's
  // default is 2000 cycles of 1 ns): PMA reads of every port take milliseconds.
  constexpr std::int64_t kDefaultCheckPeriodMs = 1000;
  Result<TimePs> period =
      ms("check_period_ms", a.has_check_period_ms() ? a.check_period_ms() : kDefaultCheckPeriodMs);
  if (!period) return period.status();
  s.agent.checkPeriodPs = *period;
  // RateLimits' 0 is "unlimited" (unset here).
  s.agent.rateLimits.maxOffPerWindow = a.has_max_off_per_window() ? a.max_off_per_window() : 0;
  Result<TimePs> window = ms("rate_window_ms", a.rate_window_ms());
  if (!window) return window.status();
  s.agent.rateLimits.windowPs = a.has_rate_window_ms() ? *window : s.agent.checkPeriodPs;
  Result<TimePs> dwell = ms("min_dwell_ms", a.min_dwell_ms());
  if (!dwell) return dwell.status();
  s.agent.rateLimits.minDwellPs = *dwell;
  // Anti-flap defaults: a link that goes off more than 3 times in 10 minutes
  // under a steady load sits on a threshold; every turn-off makes OpenSM
  // re-sweep, so it stays on for 10 minutes, then 20, 40, ...
  constexpr std::int64_t kFlapWindowMs = 600'000;
  if (a.has_flap_limit() && a.flap_limit() < 0) {
    return invalidArgument(fmt::format("agent.flap_limit: must be >= 0 (is {})", a.flap_limit()));
  }
  for (auto [field, has, v] :
       {std::tuple{"flap_window_ms", a.has_flap_window_ms(), a.flap_window_ms()},
        std::tuple{"flap_hold_ms", a.has_flap_hold_ms(), a.flap_hold_ms()}}) {
    if (has && v <= 0)
      return invalidArgument(fmt::format("agent.{}: must be > 0 (is {})", field, v));
  }
  s.agent.rateLimits.flap.limit = a.has_flap_limit() ? a.flap_limit() : 3;
  Result<TimePs> flapWindow =
      ms("flap_window_ms", a.has_flap_window_ms() ? a.flap_window_ms() : kFlapWindowMs);
  if (!flapWindow) return flapWindow.status();
  s.agent.rateLimits.flap.windowPs = *flapWindow;
  Result<TimePs> flapHold =
      ms("flap_hold_ms", a.has_flap_hold_ms() ? a.flap_hold_ms() : kFlapWindowMs);
  if (!flapHold) return flapHold.status();
  s.agent.rateLimits.flap.holdPs = *flapHold;
  if (Status st = s.agent.validate(); !st.isOk()) return invalidArgument(st.message());

  s.backend.dryRun = a.dry_run();
  s.backend.action = a.gating_action() == config::AgentDaemonSpec::REDUCE_WIDTH
                         ? ib::GatingAction::kReduceWidth
                         : ib::GatingAction::kDisablePort;
  s.backend.topologyMismatch = a.topology_mismatch() == config::AgentDaemonSpec::WARN
                                   ? ib::TopologyMismatch::kWarn
                                   : ib::TopologyMismatch::kRefuse;
  s.resilience =
      a.resilience() == config::NONE ? agent::Resilience::kNone : agent::Resilience::kSingleLink;
  for (auto [field, has, v, out] :
       {std::tuple{"link_poll_ms", a.has_link_poll_ms(), a.link_poll_ms(), &s.backend.linkPollPs},
        std::tuple{"restore_timeout_ms", a.has_restore_timeout_ms(), a.restore_timeout_ms(),
                   &s.backend.restoreTimeoutPs},
        std::tuple{"lost_contact_ms", a.has_lost_contact_ms(), a.lost_contact_ms(),
                   &s.backend.lostContactPs}}) {
    if (!has) continue;
    Result<TimePs> t = ms(field, v);
    if (!t) return t.status();
    *out = *t;
  }
  // The congestion trigger reads PortXmitWait: one more PMA read per port.
  s.backend.readXmitWait = s.agent.gating && s.agent.thresholds.waitOn > 0;
  if (a.has_xmit_wait_tick_ns()) {
    const double t = a.xmit_wait_tick_ns();
    // The agent counts in picoseconds: a tick below one would be rounded.
    if (!(t >= 0.001 && t <= 1e9)) {
      return invalidArgument(fmt::format(
          "agent.xmit_wait_tick_ns: {} breaks the rule 0.001 <= tick <= 1e9 ns (1 ps to 1 s)", t));
    }
    s.backend.xmitWaitTickPs = std::llround(t * 1000.0);
  }
  if (!a.m_key().empty()) {
    auto k = parseGuidField("agent.m_key", a.m_key());
    if (!k) return k.status();
    s.backend.mKey = *k;
  }
  for (int i = 0; i < a.allow_switches_size(); ++i) {
    const std::string field = fmt::format("agent.allow_switches[{}]", i);
    auto guid = parseGuidField(field, a.allow_switches(i));
    if (!guid) return guid.status();
    const auto sw = topo.findSwitchByGuid(*guid);
    if (!sw) {
      return invalidArgument(
          fmt::format("{}: 0x{:016x} is not a switch of the topology", field, *guid));
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
  if (!s.metricsListen.empty()) {
    if (Result<ListenAddress> l = parseListenAddress(s.metricsListen); !l) {
      return invalidArgument("agent.metrics_listen: " + l.status().message());
    }
  }
  for (auto [field, value, out] : {std::tuple{"decision_log", &a.decision_log(), &s.decisionLog},
                                   std::tuple{"osm_events", &a.osm_events(), &s.osmEvents},
                                   std::tuple{"lock_file", &a.lock_file(), &s.lockFile},
                                   std::tuple{"state_file", &a.state_file(), &s.stateFile}}) {
    if (value->empty()) continue;
    const std::filesystem::path p(*value);
    *out = p.is_absolute() ? p.string() : (std::filesystem::path(baseDir) / p).string();
    if (Status st = checkFilePath(field, *out); !st.isOk()) return st;
  }
  if (Status st = checkDistinctFiles(s); !st.isOk()) return st;
  Result<TimePs> runFor = ms("run_for_ms", a.run_for_ms());
  if (!runFor) return runFor.status();
  s.runForPs = *runFor;
  return s;
}

}  // namespace ebb::daemon
