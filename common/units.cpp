#include "common/units.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace ebb {

Result<TimePs> scaleToPs(std::string_view field, std::int64_t count, TimePs unitPs,
                         std::string_view unitName) {
  if (count < 0) return invalidArgument(fmt::format("{}: must be >= 0 (is {})", field, count));
  if (unitPs > 0 && count > std::numeric_limits<TimePs>::max() / unitPs) {
    return invalidArgument(
        fmt::format("{}: {} {} is beyond the time range of about 106 days (at most {})", field,
                    count, unitName, std::numeric_limits<TimePs>::max() / unitPs));
  }
  return count * unitPs;
}

Result<TimePs> cyclesToPs(std::string_view field, std::int64_t cycles, TimePs cyclePs) {
  return scaleToPs(field, cycles, cyclePs,
                   fmt::format("cycles of emulator.cycle_ps = {} ps", cyclePs));
}

Result<TimePs> msToPs(std::string_view field, std::int64_t ms) {
  return scaleToPs(field, ms, kPsPerMs, "ms");
}

Result<TimePs> usToPs(std::string_view field, double us) {
  if (!std::isfinite(us) || us < 0)
    return invalidArgument(fmt::format("{}: must be >= 0 (is {})", field, us));
  // 2^63 ps is 9.22e12 us; stay clear of the rounding edge.
  constexpr double kMaxUs = 9.2e12;
  if (us > kMaxUs) {
    return invalidArgument(
        fmt::format("{}: {} us is beyond the time range of about 106 days (at most {:g} us)", field,
                    us, kMaxUs));
  }
  return static_cast<TimePs>(std::llround(us * static_cast<double>(kPsPerUs)));
}

Result<std::int64_t> checkedProduct(std::string_view field, std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) {
    return invalidArgument(fmt::format("{}: {} x {} does not fit in a 64-bit count", field, a, b));
  }
  return out;
}

}  // namespace ebb
