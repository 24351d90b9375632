#pragma once

#include <string>

#include "common/status.h"
#include "configs/proto/fabric.pb.h"  // generated
#include "fabric/topology.h"

namespace ebb::replay {

// Builds the Topology a FabricConfig names. Relative topology file paths are
// resolved against `baseDir` (the config file's folder). Errors name the field.
Result<fabric::Topology> topologyFromConfig(const config::FabricConfig& cfg,
                                            const std::string& baseDir);

}  // namespace ebb::replay
