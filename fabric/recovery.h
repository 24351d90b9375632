#pragma once

#include <vector>

#include "fabric/connectivity.h"
#include "fabric/faults.h"
#include "fabric/link_states.h"
#include "fabric/minimal_tree.h"
#include "fabric/topology.h"

namespace ebb::fabric {

// The recovery rule (docs/mechanisms.md §3.1): the links to turn on, both
// directions, at once after a fault so that every connectable pair (see
// Connectivity) has an up*/down* path again over directions that are on and
// usable. Pure; ascending ids; empty when nothing is needed.
//
//  1. every link of the re-homed tree that is not fully on;
//  2. then, while the fault-aware proof names a broken pair (a, b): a's or b's
//     host link if that is what is off; otherwise, for a's leaf i and every
//     leaf j that i reaches over usable directions but not over the links on,
//     one path i -> j: ascend while j is not below the current switch, then
//     descend, each hop on the lowest-numbered port that keeps j reachable,
//     preferring a link whose needed direction is already on.
// Step 2 is needed only when the tree cannot hold every connectable pair:
// hosts outside the tree that are not cut off, or connectable pairs among
// hosts outside it. Each round fixes at least a host link or a leaf, so it ends;
// it usually runs once, as the proof that step 1 was enough.
std::vector<LinkId> linksToRestore(const Topology& t, const LinkStates& states,
                                   const FaultSet& faults, const MinimalTree& rehomed);
// The same, reusing a Connectivity built for `t` (its buffers and its cached
// reach over the surviving directions).
std::vector<LinkId> linksToRestore(Connectivity& conn, const Topology& t, const LinkStates& states,
                                   const FaultSet& faults, const MinimalTree& rehomed);

}  // namespace ebb::fabric
