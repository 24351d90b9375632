#pragma once

#include <ostream>

#include "fabric/topology.h"

namespace ebb::fabric {

// Writes an ibsim "net" file of the topology: hosts first (the first host is
// ibsim's default attach point), then switches; every cable from both ends;
// each node preceded by its GUID line. Port numbers are labels + 1.
void writeIbsimNetfile(const Topology& topo, std::ostream& out);

}  // namespace ebb::fabric
