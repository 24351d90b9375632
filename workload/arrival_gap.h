#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>

#include "common/time.h"

namespace ebb::workload {

// A time no run reaches (about 27 days): the gap to the next arrival of a
// source whose rate is too small for the draw to be represented.
inline constexpr TimePs kNoArrival = std::numeric_limits<TimePs>::max() / 4;

// The time to a Bernoulli source's next arrival: 1 + a geometric number of
// cycles, each cycle an arrival with probability p (0 < p). Below 1e-12 the
// standard distribution's log(1 - p) rounds to 0 (its draw is then undefined)
// or its draws overflow a time, so those rates are drawn here in doubles and
// saturate at kNoArrival; above, the draws (and so every run's stream) are the
// standard distribution's.
inline TimePs bernoulliGap(double p, TimePs cyclePs, std::mt19937_64& rng) {
  if (p >= 1.0) return cyclePs;
  double cycles;
  if (p >= 1e-12) {
    cycles = static_cast<double>(std::geometric_distribution<std::int64_t>(p)(rng)) + 1;
  } else {
    const double u = std::generate_canonical<double, std::numeric_limits<double>::digits>(rng);
    cycles = std::floor(std::log1p(-u) / std::log1p(-p)) + 1;
  }
  const double ps = cycles * static_cast<double>(cyclePs);
  return ps < static_cast<double>(kNoArrival) ? static_cast<TimePs>(cycles) * cyclePs : kNoArrival;
}

// The time of the next arrival `gap` after `t`, if it comes before `end`:
// kNoArrival is never, and a sum past the time range is no time (a source at
// 1e-30 flits/cycle over a range longer than kNoArrival sent its "never" as
// messages, and wrapped into negative times).
inline std::optional<TimePs> arrivalBefore(TimePs t, TimePs gap, TimePs end) {
  if (gap >= kNoArrival || t >= end || gap >= end - t) return std::nullopt;
  return t + gap;
}

// The time to a Poisson source's next arrival at p arrivals per cycle (0 < p),
// at least 1 ps, saturating at kNoArrival.
inline TimePs poissonGap(double p, TimePs cyclePs, std::mt19937_64& rng) {
  const double ps = std::exponential_distribution<double>(p)(rng) * static_cast<double>(cyclePs);
  if (!(ps < static_cast<double>(kNoArrival))) return kNoArrival;
  return std::max<TimePs>(1, static_cast<TimePs>(ps));
}

}  // namespace ebb::workload
