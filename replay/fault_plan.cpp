#include "replay/fault_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "common/units.h"

namespace ebb::replay {

namespace {

Status checkShare(const std::string& field, double v) {
  if (!std::isfinite(v) || v < 0 || v > 1) {
    return invalidArgument(fmt::format("{}: must be in [0, 1] (is {})", field, v));
  }
  return Status::ok();
}

Result<FaultEventDef> eventFromConfig(const config::FaultEventSpec& e, const std::string& where,
                                      TimePs cyclePs) {
  FaultEventDef d;
  d.where = where;
  Result<TimePs> at = cyclesToPs(where + ".at_cycles", e.at_cycles(), cyclePs);
  if (!at) return at.status();
  d.at = *at;
  switch (e.action()) {
    case config::FaultEventSpec::REPAIR:
      d.action = FaultAction::kRepair;
      break;
    case config::FaultEventSpec::RESTART_AGENT:
      d.action = FaultAction::kRestartAgent;
      break;
    default:
      d.action = FaultAction::kFail;
      break;
  }
  switch (e.scope()) {
    case config::FaultEventSpec::UP_DIRECTION:
      d.scope = FaultScope::kUpDirection;
      break;
    case config::FaultEventSpec::DOWN_DIRECTION:
      d.scope = FaultScope::kDownDirection;
      break;
    case config::FaultEventSpec::SWITCH:
      d.scope = FaultScope::kSwitch;
      break;
    default:
      d.scope = FaultScope::kLink;
      break;
  }
  FaultTargetDef& t = d.target;
  t.switchName = e.switch_name();
  if (t.switchName.empty()) {
    // A left-out field must not silently name switch 0 of level 0 (a root).
    if (!e.has_level() || !e.has_index()) {
      return invalidArgument(
          fmt::format("{}: no switch named: give switch_name, or level and index (missing {})",
                      where, !e.has_level() ? "level" : "index"));
    }
    if (e.level() < 0)
      return invalidArgument(fmt::format("{}.level: must be >= 0 (is {})", where, e.level()));
    t.level = e.level();
    t.index = e.index();
  } else if (e.has_level() || e.has_index()) {
    return invalidArgument(
        fmt::format("{}: name the switch by switch_name or by level and index, not both", where));
  }
  if (e.has_port() && (e.port() == 0 || e.port() > 0xFFFF))
    return invalidArgument(fmt::format("{}.port: must be 1..65535 (is {})", where, e.port()));
  t.port = static_cast<std::uint16_t>(e.port());
  t.minimalTreeUp = e.minimal_tree_up();
  const bool switchOnly = d.scope == FaultScope::kSwitch || d.action == FaultAction::kRestartAgent;
  if (switchOnly && (t.port != 0 || t.minimalTreeUp)) {
    return invalidArgument(
        fmt::format("{}: a {} names a switch, not a port", where,
                    d.action == FaultAction::kRestartAgent ? "RESTART_AGENT" : "SWITCH fault"));
  }
  if (!switchOnly && t.port == 0 && !t.minimalTreeUp) {
    return invalidArgument(
        fmt::format("{}: a link fault needs port (1-based) or minimal_tree_up", where));
  }
  if (t.port != 0 && t.minimalTreeUp) {
    return invalidArgument(
        fmt::format("{}: port and minimal_tree_up name the link twice; give one", where));
  }
  return d;
}

}  // namespace

Result<FaultsDef> faultsFromConfig(const config::FaultsSpec& spec, TimePs cyclePs,
                                   std::uint64_t seed) {
  FaultsDef f;
  for (int i = 0; i < spec.event_size(); ++i) {
    Result<FaultEventDef> e =
        eventFromConfig(spec.event(i), fmt::format("faults.event[{}]", i), cyclePs);
    if (!e) return e.status();
    f.events.push_back(std::move(*e));
  }
  std::stable_sort(f.events.begin(), f.events.end(),
                   [](const FaultEventDef& a, const FaultEventDef& b) { return a.at < b.at; });
  // A PHY's loss-of-signal debounce; 0 is allowed (detected at once).
  constexpr std::int64_t kDefaultDetectionCycles = 1'000;
  Result<TimePs> detection = cyclesToPs(
      "faults.detection_cycles",
      spec.has_detection_cycles() ? spec.detection_cycles() : kDefaultDetectionCycles, cyclePs);
  if (!detection) return detection.status();
  f.detectionPs = *detection;
  constexpr std::int64_t kDefaultRetransmitCycles = 100'000;
  if (spec.has_retransmit_timeout_cycles() && spec.retransmit_timeout_cycles() <= 0) {
    return invalidArgument(fmt::format("faults.retransmit_timeout_cycles: must be > 0 (is {})",
                                       spec.retransmit_timeout_cycles()));
  }
  Result<TimePs> retransmit =
      cyclesToPs("faults.retransmit_timeout_cycles",
                 spec.has_retransmit_timeout_cycles() ? spec.retransmit_timeout_cycles()
                                                      : kDefaultRetransmitCycles,
                 cyclePs);
  if (!retransmit) return retransmit.status();
  f.retransmitTimeoutPs = *retransmit;
  Result<TimePs> slack =
      cyclesToPs("faults.recovery_slack_cycles", spec.recovery_slack_cycles(), cyclePs);
  if (!slack) return slack.status();
  f.recoverySlackPs = *slack;
  if (spec.has_random()) {
    const config::RandomFaultsSpec& r = spec.random();
    RandomFaultsDef& d = f.random;
    // Infinite is no mean gap: "never fail" is leaving random out.
    if (!(std::isfinite(r.mtbf_us()) && r.mtbf_us() > 0)) {
      return invalidArgument(
          fmt::format("faults.random.mtbf_us: must be a finite number > 0 (is {})", r.mtbf_us()));
    }
    Result<TimePs> mtbf = usToPs("faults.random.mtbf_us", r.mtbf_us());
    if (!mtbf) return mtbf.status();
    Result<TimePs> repair = usToPs("faults.random.repair_us", r.repair_us());
    if (!repair) return repair.status();
    d.mtbfPs = std::max<TimePs>(1, *mtbf);
    d.repairPs = *repair;
    for (auto [field, v] : {std::pair{"faults.random.mt_share", r.mt_share()},
                            std::pair{"faults.random.switch_share", r.switch_share()},
                            std::pair{"faults.random.direction_share", r.direction_share()}}) {
      if (Status s = checkShare(field, v); !s.isOk()) return s;
    }
    d.mtShare = r.has_mt_share() ? r.mt_share() : 0.5;
    d.switchShare = r.switch_share();
    d.directionShare = r.direction_share();
    Result<TimePs> start = cyclesToPs("faults.random.start_cycles", r.start_cycles(), cyclePs);
    if (!start) return start.status();
    Result<TimePs> end = cyclesToPs("faults.random.end_cycles", r.end_cycles(), cyclePs);
    if (!end) return end.status();
    if (*end != 0 && *end <= *start) {
      return invalidArgument(
          fmt::format("faults.random.end_cycles: must be after start_cycles ({} <= {})",
                      r.end_cycles(), r.start_cycles()));
    }
    d.startPs = *start;
    d.endPs = *end;
    if (r.has_max_failed() && r.max_failed() == 0)
      return invalidArgument("faults.random.max_failed: must be > 0 (is 0)");
    d.maxFailed = r.has_max_failed() ? r.max_failed() : 1;
    d.seed = r.has_seed() ? r.seed() : seed;
    if (r.has_max_arrivals() && r.max_arrivals() == 0)
      return invalidArgument("faults.random.max_arrivals: must be > 0 (is 0)");
    if (r.has_max_arrivals()) d.maxArrivals = r.max_arrivals();
  }
  return f;
}

Status setRecoveryBound(FaultsDef& f, TimePs turnOnPs, TimePs checkPeriodPs) {
  constexpr TimePs kMaxBoundPs = kEndOfTime / 4;
  TimePs bound = 0;
  for (TimePs part : {f.detectionPs, turnOnPs, checkPeriodPs, f.recoverySlackPs})
    bound = saturatingAdd(bound, part);
  if (bound > kMaxBoundPs) {
    return invalidArgument(fmt::format(
        "faults.detection_cycles, gating.turn_on_cycles, gating.check_period_cycles, "
        "faults.recovery_slack_cycles: the recovery bound (detection {:g} us + T_on {:g} us + "
        "check period {:g} us + slack {:g} us) is beyond the time range: at most {:g} us (about "
        "26 days)",
        toMicroseconds(f.detectionPs), toMicroseconds(turnOnPs), toMicroseconds(checkPeriodPs),
        toMicroseconds(f.recoverySlackPs), toMicroseconds(kMaxBoundPs)));
  }
  f.recoveryBoundPs = bound;
  return Status::ok();
}

}  // namespace ebb::replay
