#pragma once

#include <string>

#include "common/status.h"

namespace ebb::policies {

enum class GatingKind { kStatic, kDynamic, kProportional };

// Thresholds of the on/off mechanism (Alonso et al. 2007, section 3), as
// utilizations of the ACTIVE up links (0..1). Static: U_off and U_on fixed.
// Dynamic: U_on fixed, U_off(i) = U_on * (i - 1) / k with i links on.
// Proportional: the links the load needs at U_on, grown to at once; shrunk
// only to what it needs at h * U_on (docs/mechanisms.md §2.7).
struct Thresholds {
  GatingKind kind = GatingKind::kDynamic;
  double uOff = 0.0;  // static only
  double uOn = 0.15;
  double hysteresis = 0.9;  // proportional only: h, 0 < h < 1
  // Congestion trigger, any kind: with the up links waiting for credit more
  // than this share of the period, a link comes on whatever u_up says, and
  // none goes off (docs/mechanisms.md §2.8). 0: off.
  double waitOn = 0.0;

  static Thresholds makeStatic(double uOff, double uOn) { return {GatingKind::kStatic, uOff, uOn}; }
  static Thresholds makeDynamic(double uOn) { return {GatingKind::kDynamic, 0.0, uOn}; }
  static Thresholds makeProportional(double uOn, double h) {
    return {GatingKind::kProportional, 0.0, uOn, h};
  }

  // The map of possible thresholds: static needs 0 < U_off, U_on <= 1 and
  // U_on > 2 * U_off (else the switch oscillates when its second-to-last link
  // goes off); dynamic needs 0 < U_on <= 1. E_INVALID names the rule broken.
  Status validate() const;

  // The off / on thresholds on u_up with i of k up links on (1 <= k; i = 0 gives
  // a negative dynamic U_off, which never fires).
  double offThreshold(int linksOn, int k) const;
  double onThreshold() const { return uOn; }
  // The same relative to the full up-link throughput (Tables 1 and 2 of the
  // paper): factor i/k times the threshold.
  double effectiveOff(int linksOn, int k) const;
  double effectiveOn(int linksOn, int k) const;

  std::string describe() const;  // "static [U_off=0.03, U_on=0.15]"
};

}  // namespace ebb::policies
