#pragma once

// The irregular fabric of the `ebb agent` failure tests: 3 spines of 12 ports
// and 5 leaves of 8, each leaf cabled once to every spine at irregular port
// numbers, given to the daemon as an ibsim net file
// (tests/ib/topology_mismatch_test.cpp drops one cable from each side).
#include <string>

#include "fabric/minimal_tree.h"
#include "fabric/topology.h"
#include "tests/harness/ibsim_fabric.h"
#include "tests/ib/daemon_rig.h"

namespace ebb::testing {

const char* irregularNet();  // the ibsim net file
const fabric::Topology& irregular();
const fabric::MinimalTree& irregularTree();
// OpenSM with ebb's event plugin (trap 128 reaches the daemon at once), or without.
IbsimFabric::Options fabricOptions(bool osmEvents);
// The daemon at H1 (leaf L1), the net file written next to its config, with
// its own lock file `<name>.lock` and `fields` added to `agent { }`.
DaemonConfig onIrregular(IbsimFabric& fab, const std::string& fields, const std::string& name);

}  // namespace ebb::testing
