#include "replay/lpi_from_config.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "common/time.h"
#include "replay/present_or.h"

namespace ebb::replay {

namespace {

// lpi.adaptive_hold: the budget in ns, the bounds in multiples of T_s.
Status adaptiveHoldFromConfig(const config::AdaptiveHoldSpec& a, policies::LpiParams& lp) {
  const double budget = a.delay_budget_ns();
  if (Status s = policies::checkDelayBudgetNs(budget, "lpi.adaptive_hold.delay_budget_ns");
      !s.isOk())
    return s;
  const double ts = static_cast<double>(lp.sleepSignal);
  const double holdTs = static_cast<double>(lp.hold) / ts;
  const double minTs = a.has_min_hold_ts() ? a.min_hold_ts() : 0.0;
  const double maxTs = a.has_max_hold_ts() ? a.max_hold_ts() : std::max(64.0, holdTs);
  for (auto [field, v] : {std::pair{"min_hold_ts", minTs}, std::pair{"max_hold_ts", maxTs}}) {
    if (!(v >= 0 && v * ts <= 9e18)) {
      return invalidArgument(fmt::format(
          "lpi.adaptive_hold.{}: must be >= 0 and within the time range (is {})", field, v));
    }
  }
  lp.adaptive.enabled = true;
  lp.adaptive.delayBudget = static_cast<TimePs>(budget * 1000.0);
  lp.adaptive.minHold = static_cast<TimePs>(minTs * ts);
  lp.adaptive.maxHold = static_cast<TimePs>(maxTs * ts);
  if (!(lp.adaptive.minHold <= lp.hold && lp.hold <= lp.adaptive.maxHold)) {
    return invalidArgument(fmt::format(
        "lpi.adaptive_hold: needs min_hold_ts <= lpi.hold_ts <= max_hold_ts (are {} <= {} <= {})",
        minTs, holdTs, maxTs));
  }
  return Status::ok();
}

}  // namespace

Status lpiFromConfig(const config::LpiSpec& l, policies::LpiParams& lp) {
  switch (l.mode()) {
    case config::LpiSpec::DEEP_SLEEP:
      lp.mode = policies::LpiMode::kDeepSleep;
      break;
    case config::LpiSpec::FAST_WAKE:
      lp.mode = policies::LpiMode::kFastWake;
      break;
    case config::LpiSpec::HYBRID:
      lp.mode = policies::LpiMode::kHybrid;
      break;
    default:
      lp.mode = policies::LpiMode::kOff;
      break;
  }
  if (!l.link_speed().empty()) {
    if (Status s = lp.setLinkSpeed(l.link_speed()); !s.isOk())
      return invalidArgument("lpi.link_speed: " + s.message());
  }
  // T_r may be 0 (the paper's deep sleep without refresh); T_s sets the
  // hold's unit and T_q the refresh cycle, so they are > 0.
  for (auto [field, has, v, out, least] :
       {std::tuple{"lpi.sleep_signal_ps", l.has_sleep_signal_ps(), l.sleep_signal_ps(),
                   &lp.sleepSignal, 1},
        std::tuple{"lpi.quiet_ps", l.has_quiet_ps(), l.quiet_ps(), &lp.quiet, 1},
        std::tuple{"lpi.refresh_ps", l.has_refresh_ps(), l.refresh_ps(), &lp.refresh, 0}}) {
    Result<std::int64_t> ps = presentOr(field, has, v, *out, least);
    if (!ps) return ps.status();
    *out = *ps;
  }
  if (l.hold_ts() < 0 || !std::isfinite(l.hold_ts())) {
    return invalidArgument(fmt::format("lpi.hold_ts: must be >= 0 (is {})", l.hold_ts()));
  }
  // A hold, timers or a speed with no low-power idle would be ignored
  // without a word.
  if (lp.mode == policies::LpiMode::kOff) {
    for (auto [field, given] :
         {std::pair{"hold_ts", l.hold_ts() != 0}, std::pair{"adaptive_hold", l.has_adaptive_hold()},
          std::pair{"link_speed", !l.link_speed().empty()},
          std::pair{"sleep_signal_ps", l.has_sleep_signal_ps()},
          std::pair{"quiet_ps", l.has_quiet_ps()}, std::pair{"refresh_ps", l.has_refresh_ps()}}) {
      if (!given) continue;
      return invalidArgument(fmt::format(
          "lpi.{}: applies with a low-power idle mode only (lpi.mode is {}); leave it out, or "
          "set lpi.mode to FAST_WAKE, DEEP_SLEEP or HYBRID",
          field, l.mode() == config::LpiSpec::OFF ? "OFF" : "left out: off"));
    }
  }
  const double holdPs = l.hold_ts() * static_cast<double>(lp.sleepSignal);
  if (holdPs > 9e18) {
    return invalidArgument(
        fmt::format("lpi.hold_ts: {} x T_s ({} ps) is beyond the time range of about 106 days",
                    l.hold_ts(), lp.sleepSignal));
  }
  lp.hold = static_cast<TimePs>(holdPs);
  lp.hybridFastWake = lp.hold;
  if (l.has_adaptive_hold()) {
    if (Status s = adaptiveHoldFromConfig(l.adaptive_hold(), lp); !s.isOk()) return s;
  }
  // A link's idle timeline adds these (hold, hybrid's fast-wake stay, the
  // sleep signal, quiet and refresh): each may fit the time range while the
  // sum does not, and a wrapped sum is nonsense power (found at 4.6e18 ps).
  if (lp.mode != policies::LpiMode::kOff) {
    const TimePs hold = std::max(lp.hold, lp.adaptive.enabled ? lp.adaptive.maxHold : TimePs{0});
    const TimePs fastWake = lp.mode == policies::LpiMode::kHybrid ? lp.hybridFastWake : 0;
    TimePs timeline = 0;
    for (TimePs part : {hold, fastWake, lp.sleepSignal, lp.quiet, lp.refresh})
      timeline = saturatingAdd(timeline, part);
    constexpr TimePs kMaxTimelinePs = kEndOfTime / 4;
    if (timeline > kMaxTimelinePs) {
      return invalidArgument(fmt::format(
          "lpi.hold_ts (or lpi.adaptive_hold.max_hold_ts), lpi.sleep_signal_ps, lpi.quiet_ps, "
          "lpi.refresh_ps: a link's idle timeline (hold {:.6g} us{}, T_s {:.6g} us, T_q {:.6g} us, "
          "T_r {:.6g} us) is beyond the "
          "time range: at most {:.6g} us in all (about 26 days)",
          toMicroseconds(hold),
          fastWake > 0 ? fmt::format(", then fast-wake {:.6g} us", toMicroseconds(fastWake)) : "",
          toMicroseconds(lp.sleepSignal), toMicroseconds(lp.quiet), toMicroseconds(lp.refresh),
          toMicroseconds(kMaxTimelinePs)));
    }
  }
  return Status::ok();
}

}  // namespace ebb::replay
