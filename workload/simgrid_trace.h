#pragma once

#include <string>

#include "common/status.h"
#include "workload/collectives.h"
#include "workload/mpi_trace.h"

namespace ebb::workload {

struct SimgridStats {
  std::uint64_t collectives = 0;
  std::uint64_t computeFlops = 0;
};

struct SimgridOptions {
  double flopsPerS = 1e9;  // compute rate
  CollectiveAlgos algos;   // how collectives become point-to-point messages
};

// Reads SimGrid time-independent traces: a folder (or one file) with one file
// per rank, "<rank> <op> <args>" per line, op names case-insensitive. Compute
// in flops becomes time at `flopsPerS`; sizes are counts of 8-byte doubles;
// collectives (bcast, barrier, allReduce, allToAll, allToAllV, gather,
// scatter, reduce, reduceScatter, allGather, allGatherV) are expanded by
// sim_backend/collectives with the chosen algorithms; point-to-point send,
// recv (blocking), isend, irecv ("<dst> <size>" or "<dst> <tag> <size>"),
// wait (the most recent request) and waitAll run per rank. Errors: E_PARSE
// "<file>:<line>: <rule>", including ranks whose collectives disagree, per-pair
// collectives with other than SimGrid's argument counts or receive counts
// their peers do not send, a wait with nothing outstanding, and
// point-to-point sends and receives that do not pair up (checkSendsMatchReceives).
Result<MpiTrace> readSimgridTrace(const std::string& path, const SimgridOptions& options,
                                  SimgridStats* stats = nullptr);
Result<MpiTrace> readSimgridTrace(const std::string& path, double flopsPerS,
                                  SimgridStats* stats = nullptr);

}  // namespace ebb::workload
