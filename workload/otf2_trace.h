#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "workload/collectives.h"
#include "workload/mpi_trace.h"

namespace ebb::workload {

struct Otf2Stats {
  std::uint64_t p2pSends = 0;  // the application's own MPI_Send/MPI_Isend
  std::uint64_t p2pBytes = 0;
  std::uint64_t recvs = 0;            // MPI_Recv/MPI_Irecv
  std::uint64_t collectives = 0;      // operations, each counted once for all its ranks
  std::vector<std::string> warnings;  // also printed on stderr, "warning: " first
};

// Reads an OTF2 trace (the anchor file, e.g. traces.otf2) through Debian's
// OTF2 library: one rank per MPI process (location group of type PROCESS,
// numbered in the order of their lowest location id), the events of its
// threads merged in time order; a location of no process is a rank of its
// own. Time when none of a process's threads is in an MPI call, and
// non-blocking calls' own time, becomes compute; MPI_Send and MPI_Recv are
// blocking; MPI_Isend/MPI_Irecv requests complete in the MPI_Wait*/MPI_Test*
// call where the trace completes them; collectives (barrier, bcast, gather,
// scatter, reduce, allreduce, alltoall, allgather) are expanded with `algos`
// from their recorded sizes. Peers and roots are ranks of the event's
// communicator, translated through its Comm and Group definitions: a
// collective on a sub-communicator is expanded over its members only (each
// member's k-th collective on it is one operation); communicator creation
// and freeing moves no data and is skipped. Inter-communicators and
// one-sided communication (RMA, windows) are refused. Each location's local
// definitions (clock offsets, mapping tables) are applied; a missing one is
// an error when the others carry either, else a warning (stderr and
// stats->warnings). Errors: E_IO for a missing or unreadable trace, E_PARSE
// "<file>: rank R, event N: <rule>" (N counts the location's events from 1;
// docs/traffic.md lists the rules), and E_UNAVAILABLE when ebb was built
// without OTF2.
Result<MpiTrace> readOtf2Trace(const std::string& anchor, const CollectiveAlgos& algos = {},
                               Otf2Stats* stats = nullptr);

// Whether this build reads OTF2.
bool haveOtf2();

}  // namespace ebb::workload
