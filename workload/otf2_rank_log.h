#pragma once

// What one rank (an MPI process: all the locations of its location group) did
// in an OTF2 trace, as the event reader records it. Only built with OTF2.

#include <otf2/OTF2_GeneralDefinitions.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "workload/mpi_trace.h"

namespace ebb::workload::otf2 {

// A collective as one rank recorded it.
struct Collective {
  std::string op;  // expandCollective's names
  OTF2_CommRef comm = 0;
  std::uint32_t root = 0;  // a rank of the communicator, as the event gives it
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::string where;  // "rank R, event N", for errors
};

// A rank's ops in time order, with its collectives between them. Request ids
// are the process's (MPI requests may be completed by another thread).
struct RankLog {
  std::vector<MpiOp> ops;
  std::vector<std::pair<std::size_t, Collective> > collectives;  // (ops index, collective)
  std::optional<OTF2_TimeStamp> lastLeave;                       // when its threads last left MPI
  std::uint32_t inMpi = 0;                                       // its threads inside an MPI call
  std::map<std::uint64_t, std::size_t> pendingIrecv;             // request id -> op index
  std::map<std::uint64_t, std::uint64_t> pendingIsend;           // request id -> event ordinal
};

}  // namespace ebb::workload::otf2
