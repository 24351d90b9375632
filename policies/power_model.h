#pragma once

#include <span>

#include "policies/lpi_link.h"

namespace ebb::policies {

// Where one link direction's time went, gating and low-power idle together:
// while gated on, the LPI states (all kHold/kActive without LPI); otherwise the
// gating transitions and off.
struct DirectionTimes {
  LpiTimes lpi{};
  TimePs turningOn = 0;   // powered (full), unusable
  TimePs turningOff = 0;  // powered (full), unusable
  TimePs off = 0;         // unpowered

  TimePs total() const;
  DirectionTimes& operator+=(const DirectionTimes& o);
};

// Average power relative to P_ACT (MECHANISMS.md §3):
// P = sum(P_ACT t_ACT + P_DS t_DS + P_FW t_FW) / sum(t). Hold, sleep
// signalling, refresh, waking and gating transitions count at full power; off
// counts as zero.
class PowerModel {
 public:
  PowerModel(double powerDeepSleep = 0.1, double powerFastWake = 0.6)
      : pDs_(powerDeepSleep), pFw_(powerFastWake) {}

  // Energy in units of P_ACT x picoseconds.
  double energy(const DirectionTimes& t) const;
  // Relative power of a set of link directions (1 = always on and active).
  double relativePower(std::span<const DirectionTimes> links) const;
  double saving(std::span<const DirectionTimes> links) const { return 1.0 - relativePower(links); }

 private:
  double pDs_;
  double pFw_;
};

}  // namespace ebb::policies
