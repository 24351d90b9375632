#pragma once

#include <ostream>

#include "common/status.h"
#include "fabric/topology.h"

namespace ebb::fabric {

// The most ports a node of a net file (and of ibnetdiscover output) has: the
// port number is one byte on InfiniBand, and 255 is not a port (PortSelect
// 0xFF asks a switch's PortCounters for all ports at once).
inline constexpr std::size_t kMaxNetfilePorts = 254;

// Writes an ibsim "net" file of the topology: hosts first (the first host is
// ibsim's default attach point), then switches; every cable from both ends;
// each node preceded by its GUID line. A node without a GUID (0) gets a
// unique, deterministic one in the style of generated fabrics, past every
// GUID the topology has (ibsim refuses two nodes with one GUID). Port numbers
// are labels + 1. A switch with more than kMaxNetfilePorts ports is refused
// before anything is written (neither ibsim nor ebb's reader could read it
// back).
Status writeIbsimNetfile(const Topology& topo, std::ostream& out);

}  // namespace ebb::fabric
