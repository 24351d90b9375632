#pragma once

#include <CLI/CLI.hpp>

#include <cctype>
#include <charconv>
#include <string>

#include "configs/overrides.h"

namespace ebb::tools {

// Whether `s` is a whole number and nothing else (no sign, no trailing
// text); its value in `v`.
inline bool parseWholeNumber(const std::string& s, unsigned long long& v) {
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  return ec == std::errc() && ptr == end;
}

// The name of a whole-number check that states the option's own lower
// bound, so a negative value gets that rule (requireDecimalNumbers leaves
// negatives to it rather than saying ">= 0" of an option that needs > 0).
inline constexpr const char* kOwnLowerBound = "own-lower-bound";

// An option that must be a whole number > 0, with a message that says so
// plainly ("--jobs: must be a whole number > 0 (is 0)"), where
// CLI::PositiveNumber prints the range of a double with 300 digits.
inline CLI::Validator wholeNumberAboveZero() {
  return CLI::Validator(
             [](std::string& s) -> std::string {
               unsigned long long v = 0;
               if (!parseWholeNumber(s, v) || v == 0)
                 return "must be a whole number > 0 (is " + s + ")";
               return {};
             },
             "> 0")
      .name(kOwnLowerBound);
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

// Numbers on the command line are decimal, as in configs and overrides, and
// no text value is empty.
// CLI11 would read "010" as octal 8, "0x10" as 16 and "0b11" as 3, and for
// "--k 1e3" says "At Most 1 required but received 2". Every whole-number
// option of `app` and its subcommands gets "must be a whole number (is 1e3)"
// (leading zeros dropped: "010" is 10), every real-number option "must be a
// decimal number (is 0x1p-3)".
inline void requireDecimalNumbers(CLI::App& app) {
  const auto digits = [](const std::string& s, std::size_t from) {
    if (from >= s.size()) return false;
    for (std::size_t i = from; i < s.size(); ++i) {
      if (std::isdigit(static_cast<unsigned char>(s[i])) == 0) return false;
    }
    return true;
  };
  // Whole numbers: decimal digits, leading zeros dropped, and within the
  // option's type (past it the option library clamps or fails vaguely).
  const auto whole = [digits](bool isUnsigned, bool ownLowerBound) {
    return CLI::Validator(
        [digits, isUnsigned, ownLowerBound](std::string& s) -> std::string {
          const std::size_t sign = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
          if (!digits(s, sign)) return "must be a whole number (is " + s + ")";
          std::size_t zeros = sign;
          while (zeros + 1 < s.size() && s[zeros] == '0')
            ++zeros;
          s.erase(sign, zeros - sign);
          if (s[0] == '+') s.erase(0, 1);
          long long v = 0;
          unsigned long long u = 0;
          const char* end = s.data() + s.size();
          const bool fits = isUnsigned ? std::from_chars(s.data(), end, u).ec == std::errc()
                                       : std::from_chars(s.data(), end, v).ec == std::errc();
          if (!fits && isUnsigned && s[0] == '-') {
            if (ownLowerBound) return {};  // its own check names its rule
            return "must be a whole number >= 0 (is " + s + ")";
          }
          if (!fits) return "is out of range (is " + s + ")";
          return {};
        },
        "");
  };
  const CLI::Validator real(
      [digits](std::string& s) -> std::string {
        // [sign] digits [. digits] [e [sign] digits], at least one digit before the exponent.
        std::size_t i = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
        const std::size_t e = s.find_first_of("eE", i);
        const std::string mantissa =
            s.substr(i, e == std::string::npos ? std::string::npos : e - i);
        const std::size_t dot = mantissa.find('.');
        const std::string units = mantissa.substr(0, dot);
        const std::string frac = dot == std::string::npos ? "" : mantissa.substr(dot + 1);
        bool ok = !(units.empty() && frac.empty()) && (units.empty() || digits(units, 0)) &&
                  (frac.empty() || digits(frac, 0));
        if (ok && e != std::string::npos) {
          const std::size_t x =
              e + 1 < s.size() && (s[e + 1] == '-' || s[e + 1] == '+') ? e + 2 : e + 1;
          ok = digits(s, x);
        }
        if (!ok) return "must be a decimal number (is " + s + ")";
        // Within a double: 1e400 read as inf and 1e-400 as 0, and the
        // option's own check then quoted a value the user never gave.
        double v = 0;
        if (const std::string is = config::parseDecimal(s, v); !is.empty())
          return "is " + is + " (is " + s + ")";
        return {};
      },
      "");
  // An empty value (an unset "$VAR") would read as the option left out: a
  // path would fall back to the default and the run go on without a word.
  const CLI::Validator nonEmpty(
      [](std::string& s) -> std::string {
        if (s.empty()) return "must not be empty (leave the option out for its default)";
        return {};
      },
      "");
  const auto visit = [&](CLI::App& a, auto& self) -> void {
    for (CLI::Option* o : a.get_options()) {
      const std::string type = o->get_type_name();
      if (type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0) {
        bool ownLowerBound = true;
        try {
          o->get_validator(kOwnLowerBound);
        } catch (const CLI::OptionNotFound&) {
          ownLowerBound = false;
        }
        o->transform(whole(type.rfind("UINT", 0) == 0, ownLowerBound));
      } else if (type.rfind("FLOAT", 0) == 0) {
        o->check(real);
      } else if (type.rfind("TEXT", 0) == 0 && o->get_expected_min() > 0) {
        o->check(nonEmpty);
      }
    }
    for (CLI::App* sub : a.get_subcommands({}))
      self(*sub, self);
  };
  visit(app, visit);
}

}  // namespace ebb::tools
