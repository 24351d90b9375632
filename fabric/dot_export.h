#pragma once

#include <ostream>

#include "fabric/minimal_tree.h"
#include "fabric/topology.h"

namespace ebb::fabric {

// Graphviz (undirected) with one rank per level, hosts as boxes at the
// bottom, minimal-tree links bold, the rest thin and grey. Names are written
// as DOT quoted strings: '"' as \", '\' as \\, a line break as \n.
void writeDot(const Topology& topo, const MinimalTree& mt, std::ostream& out);

}  // namespace ebb::fabric
