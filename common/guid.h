#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ebb {

// A GUID as InfiniBand tools print it: hexadecimal, 1 to 16 digits, with or
// without a leading 0x (ibnetdiscover writes "switchguid=0x0002c9..." and ids
// "S-0002c9..."). Never decimal or octal, no sign, no spaces: a GUID that
// reads as another number would name another switch.
inline std::optional<std::uint64_t> parseGuid(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return std::nullopt;
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace ebb
