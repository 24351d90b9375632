#pragma once

#include <cstdint>
#include <vector>

#include "sim_backend/mpi_trace.h"

namespace ebb::sim {

// Expands collectives into the point-to-point operations of a named algorithm,
// appended to every rank's program (ranks = the communicator, 0..P-1). Each
// step is isend/irecv pairs followed by a waitall, so replay is closed-loop.
// `tag` should be unique per collective instance (negative tags are reserved
// for collectives, so they never match application messages).
using Programs = std::vector<std::vector<MpiOp>>;

// Pairwise exchange: P-1 steps; at step s rank r sends to r+s and receives
// from r-s (mod P); every rank sends `bytes` to every other rank once.
void alltoallPairwise(Programs& p, std::int64_t bytes, std::int32_t tag);
// Pairwise with per-destination sizes: sizes[src][dst] bytes.
void alltoallvPairwise(Programs& p, const std::vector<std::vector<std::int64_t>>& sizes,
                       std::int32_t tag);
// Binomial tree from `root`: ceil(log2 P) rounds.
void bcastBinomial(Programs& p, std::uint32_t root, std::int64_t bytes, std::int32_t tag);
// Recursive doubling (P a power of two): log2 P steps, each rank exchanging
// `bytes` with rank ^ 2^i; other P: binomial reduce to 0, then binomial bcast.
void allreduceRecursiveDoubling(Programs& p, std::int64_t bytes, std::int32_t tag);
// Linear gather / scatter: P-1 messages of `bytes` to / from `root`.
void gatherLinear(Programs& p, std::uint32_t root, std::int64_t bytes, std::int32_t tag);
void scatterLinear(Programs& p, std::uint32_t root, std::int64_t bytes, std::int32_t tag);
// A barrier: allreduce of one byte.
void barrier(Programs& p, std::int32_t tag);

}  // namespace ebb::sim
