#pragma once

#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "common/status.h"

namespace ebb::replay {

// A field with presence: its value when set (checked against `minimum`,
// which is 1 for "> 0" and 0 for ">= 0"), else `def`. An explicit 0 is a
// value, never "unset" (docs/replay.md, "Configuration rules").
inline Result<std::int64_t> presentOr(std::string_view field, bool has, std::int64_t v,
                                      std::int64_t def, std::int64_t minimum) {
  if (!has) return def;
  if (v < minimum) {
    return invalidArgument(
        fmt::format("{}: must be {} (is {})", field, minimum == 1 ? "> 0" : ">= 0", v));
  }
  return v;
}

}  // namespace ebb::replay
