#include "policies/thresholds.h"

#include <fmt/format.h>

namespace ebb::policies {

Status Thresholds::validate() const {
  const auto bad = [&](const std::string& rule) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("{} break the rule {}", describe(), rule));
  };
  if (!(uOn > 0.0 && uOn <= 1.0)) return bad("0 < U_on <= 1");
  if (kind == GatingKind::kStatic) {
    if (!(uOff > 0.0 && uOff <= 1.0)) return bad("0 < U_off <= 1");
    if (!(uOn > 2.0 * uOff)) return bad("U_on > 2*U_off");
  }
  if (kind == GatingKind::kProportional && !(hysteresis > 0.0 && hysteresis < 1.0)) {
    return bad("0 < h < 1");
  }
  if (!(waitOn >= 0.0 && waitOn < 1.0)) return bad("0 <= W_on < 1");
  return Status::ok();
}

double Thresholds::offThreshold(int linksOn, int k) const {
  if (kind == GatingKind::kStatic) return uOff;
  // Proportional: with i links on, one goes once the load fits i - 1 at h * U_on.
  if (kind == GatingKind::kProportional) {
    return linksOn > 1
               ? hysteresis * uOn * static_cast<double>(linksOn - 1) / static_cast<double>(linksOn)
               : 0.0;
  }
  return uOn * static_cast<double>(linksOn - 1) / static_cast<double>(k);
}

double Thresholds::effectiveOff(int linksOn, int k) const {
  return static_cast<double>(linksOn) / static_cast<double>(k) * offThreshold(linksOn, k);
}

double Thresholds::effectiveOn(int linksOn, int k) const {
  return static_cast<double>(linksOn) / static_cast<double>(k) * uOn;
}

std::string Thresholds::describe() const {
  if (kind == GatingKind::kStatic) {
    return fmt::format("static thresholds [U_off={}, U_on={}]", uOff, uOn);
  }
  if (kind == GatingKind::kProportional) {
    return fmt::format("proportional thresholds [U_on={}, h={}]", uOn, hysteresis);
  }
  return fmt::format("dynamic thresholds [U_on={}]", uOn);
}

}  // namespace ebb::policies
