#pragma once

#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fabric/topology_builder.h"

namespace ebb::fabric {

// Two spines over three leaves; the last leaf has no hosts (its nodes down).
inline TopologyBuilder treeWithHostlessLeaf() {
  TopologyBuilder b;
  const SwitchId spines[] = {b.addSwitch("spine0", 0x10, 3), b.addSwitch("spine1", 0x11, 3)};
  for (std::uint16_t l = 0; l < 3; ++l) {
    const SwitchId leaf = b.addSwitch("leaf" + std::to_string(l), 0x20u + l, 4);
    for (std::uint16_t s = 0; s < 2; ++s)
      EXPECT_TRUE(
          b.connectSwitches({leaf, static_cast<std::uint16_t>(2 + s)}, {spines[s], l}).isOk());
    if (l == 2) continue;
    for (std::uint16_t h = 0; h < 2; ++h) {
      const HostId id = b.addHost(fmt::format("h{}", l * 2 + h), 0x100u + l * 2u + h);
      EXPECT_TRUE(b.connectHost(id, 0, {leaf, h}).isOk());
    }
  }
  return b;
}

}  // namespace ebb::fabric
