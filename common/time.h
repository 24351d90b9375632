#pragma once

#include <cmath>
#include <cstdint>

namespace ebb {

// Time is an integer number of picoseconds everywhere in ebb (virtual time in
// the emulator, steady-clock time in production). 2^63 ps is about 106 days.
using TimePs = std::int64_t;

inline constexpr TimePs kPsPerNs = 1'000;
inline constexpr TimePs kPsPerUs = 1'000'000;
inline constexpr TimePs kPsPerMs = 1'000'000'000;
inline constexpr TimePs kPsPerS = 1'000'000'000'000;

constexpr TimePs nanoseconds(std::int64_t v) {
  return v * kPsPerNs;
}
constexpr TimePs microseconds(std::int64_t v) {
  return v * kPsPerUs;
}
constexpr TimePs milliseconds(std::int64_t v) {
  return v * kPsPerMs;
}
constexpr double toSeconds(TimePs t) {
  return static_cast<double>(t) / static_cast<double>(kPsPerS);
}
constexpr double toMicroseconds(TimePs t) {
  return static_cast<double>(t) / static_cast<double>(kPsPerUs);
}
constexpr double toMilliseconds(TimePs t) {
  return static_cast<double>(t) / static_cast<double>(kPsPerMs);
}
// a + b and a * b (a, b >= 0), or the end of time where they would not fit:
// bounds worked out from a workload's span stay bounds near the end of time.
inline constexpr TimePs kEndOfTime = INT64_MAX;
constexpr TimePs saturatingAdd(TimePs a, TimePs b) {
  TimePs r = 0;
  return __builtin_add_overflow(a, b, &r) ? kEndOfTime : r;
}
constexpr TimePs saturatingMul(TimePs a, TimePs b) {
  TimePs r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kEndOfTime : r;
}
// Seconds as a double (e.g. from a trace) to the nearest picosecond. The
// caller checks the range: beyond about 9.2e6 s the result does not fit.
inline TimePs fromSeconds(double s) {
  return static_cast<TimePs>(std::llround(s * static_cast<double>(kPsPerS)));
}

}  // namespace ebb
