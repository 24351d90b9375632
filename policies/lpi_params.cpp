#include "policies/lpi_params.h"

#include <fmt/format.h>

namespace ebb::policies {

const char* toString(LpiMode m) {
  switch (m) {
    case LpiMode::kOff:
      return "off";
    case LpiMode::kDeepSleep:
      return "deep-sleep";
    case LpiMode::kFastWake:
      return "fast-wake";
    case LpiMode::kHybrid:
      return "hybrid";
  }
  return "?";
}

LpiParams LpiParams::table6(LpiMode mode, int holdMultiple) {
  LpiParams p;
  p.mode = mode;
  p.hold = p.sleepSignal * holdMultiple;
  p.hybridFastWake = p.hold;
  return p;
}

std::span<const LinkSpeedRow> linkSpeedTable() {
  // Table I of seed 004, microseconds converted to picoseconds.
  static constexpr LinkSpeedRow kRows[] = {
      {"25GBASE-R", 25, 14'250'000, 340'000, 480'000},
      {"40GBASE-R", 40, 5'500'000, 340'000, 300'000},
      {"100GBASE-R", 100, 5'500'000, 340'000, 120'000},
  };
  return kRows;
}

Status LpiParams::setLinkSpeed(const std::string& speed) {
  for (const LinkSpeedRow& r : linkSpeedTable()) {
    if (speed == r.name) {
      wakeDeepSleep = r.wakeDeepSleep;
      wakeFastWake = r.wakeFastWake;
      return Status::ok();
    }
  }
  return {ErrorCode::kInvalidArgument,
          fmt::format("'{}' is no link speed: expected 25GBASE-R, 40GBASE-R or 100GBASE-R (as "
                      "written, capitals included)",
                      speed)};
}

Status checkDelayBudgetNs(double ns, std::string_view field) {
  // Time counts in whole picoseconds: a budget under 1 ps would be 0.
  if (ns >= 0.001 && ns < 1e9) return Status::ok();
  return {ErrorCode::kInvalidArgument,
          fmt::format("{}: {} breaks the rule 0.001 <= budget < 1e9 ns (1 ps is the time unit)",
                      field, ns)};
}

Status LpiParams::validate() const {
  const auto bad = [](const char* field, const std::string& rule) {
    return Status(ErrorCode::kInvalidArgument, fmt::format("lpi.{}: {}", field, rule));
  };
  const std::pair<const char*, TimePs> times[] = {{"hold_ps", hold},
                                                  {"hybrid_fast_wake_ps", hybridFastWake},
                                                  {"sleep_signal_ps", sleepSignal},
                                                  {"wake_deep_sleep_ps", wakeDeepSleep},
                                                  {"wake_fast_wake_ps", wakeFastWake},
                                                  {"refresh_ps", refresh}};
  for (const auto& [field, t] : times) {
    if (t < 0) return bad(field, fmt::format("must be >= 0 (is {})", t));
  }
  if (quiet <= 0) return bad("quiet_ps", fmt::format("must be > 0 (is {})", quiet));
  if (!(powerDeepSleep >= 0 && powerDeepSleep <= 1)) {
    return bad("power_deep_sleep", fmt::format("must be in [0, 1] (is {})", powerDeepSleep));
  }
  if (!(powerFastWake >= 0 && powerFastWake <= 1)) {
    return bad("power_fast_wake", fmt::format("must be in [0, 1] (is {})", powerFastWake));
  }
  if (adaptive.enabled) {
    if (adaptive.delayBudget <= 0) {
      return bad("adaptive_hold.delay_budget",
                 fmt::format("must be > 0 (is {} ps)", adaptive.delayBudget));
    }
    if (!(adaptive.minHold >= 0 && adaptive.minHold <= hold && hold <= adaptive.maxHold)) {
      return bad("adaptive_hold",
                 fmt::format("needs 0 <= min_hold <= hold <= max_hold (are {} <= {} <= {} ps)",
                             adaptive.minHold, hold, adaptive.maxHold));
    }
  }
  return Status::ok();
}

}  // namespace ebb::policies
