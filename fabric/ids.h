#pragma once

#include <cstdint>
#include <functional>

#include "common/strong_id.h"

namespace ebb::fabric {

struct SwitchTag;
struct HostTag;
struct LinkTag;

using SwitchId = StrongId<SwitchTag>;
using HostId = StrongId<HostTag>;
using LinkId = StrongId<LinkTag>;

// A switch port. `index` is the port label, 0-based (k-ary n-tree: 0..k-1 down,
// k..2k-1 up); the InfiniBand port number is index + 1.
struct PortId {
  SwitchId sw;
  std::uint16_t index = 0;

  constexpr int ibPortNumber() const { return index + 1; }
  constexpr auto operator<=>(const PortId&) const = default;
};

// The two directions of a link, gated independently in the emulator.
enum class Direction : std::uint8_t {
  kUp = 0,    // ascending: from the lower end (child switch or host) to the parent
  kDown = 1,  // descending: from the parent to the lower end
};

}  // namespace ebb::fabric

template <>
struct std::hash<ebb::fabric::PortId> {
  std::size_t operator()(const ebb::fabric::PortId& p) const noexcept {
    return (std::size_t{p.sw.value()} << 16) ^ p.index;
  }
};
