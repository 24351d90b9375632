#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <string>

namespace ebb::tools {

// Whether `s` is a whole number and nothing else (no sign, no trailing
// text); its value in `v`.
inline bool parseWholeNumber(const std::string& s, unsigned long long& v) {
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  return ec == std::errc() && ptr == end;
}

// An option that must be a whole number > 0, with a message that says so
// plainly ("--jobs: must be a whole number > 0 (is 0)"), where
// CLI::PositiveNumber prints the range of a double with 300 digits.
inline CLI::Validator wholeNumberAboveZero() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        unsigned long long v = 0;
        if (!parseWholeNumber(s, v) || v == 0) return "must be a whole number > 0 (is " + s + ")";
        return {};
      },
      "> 0");
}

// An option that must be a whole number >= 0 (a seed), with a message that
// says so ("--seed: must be a whole number >= 0 (is -1)"), where CLI11 would
// take "-1" into a std::uint64_t as 2^64 - 1.
inline CLI::Validator wholeNumber() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        unsigned long long v = 0;
        if (!parseWholeNumber(s, v)) return "must be a whole number >= 0 (is " + s + ")";
        return {};
      },
      ">= 0");
}

}  // namespace ebb::tools
