#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "workload/mpi_trace.h"

namespace ebb::workload {

// Expands collectives into the point-to-point operations of a named algorithm,
// appended to every rank's program (ranks = the communicator, 0..P-1). Each
// step is isend/irecv pairs followed by a waitall, so replay is closed-loop.
// `tag` should be unique per collective instance (negative tags are reserved
// for collectives, so they never match application messages). Where a size
// is split into blocks, block i of P gets bytes/P, plus one for i < bytes%P.
using Programs = std::vector<std::vector<MpiOp>>;

// ---- alltoall ----
// Pairwise exchange: P-1 steps; at step s rank r sends to r+s and receives
// from r-s (mod P); every rank sends `bytes` to every other rank once.
void alltoallPairwise(Programs& p, std::int64_t bytes, std::int32_t tag);
// Pairwise with per-destination sizes: sizes[src][dst] bytes.
void alltoallvPairwise(Programs& p, const std::vector<std::vector<std::int64_t>>& sizes,
                       std::int32_t tag);
// The power-aware socket-phased alltoall of Kandalla et al. (seed 000, §V-A):
// ranks in nodes of `coresPerNode` consecutive ranks, each node two sockets
// (A: the first half, B: the second). Phase 1: pairwise exchange inside each
// node; phase 2: the A ranks of all nodes exchange pairwise across nodes;
// phase 3: the same for B; phase 4: nodes paired round-robin (N-1 rounds, N
// if N is odd), in each pair (i<j) first A_i <-> B_j, then B_i <-> A_j. Only
// one socket per node communicates across nodes at a time: a socket hands
// over to the other with zero-byte tokens (every rank of one to every rank of
// the other; the shared-memory flag of the real algorithm). Every rank still
// sends `bytes` to every other rank exactly once. E_INVALID unless
// coresPerNode is even and divides P.
Status alltoallSocketPhased(Programs& p, std::int64_t bytes, std::uint32_t coresPerNode,
                            std::int32_t tag);

// Bruck's alltoall (Bruck et al., IEEE TPDS 8(11), 1997): ceil(log2 P)
// rounds; in round k rank r sends to r + 2^k (mod P) every block whose index
// (relative to r) has bit k set, `bytes` each, and receives as many from
// r - 2^k. Fewer, larger messages than pairwise, more bytes in all.
void alltoallBruck(Programs& p, std::int64_t bytes, std::int32_t tag);
// Alltoallv with seeded per-pair sizes: each pair's size drawn once from
// [bytes/2, 3 bytes/2] (rounded, at least 1) by a hash of (seed, src, dst), then
// a pairwise exchange. The generated form of a trace's irregular alltoall.
void alltoallvDrawn(Programs& p, std::int64_t bytes, std::uint64_t seed, std::int32_t tag);

// ---- allgather / reduce_scatter ----
// Bruck's allgather: ceil(log2 P) rounds; in round k rank r sends the
// min(2^k, P - 2^k) blocks it has to r - 2^k and receives as many from r + 2^k.
void allgatherBruck(Programs& p, std::int64_t bytes, std::int32_t tag);
enum class ReduceScatterAlgo : std::uint8_t {
  kRing,              // P-1 steps of M/P blocks
  kRecursiveHalving,  // fold to a power of two, halve log2 P times, hand the folded ranks their
                      // block
};
// Reduce-scatter of an M-byte vector: every rank ends with its M/P block reduced.
void reduceScatter(Programs& p, ReduceScatterAlgo algo, std::int64_t bytes, std::int32_t tag);

// ---- bcast ----
// Binomial tree from `root`: ceil(log2 P) rounds.
void bcastBinomial(Programs& p, std::uint32_t root, std::int64_t bytes, std::int32_t tag);
// Scatter + allgather (van de Geijn; seed 000 §VI): the root sends block i to
// rank i (linear scatter), then a ring allgather of the blocks (P-1 steps).
void bcastScatterAllgather(Programs& p, std::uint32_t root, std::int64_t bytes, std::int32_t tag);

// ---- gather / scatter ----
// Linear gather / scatter: P-1 messages of `bytes` to / from `root`.
void gatherLinear(Programs& p, std::uint32_t root, std::int64_t bytes, std::int32_t tag);
void scatterLinear(Programs& p, std::uint32_t root, std::int64_t bytes, std::int32_t tag);
// Segmented gather of Lastovetsky et al. (seed 002): for M1 <= bytes <= M2,
// m linear gathers of bytes/m each, m the least with bytes/m < M1, each after
// a barrier; otherwise one linear gather.
void gatherSegmented(Programs& p, std::uint32_t root, std::int64_t bytes, std::int64_t m1,
                     std::int64_t m2, std::int32_t tag);
// Segmented scatter (seed 002): for bytes >= S, m linear scatters of bytes/m,
// m the least with bytes/m < S; otherwise one linear scatter.
void scatterSegmented(Programs& p, std::uint32_t root, std::int64_t bytes, std::int64_t s,
                      std::int32_t tag);
// The number of segments of the seed-002 rules (1 = not segmented).
std::int64_t gatherSegments(std::int64_t bytes, std::int64_t m1, std::int64_t m2);
std::int64_t scatterSegments(std::int64_t bytes, std::int64_t s);

// ---- reduce / allreduce (seed 003; Thakur, Rabenseifner and Gropp) ----
enum class ReduceAlgo : std::uint8_t {
  kGatherToRoot,            // linear gather of M to the root (allreduce: + root sends M back)
  kBinomial,                // binomial tree (allreduce: + binomial bcast)
  kRing,                    // ring reduce-scatter of M/P blocks, P-1 steps (reduce: + gather
                            // of the blocks to the root; allreduce: + ring allgather)
  kRecursiveDoubling,       // log2 P exchanges of M (reduce: the root keeps the result)
  kReduceScatterAllgather,  // Rabenseifner: recursive halving, then recursive doubling
                            // allgather (reduce: + gather of the pieces to the root)
  // Oden et al. (seed 003), GPUs writing to and reading from each other's
  // memory (GGAS); every "sync" is a barrier:
  kGgasRead,       // sync, then every reader (the root; allreduce: every rank) reads M
                   // from every other rank (the data flows to the reader)
  kGgasWrite,      // gather phase (every rank writes M to the root), sync; allreduce:
                   // broadcast phase (the root writes M to every rank), sync
  kGgasAllgather,  // every rank writes M to every other rank, sync (reduce: as ggas-write)
  kGgasWorkShare,  // every rank writes block j (M/P) to rank j, sync, each reduces its
                   // block; then allreduce: each writes its block to every rank, reduce:
                   // to the root; sync
};
// Non-powers of two for the last two: the ranks beyond the largest power of
// two first send M to rank (r - pof2) and at the end get M back from it
// (allreduce only). Binomial reduce/allreduce work for any P.
void reduce(Programs& p, ReduceAlgo algo, std::uint32_t root, std::int64_t bytes, std::int32_t tag);
void allreduce(Programs& p, ReduceAlgo algo, std::int64_t bytes, std::int32_t tag);
// allreduce(kRecursiveDoubling): log2 P steps, each rank exchanging `bytes`
// with rank ^ 2^i (other P: folded as above).
void allreduceRecursiveDoubling(Programs& p, std::int64_t bytes, std::int32_t tag);
// Ring allgather of per-rank blocks: P-1 steps, block i starts at rank i.
void allgatherRing(Programs& p, const std::vector<std::int64_t>& blockBytes, std::int32_t tag);
// A barrier: allreduce of one byte.
void barrier(Programs& p, std::int32_t tag);

// ---- named choice (trace replay and `ebb gen`) ----
enum class AlltoallAlgo : std::uint8_t { kPairwise, kSocketPhased, kBruck };
enum class AllgatherAlgo : std::uint8_t { kRing, kBruck };
enum class BcastAlgo : std::uint8_t { kBinomial, kScatterAllgather };
enum class RootedAlgo : std::uint8_t { kLinear, kSegmented };  // gather and scatter
struct CollectiveAlgos {
  AlltoallAlgo alltoall = AlltoallAlgo::kPairwise;
  BcastAlgo bcast = BcastAlgo::kBinomial;
  RootedAlgo gather = RootedAlgo::kLinear;
  RootedAlgo scatter = RootedAlgo::kLinear;
  ReduceAlgo reduce = ReduceAlgo::kBinomial;
  ReduceAlgo allreduce = ReduceAlgo::kRecursiveDoubling;
  AllgatherAlgo allgather = AllgatherAlgo::kRing;
  ReduceScatterAlgo reduceScatter = ReduceScatterAlgo::kRing;
  std::uint32_t coresPerNode = 8;  // socket-phased alltoall
  std::int64_t m1 = 5 * 1024;      // seed 002's thresholds (its measured platforms)
  std::int64_t m2 = 64 * 1024;
  std::int64_t s = 64 * 1024;
};
// Sets the algorithm of one operation by name, e.g. ("allreduce", "ring").
// Names: alltoall pairwise|socket-phased|bruck; bcast binomial|scatter-allgather;
// gather, scatter linear|segmented; reduce, allreduce gather-to-root|binomial|
// ring|recursive-doubling|reduce-scatter-allgather|ggas-read|ggas-write|
// ggas-allgather|ggas-work-share; allgather ring|bruck; reduce_scatter ring|
// recursive-halving; alltoallv pairwise. E_INVALID lists the choices.
Status setAlgorithm(CollectiveAlgos& algos, const std::string& op, const std::string& name);
// "op=name,op=name" (the command line's --collectives).
Status parseAlgorithms(CollectiveAlgos& algos, const std::string& list);

// One collective by name with the chosen algorithm (ops: alltoall, alltoallv,
// allgather, reduce_scatter, bcast, gather, scatter, reduce, allreduce,
// barrier); root 0 where it has one. `bytes`: per destination (alltoall, the
// mean for alltoallv), per rank (allgather, bcast, gather, scatter), the
// vector (reduce, allreduce, reduce_scatter).
Status expandCollective(Programs& p, const CollectiveAlgos& algos, const std::string& op,
                        std::int64_t bytes, std::int32_t tag, std::uint32_t root = 0);
// The cost before the work: the messages one instance of `op` sends on `ranks`
// ranks, at least (exact for the algorithms that send between every pair:
// P(P-1); P-1 for the others, within a log P factor of the truth). Checked
// before an instance is built: a pairwise alltoall on 32 768 ranks is a
// billion operations.
std::uint64_t collectiveMessagesAtLeast(const CollectiveAlgos& algos, const std::string& op,
                                        std::uint32_t ranks);
// The same on a communicator of some of the ranks of `p`: members[i] is the
// rank of `p` that is rank i of the communicator, `root` a communicator rank.
// Only the members' programs grow, with their peers translated to ranks of
// `p`. E_INVALID for no members, a member beyond `p` or named twice, or a root
// beyond the members.
Status expandCollectiveOver(Programs& p, const std::vector<std::uint32_t>& members,
                            const CollectiveAlgos& algos, const std::string& op, std::int64_t bytes,
                            std::int32_t tag, std::uint32_t root = 0);

}  // namespace ebb::workload
