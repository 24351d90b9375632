#include "daemon/daemon_settings.h"

#include <fmt/format.h>

#include "agent/gating_config.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

namespace ebb::daemon {
namespace {

Result<std::uint64_t> parseGuid(const std::string& field, const std::string& text) {
  std::size_t used = 0;
  std::uint64_t v = 0;
  try {
    v = std::stoull(text, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size()) {
    return invalidArgument(
        fmt::format("{}: '{}' is not a GUID (write it as 0x0002c90000000000)", field, text));
  }
  return v;
}

Status nonNegative(const char* field, std::int64_t v) {
  return v < 0 ? invalidArgument(fmt::format("agent.{}: must be >= 0 (is {})", field, v))
               : Status::ok();
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
  // Zero means unset: the option structs keep their defaults.
  if (a.mad_timeout_ms() != 0) s.transport.timeoutPs = milliseconds(a.mad_timeout_ms());
  if (a.mad_retries() != 0) s.transport.retries = a.mad_retries();
  if (a.max_outstanding() != 0) s.transport.maxOutstanding = a.max_outstanding();
  if (Status st = s.transport.validate(); !st.isOk())
    return invalidArgument("agent." + st.message());

  if (cfg.lpi().mode() != config::LpiSpec::MODE_UNSPECIFIED &&
      cfg.lpi().mode() != config::LpiSpec::OFF) {
    return invalidArgument(
        "lpi.mode: InfiniBand has no low-power idle; `ebb agent` gates whole links only (LPI is "
        "an emulator feature)");
  }
  // Gating: the same policies and thresholds as in the emulator.
  const auto& g = cfg.gating();
  const agent::GatingChoice gating = agent::gatingFromConfig(g);
  s.agent.gating = gating.gating;
  s.agent.thresholds = gating.thresholds;
  s.policyName = gating.gating ? gating.policyName : "observe only (gating.policy ALL_ON)";
  // A real fabric is sampled far less often than the emulator (AgentConfig's
  // default is 2000 cycles of 1 ns): PMA reads of every port take milliseconds.
  constexpr std::int64_t kDefaultCheckPeriodMs = 1000;
  s.agent.checkPeriodPs =
      milliseconds(a.check_period_ms() == 0 ? kDefaultCheckPeriodMs : a.check_period_ms());
  s.agent.rateLimits.maxOffPerWindow = a.max_off_per_window();
  s.agent.rateLimits.windowPs =
      a.rate_window_ms() == 0 ? s.agent.checkPeriodPs : a.rate_window_ms() * kPsPerMs;
  s.agent.rateLimits.minDwellPs = a.min_dwell_ms() * kPsPerMs;
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
  s.agent.rateLimits.flap.windowPs =
      milliseconds(a.has_flap_window_ms() ? a.flap_window_ms() : kFlapWindowMs);
  s.agent.rateLimits.flap.holdPs =
      milliseconds(a.has_flap_hold_ms() ? a.flap_hold_ms() : kFlapWindowMs);
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
  if (a.link_poll_ms() != 0) s.backend.linkPollPs = milliseconds(a.link_poll_ms());
  if (a.restore_timeout_ms() > 0) s.backend.restoreTimeoutPs = a.restore_timeout_ms() * kPsPerMs;
  if (a.lost_contact_ms() > 0) s.backend.lostContactPs = a.lost_contact_ms() * kPsPerMs;
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
  if (!a.decision_log().empty()) {
    const std::filesystem::path p(a.decision_log());
    s.decisionLog = p.is_absolute() ? p.string() : (std::filesystem::path(baseDir) / p).string();
  }
  if (!a.osm_events().empty()) {
    const std::filesystem::path p(a.osm_events());
    s.osmEvents = p.is_absolute() ? p.string() : (std::filesystem::path(baseDir) / p).string();
  }
  if (!a.lock_file().empty()) {
    const std::filesystem::path p(a.lock_file());
    s.lockFile = p.is_absolute() ? p.string() : (std::filesystem::path(baseDir) / p).string();
  }
  s.runForPs = a.run_for_ms() * kPsPerMs;
  return s;
}

}  // namespace ebb::daemon
