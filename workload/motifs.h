#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "common/time.h"
#include "workload/collectives.h"
#include "workload/mpi_trace.h"

namespace ebb::workload {

// Communication motifs (docs/traffic.md, "Motifs"): parameterised skeletons
// of the communication of seed 004's applications, as closed-loop programs
// for any number of ranks. Weak scaling: every rank owns a cube of `cells`^3
// grid cells, so per-rank message sizes stay fixed as N grows (FFT's shrink
// with its communicators) and the ranks form a near-cubic grid (gridOf).
enum class Motif : std::uint8_t {
  kHalo3d,     // 6 face neighbours, then 2 allreduces of 8 bytes (miniFE, HPCCG: CG)
  kHalo3d26,   // 26 neighbours (faces, edges, corners), then 1 allreduce (LULESH)
  kSweep3d,    // wavefronts of 8 octants over a 2-D rank grid (Kripke, Sweep3D)
  kMultigrid,  // V-cycles: halos on coarsening levels, coarse gather (AMG)
  kFft3d,      // 2-D pencils: alltoall in rows, then in columns (P3DFFT, SWFFT)
  kParticles,  // 3-stage ghost exchange, migration to varying neighbours (ExaMiniMD)
};

// The most iterations of a generated program (a motif or a collective loop):
// each iteration's messages get a tag of their own, a negative int32.
inline constexpr std::uint32_t kMaxIterations = 1'000'000;
// The most MPI operations one generated program may hold (about 40 bytes
// each): beyond it, fewer iterations or ranks, not an allocation failure.
inline constexpr std::uint64_t kMaxProgramOps = 100'000'000;

// All operations of `t`, over every rank.
std::uint64_t opCount(const MpiTrace& t);

struct MotifParams {
  Motif motif = Motif::kHalo3d;
  std::uint32_t ranks = 8;
  std::uint32_t iterations = 10;
  std::uint32_t cells = 32;         // edge of each rank's cube of cells
  std::int64_t bytesPerCell = 0;    // per face cell sent; 0: the motif's default
  TimePs computePerIteration = -1;  // -1: cells^3 x flopsPerCell / flopsPerS
  double flopsPerCell = 0;          // 0: the motif's default
  double flopsPerS = 1e10;
  std::uint32_t levels = 4;           // multigrid: levels of the V-cycle
  std::uint32_t zBlocks = 4;          // sweep: blocks along z per octant
  std::uint32_t octantsInFlight = 2;  // sweep: octants whose sends may be outstanding
  std::uint32_t migrateEvery = 10;    // particles: a migration every this many iterations
  std::uint64_t seed = 1;             // particles: sizes and migration neighbours
  CollectiveAlgos algos;              // allreduce, alltoall, gather, bcast
};

// The names of the config and the command line: halo3d, halo3d26, sweep3d,
// multigrid, fft3d, particles.
Result<Motif> parseMotif(const std::string& name);
const char* motifName(Motif m);
// What the motif sends per face cell by default (bytes) and computes per cell
// per iteration (flops), each documented in docs/traffic.md.
std::int64_t defaultBytesPerCell(Motif m);
double defaultFlopsPerCell(Motif m);

// The near-cubic 3-D grid of n ranks (MPI_Dims_create's rule: the factors as
// close to each other as can be, largest first); rank r is at
// (r % dx, (r / dx) % dy, r / (dx * dy)).
std::array<std::uint32_t, 3> gridOf(std::uint32_t n);
// The same in 2-D (sweep and FFT pencils).
std::array<std::uint32_t, 2> grid2Of(std::uint32_t n);

// The parameters' rules, without generating anything: E_INVALID names the
// parameter and the rule (ranks >= 2, cells >= 1, iterations >= 1, sizes and
// compute times that fit, ...).
Status checkMotif(const MotifParams& p);
// The motif's program, rank by rank (checkMotif first).
Result<MpiTrace> generateMotif(const MotifParams& p);

}  // namespace ebb::workload
