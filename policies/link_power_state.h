#pragma once

#include <cstdint>

namespace ebb::policies {

// Power state of one gated link direction (Alonso et al. section 4.2): turning
// off makes it unusable at once while it still draws power for T_off; turning
// on draws power at once while it becomes usable only after T_on.
enum class LinkPowerState : std::uint8_t {
  kOn,          // usable, powered
  kTurningOn,   // powered, not yet usable
  kTurningOff,  // unusable, still powered
  kOff,         // unusable, unpowered
};

constexpr bool isUsable(LinkPowerState s) {
  return s == LinkPowerState::kOn;
}
constexpr bool isPowered(LinkPowerState s) {
  return s != LinkPowerState::kOff;
}
// On, or committed to being on.
constexpr bool isOnOrTurningOn(LinkPowerState s) {
  return s == LinkPowerState::kOn || s == LinkPowerState::kTurningOn;
}
const char* toString(LinkPowerState s);

}  // namespace ebb::policies
