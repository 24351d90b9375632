#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace ebb::workload {

// Offered load over time, in flits/cycle/node, piecewise linear between points.
class RateProfile {
 public:
  RateProfile() = default;
  explicit RateProfile(std::vector<std::pair<TimePs, double>> points);
  static RateProfile constant(double rate, TimePs end) {
    return RateProfile({{0, rate}, {end, rate}});
  }
  // docs/mechanisms.md §6.1 (Alonso et al. 2007, §4.1): 0.01 for 60 000 cycles, ramp to 0.60 over
  // 120 000, hold 120 000, ramp down to 0.01 over 120 000 (scaled by `scale` for short tests).
  static RateProfile alonsoRamp(TimePs cyclePs, double scale = 1.0, double low = 0.01,
                                double high = 0.60);

  double at(TimePs t) const;
  double max() const { return max_; }
  // The rate integrated over time: flits/cycle/node x picoseconds.
  double integral() const;
  TimePs end() const { return points_.empty() ? 0 : points_.back().first; }
  // True while the rate rises (before the peak), for increasing/decreasing
  // curves; always for a flat profile (one curve).
  bool rising(TimePs t) const;
  Status validate() const;  // times ascending, rates >= 0

 private:
  std::vector<std::pair<TimePs, double>> points_;
  // Worked out once: rising() is asked for every message of long profiles.
  double max_ = 0;
  bool hasPeak_ = false;  // points_ is not empty
  TimePs peakAt_ = 0;     // the first point at the maximum
};

// An offered load in flits/cycle/node must be in 0..1, what one host link
// carries: E_INVALID "<field>: ..." naming the rule, or OK.
Status checkOfferedLoad(std::string_view field, double rate);

enum class Arrivals : std::uint8_t { kBernoulli, kPoisson };

// Hot spots (config::HotspotSpec): `fraction` of the messages go to a hot
// host. The hot hosts are named, or `count` of them are drawn with the
// traffic's seed (workload/hotspot.h resolves either against a topology).
struct Hotspot {
  double fraction = 0;  // 0: no hot spots
  std::uint32_t count = 0;
  std::vector<std::string> hostNames;
  bool enabled() const { return fraction > 0; }
};

struct SyntheticSpec {
  RateProfile rate;
  Hotspot hotspot;
  std::int64_t messageBytes = 64;  // fixed size, or the mean with sizeMax > 0
  std::int64_t sizeMin = 0;        // with sizeMax > 0: uniform in [sizeMin, sizeMax]
  std::int64_t sizeMax = 0;
  Arrivals arrivals = Arrivals::kBernoulli;
  std::uint64_t seed = 1;
  // Destinations from every host, the source included (workload.uniform.include_self).
  bool includeSelf = false;
};

}  // namespace ebb::workload
