#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "fabric/topology.h"
#include "workload/rate_profile.h"

namespace ebb::workload {

// The hot hosts of `spot` on `topo`, ascending and distinct: the named ones,
// or `count` drawn with `seed` (the same hosts for the same seed). Empty when
// hot spots are off. E_INVALID naming the config field
// ("workload.hotspot.host[1]: no host named H99 in the fabric") when a name is
// unknown or repeated, or when the count leaves no host that is not hot.
Result<std::vector<std::uint32_t>> resolveHotspot(const Hotspot& spot, const fabric::Topology& topo,
                                                  std::uint64_t seed);

}  // namespace ebb::workload
