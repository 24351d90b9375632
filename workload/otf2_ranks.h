#pragma once

// Which rank each OTF2 location is. An MPI rank is a process: an OTF2 location
// group of type PROCESS, whose locations (its threads, CPU_THREAD, and any
// accelerator streams) all record into that one rank. Only built with OTF2.

#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_GeneralDefinitions.h>

#include <cstdint>
#include <map>

namespace ebb::workload::otf2 {

struct LocationDef {
  std::uint64_t events = 0;  // as the definitions give them
  OTF2_LocationGroupRef group = OTF2_UNDEFINED_LOCATION_GROUP;
};

struct LocationGroupDef {
  OTF2_LocationGroupType type = OTF2_LOCATION_GROUP_TYPE_UNKNOWN;
  OTF2_LocationGroupRef creator = OTF2_UNDEFINED_LOCATION_GROUP;  // of an ACCELERATOR group
};

// The rank of every location: one per PROCESS location group (an ACCELERATOR
// group counts as the process that created it), numbered in the order of
// their first (lowest) location id, so that a trace with one location per
// process keeps location id order. A location of no process group (undefined,
// or of type UNKNOWN) is a rank of its own, as in traces written without
// location groups. `rankCount` is set to the number of ranks.
std::map<OTF2_LocationRef, std::uint32_t> ranksOfLocations(
    const std::map<OTF2_LocationRef, LocationDef>& locations,
    const std::map<OTF2_LocationGroupRef, LocationGroupDef>& groups, std::uint32_t& rankCount);

}  // namespace ebb::workload::otf2
