#pragma once

#include <string>

#include "common/status.h"
#include "sim_backend/mpi_trace.h"

namespace ebb::sim {

struct SimgridStats {
  std::uint64_t collectives = 0;
  std::uint64_t computeFlops = 0;
};

// Reads SimGrid time-independent traces: a folder (or one file) with one file
// per rank, "<rank> <op> <args>" per line, op names case-insensitive. Compute
// in flops becomes time at `flopsPerS`; sizes are counts of 8-byte doubles;
// collectives (bcast, barrier, allReduce, allToAll, allToAllV, gather,
// reduceScatter, allGatherV) are expanded by sim_backend/collectives. Errors:
// E_PARSE "<file>:<line>: <rule>", including ranks whose collectives disagree.
Result<MpiTrace> readSimgridTrace(const std::string& path, double flopsPerS,
                                  SimgridStats* stats = nullptr);

}  // namespace ebb::sim
