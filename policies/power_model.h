#pragma once

#include <array>
#include <span>

#include "policies/gated_link.h"
#include "policies/lpi_link.h"
#include "policies/lpi_params.h"

namespace ebb::policies {

// Where one link direction's time went, gating and low-power idle together:
// while gated on, the LPI states (all kHold/kActive without LPI); otherwise the
// gating transitions and off.
struct DirectionTimes {
  LpiTimes lpi{};
  TimePs turningOn = 0;   // powered (full), unusable
  TimePs turningOff = 0;  // powered (full), unusable
  TimePs off = 0;         // unpowered

  // Gating alone: the time on (usable, full power) is credited as active.
  static DirectionTimes gatingOnly(const GatingTimes& g);
  // LPI alone: the link is never gated.
  static DirectionTimes lpiOnly(const LpiTimes& l);
  // Both: LPI runs while the direction is gated on (its times cover the on
  // time), gating supplies the transitions and the time off.
  static DirectionTimes combined(const GatingTimes& g, const LpiTimes& l);

  TimePs total() const;
  DirectionTimes& operator+=(const DirectionTimes& o);
  DirectionTimes& operator-=(const DirectionTimes& o);  // the times since `o`
};

// Energy of one link direction per state, in units of P_ACT x picoseconds.
struct EnergyBreakdown {
  std::array<double, kLpiStates> lpi{};
  double turningOn = 0;
  double turningOff = 0;
  double total() const;
};

// Average power relative to P_ACT (docs/mechanisms.md §5):
// P = sum(P_ACT t_ACT + P_DS t_DS + P_FW t_FW) / sum(t), saving = 1 - P / P_ACT.
// Quiet counts at P_DS, fast-wake at P_FW; active, hold, sleep signalling,
// refresh, waking and the gating transitions at full power; off at zero.
class PowerModel {
 public:
  PowerModel(double powerDeepSleep = 0.1, double powerFastWake = 0.6)
      : pDs_(powerDeepSleep), pFw_(powerFastWake) {}
  explicit PowerModel(const LpiParams& p) : PowerModel(p.powerDeepSleep, p.powerFastWake) {}

  // Power of a state relative to P_ACT.
  double power(LpiState s) const;
  double power(LinkPowerState s) const { return isPowered(s) ? 1.0 : 0.0; }

  EnergyBreakdown breakdown(const DirectionTimes& t) const;
  // Energy in units of P_ACT x picoseconds.
  double energy(const DirectionTimes& t) const;
  // Average power of one direction over its time (1 = always powered; 1 when no time).
  double averagePower(const DirectionTimes& t) const;
  // Relative power of a set of link directions: total energy over total time
  // (1 = always on at full power).
  double relativePower(std::span<const DirectionTimes> links) const;
  double saving(std::span<const DirectionTimes> links) const { return 1.0 - relativePower(links); }

 private:
  double pDs_;
  double pFw_;
};

}  // namespace ebb::policies
