#pragma once

#include <string>
#include <vector>

#include "agent/in_band.h"
#include "agent/safety_guard.h"
#include "common/status.h"
#include "configs/proto/replay.pb.h"  // generated
#include "configs/proto/report.pb.h"  // generated
#include "fabric/link_states.h"
#include "fabric/topology.h"

namespace ebb::replay {

// gating.in_band of an emulator run (docs/emulator.md, "In-band mode"): the
// emulator gates a link as one unit, like InfiniBand, and the safety guard
// proves what `ebb agent` proves on a fabric it controls from one
// management port.
struct InBandDef {
  bool enabled = false;
  std::string managementSwitch;  // empty: the leaf of host 0
  agent::Resilience resilience = agent::Resilience::kSingleLink;
};

// gating.in_band checked without the topology; E_INVALID names the field.
// `gating`: whether the run gates at all (in-band needs it).
Result<InBandDef> inBandFromConfig(const config::InBandSpec& spec, bool gating);

// The switch the management port attaches at; E_INVALID naming
// gating.in_band.management_switch when the topology has no such switch.
Result<fabric::SwitchId> managementSwitch(const InBandDef& def, const fabric::Topology& topo);

// Per link: the end nearer `root` over switch links (a host link: its leaf).
// A run starts with only the minimal tree on; each link off at start is taken
// as disabled at this end, the one a management port reaches first (on
// InfiniBand the backend reads where it is disabled).
std::vector<fabric::SwitchId> nearerEnds(const fabric::Topology& topo, fabric::SwitchId root);

// Puts `guard` in charge of in-band control from `root` (every switch
// controllable), the links off in `initial` disabled at their nearer end.
void attachInBand(agent::SafetyGuard& guard, const fabric::Topology& topo, fabric::SwitchId root,
                  agent::Resilience resilience, const fabric::LinkStates& initial);

// "SINGLE_LINK" or "NONE", as in the config.
const char* resilienceName(agent::Resilience r);

// The in_band section of the run summary.
void fillInBandReport(const fabric::Topology& topo, fabric::SwitchId root,
                      agent::Resilience resilience, const agent::SafetyGuard& guard,
                      results::InBandReport& r);

}  // namespace ebb::replay
