#pragma once

// Which event file of an OTF2 archive the library cannot read, found after a
// read of all events failed (the library names none): each location's file
// is read alone on a fresh reader. Only built with OTF2.

#include <otf2/otf2.h>

#include <cstdint>
#include <map>
#include <string>

#include "workload/otf2_ranks.h"

namespace ebb::workload::otf2 {

// "<archive>/<location>.evt (rank R, after N events: <why>): unreadable
// events" or "... is missing ...", or empty when every file reads.
std::string brokenEventFile(const std::string& anchor,
                            const std::map<OTF2_LocationRef, std::uint32_t>& rankOf,
                            const std::map<OTF2_LocationRef, LocationDef>& locations);

}  // namespace ebb::workload::otf2
