#pragma once

#include <vector>

#include "fabric/ids.h"

namespace ebb::agent {

// What the safety guard proves before a turn-off on a fabric controlled
// in-band (docs/ib_agent.md, "Single-failure resilience").
enum class Resilience {
  kNone,        // every pair connected now; the switches with links on in reach
  kSingleLink,  // and after any one link failure, recovery in-band reconnects every pair
};

// Control of a fabric in-band, from one management port (InfiniBand): a link
// is disabled at one of its ends, and only a switch reached over links that
// are on can be Set. The guard then chooses that end (SafetyGuard::gateEnd).
struct InBandControl {
  fabric::SwitchId root;           // the switch the management port attaches at
  std::vector<char> controllable;  // per switch: ebb may Set its ports; empty: every switch
  Resilience resilience = Resilience::kSingleLink;
};

}  // namespace ebb::agent
