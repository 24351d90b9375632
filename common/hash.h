#pragma once

#include <cstdint>

namespace ebb {

// splitmix64's step (Steele, Lea and Flood, OOPSLA 2014): a fast, well-mixed
// 64-bit hash, for seeded draws that two parties must agree on without
// sharing a generator (a message's size, drawn by sender and receiver alike)
// and for seeds derived from seeds.
constexpr std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A draw in [0, 1) from a hash value.
constexpr double unitDraw(std::uint64_t h) {
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

}  // namespace ebb
