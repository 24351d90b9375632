#include "workload/motifs.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/hash.h"
#include "workload/collective_steps.h"

namespace ebb::workload {

namespace {

struct Named {
  Motif motif;
  const char* name;
  std::int64_t bytesPerCell;  // per face cell (docs/traffic.md, "Motifs")
  double flopsPerCell;        // per cell and iteration
};

constexpr Named kMotifs[] = {
    {Motif::kHalo3d, "halo3d", 8, 60},          // one double per boundary node; 27-point CG
    {Motif::kHalo3d26, "halo3d26", 24, 1200},   // 3 nodal fields; a Lagrange step per element
    {Motif::kSweep3d, "sweep3d", 64, 400},      // 8 angles x 1 group of doubles per face cell
    {Motif::kMultigrid, "multigrid", 8, 100},   // one double per node; smoothing + residual
    {Motif::kFft3d, "fft3d", 16, 90},           // a complex double per point; 3 x 5 N log N
    {Motif::kParticles, "particles", 24, 600},  // 3 doubles per ghost atom; force loop
};

const Named& named(Motif m) {
  for (const Named& n : kMotifs) {
    if (n.motif == m) return n;
  }
  return kMotifs[0];
}

// A deterministic draw in [0, 1) from the seed and what names the message,
// so that sender and receiver agree without talking.
double draw(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return unitDraw(splitmix64(splitmix64(splitmix64(seed ^ a) ^ b) ^ c));
}

void compute(std::vector<MpiOp>& ops, TimePs d) {
  if (d <= 0) return;
  MpiOp op;
  op.kind = MpiOpKind::kCompute;
  op.duration = d;
  ops.push_back(op);
}

void computeAll(Programs& p, TimePs d) {
  for (auto& ops : p)
    compute(ops, d);
}

// A blocking receive (the sweep's; collective_steps.h has the others).
MpiOp blockingRecv(std::uint32_t peer, std::int64_t bytes, std::int32_t tag) {
  return {MpiOpKind::kRecv, 0, peer, bytes, tag, 0};
}

// What the parameters leave to the motif's defaults, resolved in one place.
std::int64_t bytesPerCellOf(const MotifParams& p) {
  return p.bytesPerCell > 0 ? p.bytesPerCell : defaultBytesPerCell(p.motif);
}
double flopsPerCellOf(const MotifParams& p) {
  return p.flopsPerCell > 0 ? p.flopsPerCell : defaultFlopsPerCell(p.motif);
}
// The flops model's compute per iteration, in picoseconds (may exceed int64:
// checkMotif refuses that).
double modelComputePs(const MotifParams& p) {
  return std::pow(static_cast<double>(p.cells), 3) * flopsPerCellOf(p) / p.flopsPerS * 1e12;
}

// One exchange step of a rank: receives posted first, then sends, then a
// wait for all of them (the rank has nothing else outstanding).
struct Exchange {
  steps::Step sends, recvs;
  void flush(std::vector<MpiOp>& ops) {
    recvs.ops.insert(recvs.ops.end(), sends.ops.begin(), sends.ops.end());
    recvs.flush(ops);
    sends.ops.clear();
  }
};

using Coord = std::array<std::int64_t, 3>;

struct Grid3 {
  std::array<std::uint32_t, 3> dims;
  Coord at(std::uint32_t r) const {
    return {r % dims[0], (r / dims[0]) % dims[1], r / (dims[0] * dims[1])};
  }
  // The rank at c + off, or -1 outside the grid (periodic: wrapped).
  std::int64_t rankAt(const Coord& c, const Coord& off, bool periodic) const {
    Coord n{};
    for (std::size_t d = 0; d < 3; ++d) {
      const auto size = static_cast<std::int64_t>(dims[d]);
      n[d] = c[d] + off[d];
      if (periodic) {
        n[d] = ((n[d] % size) + size) % size;
      } else if (n[d] < 0 || n[d] >= size) {
        return -1;
      }
    }
    const auto dx = static_cast<std::int64_t>(dims[0]), dy = static_cast<std::int64_t>(dims[1]);
    return n[0] + dx * (n[1] + dy * n[2]);
  }
};

// The 26 neighbour offsets (faces first: one coordinate nonzero, then edges,
// then corners), or the 6 faces.
std::vector<Coord> offsets(bool all26) {
  std::vector<Coord> out;
  for (int nonzero = 1; nonzero <= (all26 ? 3 : 1); ++nonzero) {
    for (std::int64_t z = -1; z <= 1; ++z) {
      for (std::int64_t y = -1; y <= 1; ++y) {
        for (std::int64_t x = -1; x <= 1; ++x) {
          if ((x != 0) + (y != 0) + (z != 0) == nonzero) out.push_back({x, y, z});
        }
      }
    }
  }
  return out;
}

// A halo exchange over the given offsets: rank r sends to r + o the message
// of offset o (tag base + its index) and receives from r - o; sizes by how
// many coordinates of o are zero (face, edge, corner).
void halo(Programs& p, const Grid3& g, const std::vector<Coord>& offs, bool periodic,
          std::int64_t cells, std::int64_t bytesPerCell, std::int32_t tagBase) {
  const auto size = [&](const Coord& o) {
    const int zeros = (o[0] == 0) + (o[1] == 0) + (o[2] == 0);
    std::int64_t n = 1;
    for (int k = 0; k < zeros; ++k)
      n *= cells;
    return std::max<std::int64_t>(1, n * bytesPerCell);
  };
  for (std::uint32_t r = 0; r < p.size(); ++r) {
    Exchange ex;
    const Coord c = g.at(r);
    for (std::size_t i = 0; i < offs.size(); ++i) {
      const Coord& o = offs[i];
      const auto tag = static_cast<std::int32_t>(tagBase + static_cast<std::int32_t>(i));
      const std::int64_t to = g.rankAt(c, o, periodic);
      const std::int64_t from = g.rankAt(c, {-o[0], -o[1], -o[2]}, periodic);
      if (to >= 0 && to != r) ex.sends.to(static_cast<std::uint32_t>(to), size(o), tag);
      if (from >= 0 && from != r) ex.recvs.from(static_cast<std::uint32_t>(from), size(o), tag);
    }
    ex.flush(p[r]);
  }
}

// Runs `fn` on a sub-communicator: programs of its members, peers renumbered
// back to the whole job's ranks.
template <class F>
Status onGroup(Programs& p, const std::vector<std::uint32_t>& members, F&& fn) {
  Programs sub(members.size());
  if (Status s = fn(sub); !s.isOk()) return s;
  for (std::size_t i = 0; i < members.size(); ++i) {
    for (MpiOp op : sub[i]) {
      if (op.kind != MpiOpKind::kCompute && op.kind != MpiOpKind::kWaitall &&
          op.kind != MpiOpKind::kWait) {
        op.peer = members[op.peer];
      }
      p[members[i]].push_back(op);
    }
  }
  return Status::ok();
}

class Builder {
 public:
  Builder(const MotifParams& p, Programs& prog)
      : p_(p),
        prog_(prog),
        bpc_(bytesPerCellOf(p)),
        compute_(p.computePerIteration >= 0
                     ? p.computePerIteration
                     : static_cast<TimePs>(std::llround(modelComputePs(p)))) {}

  Status build() {
    for (std::uint32_t it = 0; it < p_.iterations; ++it) {
      if (Status s = iteration(it); !s.isOk()) return s;
    }
    return Status::ok();
  }

 private:
  std::int32_t collectiveTag() { return -(++collectives_); }

  Status allreduce8() { return expandCollective(prog_, p_.algos, "allreduce", 8, collectiveTag()); }

  Status iteration(std::uint32_t it) {
    switch (p_.motif) {
      case Motif::kHalo3d:
        return haloIteration(false, 2);
      case Motif::kHalo3d26:
        return haloIteration(true, 1);
      case Motif::kSweep3d:
        return sweepIteration();
      case Motif::kMultigrid:
        return multigridIteration();
      case Motif::kFft3d:
        return fftIteration();
      case Motif::kParticles:
        return particlesIteration(it);
    }
    return Status::ok();
  }

  // CG (miniFE): the matvec's halo, the matvec, two dot products. LULESH: the
  // 26-neighbour exchange, the Lagrange step, the time-step minimum.
  Status haloIteration(bool all26, int allreduces) {
    const Grid3 g{gridOf(p_.ranks)};
    halo(prog_, g, offsets(all26), false, p_.cells, bpc_, 0);
    computeAll(prog_, compute_);
    for (int k = 0; k < allreduces; ++k) {
      if (Status s = allreduce8(); !s.isOk()) return s;
    }
    return Status::ok();
  }

  // Kripke / Sweep3D: ranks on a 2-D grid, each owning a column of cells
  // split into zBlocks blocks. Per octant (sx, sy, sz) and block, a rank
  // waits for the block's faces from its upstream neighbours in x and y
  // (blocking receives), computes it, and sends its downstream faces without
  // waiting; the sends of an octant are waited for octantsInFlight octants
  // later, so that many octants' wavefronts cross the grid at once.
  Status sweepIteration() {
    const auto dims = grid2Of(p_.ranks);
    const std::uint32_t px = dims[0], py = dims[1];
    const std::uint32_t blocks = std::min(p_.zBlocks, p_.cells);
    const std::int64_t depth = std::max<std::int64_t>(1, p_.cells / blocks);
    const std::int64_t face = p_.cells * depth * bpc_;
    const TimePs perBlock = compute_ / (8 * static_cast<TimePs>(blocks));
    for (std::uint32_t r = 0; r < p_.ranks; ++r) {
      const std::int64_t x = r % px, y = r / px;
      std::vector<std::uint32_t> sendsOf;  // per octant
      auto& ops = prog_[r];
      for (std::uint32_t oct = 0; oct < 8; ++oct) {
        const std::int64_t sx = (oct & 1) ? -1 : 1, sy = (oct & 2) ? -1 : 1;
        if (oct >= p_.octantsInFlight && sendsOf[oct - p_.octantsInFlight] > 0)
          ops.push_back(steps::waitall(sendsOf[oct - p_.octantsInFlight]));
        std::uint32_t sends = 0;
        const auto tag = static_cast<std::int32_t>(oct);
        const auto rankOf = [&](std::int64_t cx, std::int64_t cy) -> std::int64_t {
          if (cx < 0 || cy < 0 || cx >= std::int64_t{px} || cy >= std::int64_t{py}) return -1;
          return cx + cy * static_cast<std::int64_t>(px);
        };
        const std::int64_t upX = rankOf(x - sx, y), upY = rankOf(x, y - sy);
        const std::int64_t downX = rankOf(x + sx, y), downY = rankOf(x, y + sy);
        for (std::uint32_t b = 0; b < blocks; ++b) {
          if (upX >= 0) ops.push_back(blockingRecv(static_cast<std::uint32_t>(upX), face, tag));
          if (upY >= 0) ops.push_back(blockingRecv(static_cast<std::uint32_t>(upY), face, tag));
          compute(ops, perBlock);
          if (downX >= 0) {
            ops.push_back(steps::send(static_cast<std::uint32_t>(downX), face, tag));
            ++sends;
          }
          if (downY >= 0) {
            ops.push_back(steps::send(static_cast<std::uint32_t>(downY), face, tag));
            ++sends;
          }
        }
        sendsOf.push_back(sends);
      }
      std::uint32_t left = 0;
      for (std::uint32_t oct = 8 - std::min<std::uint32_t>(8, p_.octantsInFlight); oct < 8; ++oct)
        left += sendsOf[oct];
      if (left > 0) ops.push_back(steps::waitall(left));
    }
    return allreduce8();  // the iteration's particle edit
  }

  // AMG: a V-cycle over `levels` levels, the cube's edge halved per level.
  // Down: smooth (halo + compute) and restrict; the coarsest grid is gathered
  // to rank 0, solved there and scattered back; up: interpolate and smooth.
  // Then the residual norm (allreduce).
  Status multigridIteration() {
    const Grid3 g{gridOf(p_.ranks)};
    const auto offs = offsets(false);
    std::vector<std::int64_t> edge;
    double work = 0;
    for (std::uint32_t l = 0; l < p_.levels; ++l) {
      edge.push_back(std::max<std::int64_t>(1, static_cast<std::int64_t>(p_.cells) >> l));
      work += 2 * std::pow(static_cast<double>(edge.back()), 3);
    }
    const auto smooth = [&](std::uint32_t l) {
      halo(prog_, g, offs, false, edge[l], bpc_, static_cast<std::int32_t>(8 * l));
      const double share = std::pow(static_cast<double>(edge[l]), 3) / work;
      computeAll(prog_, static_cast<TimePs>(std::llround(static_cast<double>(compute_) * share)));
    };
    for (std::uint32_t l = 0; l < p_.levels; ++l)
      smooth(l);
    // The grid below the coarsest smoothed level: at least one cell per rank.
    const std::int64_t c =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(p_.cells) >> p_.levels);
    const std::int64_t coarse = c * c * c * bpc_;
    if (Status s = expandCollective(prog_, p_.algos, "gather", coarse, collectiveTag());
        !s.isOk()) {
      return s;
    }
    compute(prog_[0], compute_ / 10);  // the coarse solve, on rank 0
    if (Status s = expandCollective(prog_, p_.algos, "scatter", coarse, collectiveTag());
        !s.isOk()) {
      return s;
    }
    for (std::uint32_t l = p_.levels; l-- > 0;)
      smooth(l);
    return allreduce8();
  }

  // A forward and an inverse 3-D FFT on 2-D pencils (pr x pc ranks): 1-D
  // transforms, an alltoall in each row, 1-D transforms, an alltoall in each
  // column, 1-D transforms; then the same back.
  Status fftIteration() {
    const auto dims = grid2Of(p_.ranks);
    const std::uint32_t pc = dims[0], pr = dims[1];
    const std::int64_t volume = static_cast<std::int64_t>(p_.cells) * p_.cells * p_.cells * bpc_;
    const TimePs third = compute_ / 6;
    const auto transpose = [&](bool rows) -> Status {
      const std::uint32_t groups = rows ? pr : pc, size = rows ? pc : pr;
      if (size < 2) return Status::ok();
      const std::int64_t bytes = std::max<std::int64_t>(1, volume / size);
      const std::int32_t tag = collectiveTag();
      for (std::uint32_t grp = 0; grp < groups; ++grp) {
        std::vector<std::uint32_t> members;
        for (std::uint32_t k = 0; k < size; ++k)
          members.push_back(rows ? grp * pc + k : k * pc + grp);
        Status s = onGroup(prog_, members, [&](Programs& sub) {
          return expandCollective(sub, p_.algos, "alltoall", bytes, tag);
        });
        if (!s.isOk()) return s;
      }
      return Status::ok();
    };
    for (int direction = 0; direction < 2; ++direction) {
      computeAll(prog_, third);
      if (Status s = transpose(direction == 0); !s.isOk()) return s;
      computeAll(prog_, third);
      if (Status s = transpose(direction != 0); !s.isOk()) return s;
      computeAll(prog_, third);
    }
    return Status::ok();
  }

  // ExaMiniMD: ghost atoms in three stages (x, then y, then z; each to both
  // neighbours of the dimension, periodic), sizes varying by +-25% per
  // message; the force loop; every migrateEvery iterations, atoms that left
  // go to those of the 26 neighbours they moved into (each with probability
  // 1/2, drawn per message), and the energy is summed (allreduce).
  Status particlesIteration(std::uint32_t it) {
    const Grid3 g{gridOf(p_.ranks)};
    const std::int64_t ghost = static_cast<std::int64_t>(p_.cells) * p_.cells * bpc_;
    const auto jitter = [&](std::uint64_t a, std::uint64_t b, std::uint64_t c) {
      return 0.75 + 0.5 * draw(p_.seed, a, b, c);
    };
    for (std::uint32_t dim = 0; dim < 3; ++dim) {
      for (std::uint32_t r = 0; r < p_.ranks; ++r) {
        Exchange ex;
        const Coord c = g.at(r);
        for (std::int64_t sign : {-1, 1}) {
          Coord o{0, 0, 0};
          o[dim] = sign;
          const auto tag = static_cast<std::int32_t>(2 * dim + (sign > 0 ? 1 : 0));
          const std::int64_t to = g.rankAt(c, o, true);
          const std::int64_t from = g.rankAt(c, {-o[0], -o[1], -o[2]}, true);
          // The message of (iteration, sender, tag): the receiver draws the same.
          const auto bytes = [&](std::int64_t src) {
            return std::max<std::int64_t>(1,
                                          std::llround(static_cast<double>(ghost) *
                                                       jitter(it, static_cast<std::uint64_t>(src),
                                                              static_cast<std::uint64_t>(tag))));
          };
          if (to != r) ex.sends.to(static_cast<std::uint32_t>(to), bytes(r), tag);
          if (from != r) ex.recvs.from(static_cast<std::uint32_t>(from), bytes(from), tag);
        }
        ex.flush(prog_[r]);
      }
    }
    computeAll(prog_, compute_);
    if (p_.migrateEvery == 0 || (it + 1) % p_.migrateEvery != 0) return Status::ok();
    const auto offs = offsets(true);
    const std::int64_t moved =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(p_.cells) * bpc_);
    for (std::uint32_t r = 0; r < p_.ranks; ++r) {
      Exchange ex;
      const Coord c = g.at(r);
      for (std::size_t i = 0; i < offs.size(); ++i) {
        const Coord& o = offs[i];
        const auto tag = static_cast<std::int32_t>(16 + i);
        const std::int64_t to = g.rankAt(c, o, true);
        const std::int64_t from = g.rankAt(c, {-o[0], -o[1], -o[2]}, true);
        const auto sends = [&](std::int64_t src) {
          return draw(p_.seed ^ 0x5EEDull, it, static_cast<std::uint64_t>(src), i) < 0.5;
        };
        const auto bytes = [&](std::int64_t src) {
          return std::max<std::int64_t>(
              1, std::llround(static_cast<double>(moved) *
                              jitter(it + 0x10000u, static_cast<std::uint64_t>(src), i)));
        };
        if (to != r && sends(r)) ex.sends.to(static_cast<std::uint32_t>(to), bytes(r), tag);
        if (from != r && sends(from))
          ex.recvs.from(static_cast<std::uint32_t>(from), bytes(from), tag);
      }
      ex.flush(prog_[r]);
    }
    return allreduce8();
  }

  const MotifParams& p_;
  Programs& prog_;
  std::int64_t bpc_;
  TimePs compute_ = 0;
  std::int32_t collectives_ = 0;
};

}  // namespace

Result<Motif> parseMotif(const std::string& name) {
  for (const Named& n : kMotifs) {
    if (name == n.name) return n.motif;
  }
  return invalidArgument(fmt::format(
      "unknown motif '{}' (halo3d, halo3d26, sweep3d, multigrid, fft3d, particles)", name));
}

const char* motifName(Motif m) {
  return named(m).name;
}

std::int64_t defaultBytesPerCell(Motif m) {
  return named(m).bytesPerCell;
}

double defaultFlopsPerCell(Motif m) {
  return named(m).flopsPerCell;
}

std::array<std::uint32_t, 3> gridOf(std::uint32_t n) {
  // Prime factors, largest first, each to the dimension with the smallest
  // product so far: MPI_Dims_create's balanced result for these sizes.
  std::vector<std::uint32_t> factors;
  for (std::uint32_t f = 2, m = n; m > 1;) {
    if (m % f == 0) {
      factors.push_back(f);
      m /= f;
    } else {
      f = f * f > m ? m : f + 1;
    }
  }
  std::sort(factors.rbegin(), factors.rend());
  std::array<std::uint32_t, 3> d{1, 1, 1};
  for (std::uint32_t f : factors)
    *std::min_element(d.begin(), d.end()) *= f;
  std::sort(d.rbegin(), d.rend());
  return d;
}

std::array<std::uint32_t, 2> grid2Of(std::uint32_t n) {
  std::uint32_t a = static_cast<std::uint32_t>(std::sqrt(static_cast<double>(n)));
  while (a > 1 && n % a != 0)
    --a;
  return {n / a, a};
}

Status checkMotif(const MotifParams& p) {
  const auto rule = [](const char* field, std::int64_t v, std::int64_t lo, std::int64_t hi) {
    return v < lo || v > hi
               ? invalidArgument(fmt::format("{}: must be in [{}, {}] (is {})", field, lo, hi, v))
               : Status::ok();
  };
  for (const Status& s :
       {rule("ranks", p.ranks, 2, 1 << 20), rule("iterations", p.iterations, 1, kMaxIterations),
        rule("cells", p.cells, 1, 4096), rule("levels", p.levels, 1, 16),
        rule("z_blocks", p.zBlocks, 1, 4096), rule("octants_in_flight", p.octantsInFlight, 1, 8),
        rule("bytes_per_cell", p.bytesPerCell, 0, std::int64_t{1} << 30)}) {
    if (!s.isOk()) return s;
  }
  if (!(p.flopsPerS > 0) || !std::isfinite(p.flopsPerS)) {
    return invalidArgument(fmt::format("flops_per_s: must be > 0 (is {})", p.flopsPerS));
  }
  if (!(p.flopsPerCell >= 0) || !std::isfinite(p.flopsPerCell)) {
    return invalidArgument(fmt::format("flops_per_cell: must be >= 0 (is {})", p.flopsPerCell));
  }
  // Sizes and times in doubles first: nothing derived from them may wrap.
  const double cells3 = std::pow(static_cast<double>(p.cells), 3);
  const double bpc = static_cast<double>(bytesPerCellOf(p));
  if (cells3 * bpc > 0x1.0p52) {
    return invalidArgument(fmt::format(
        "cells^3 x bytes_per_cell: {:.3g} bytes per rank is beyond any message ebb replays",
        cells3 * bpc));
  }
  if (p.computePerIteration < 0) {
    const double ps = modelComputePs(p);
    if (!(ps < 9.2e18)) {
      return invalidArgument(fmt::format(
          "flops_per_cell: cells^3 x {} flops at {} flop/s is {:.3g} s per iteration, beyond "
          "the time range",
          flopsPerCellOf(p), p.flopsPerS, ps * 1e-12));
    }
  }
  return Status::ok();
}

std::uint64_t opCount(const MpiTrace& t) {
  std::uint64_t n = 0;
  for (const auto& ops : t.ranks)
    n += ops.size();
  return n;
}

Result<MpiTrace> generateMotif(const MotifParams& p) {
  if (Status s = checkMotif(p); !s.isOk()) return s;
  if (p.iterations > 1) {
    // The size before the work: one iteration, times how many.
    MotifParams one = p;
    one.iterations = 1;
    Result<MpiTrace> probe = generateMotif(one);
    if (!probe) return probe.status();
    const double ops = static_cast<double>(opCount(*probe)) * p.iterations;
    if (ops > static_cast<double>(kMaxProgramOps)) {
      return invalidArgument(fmt::format(
          "iterations: {} iterations on {} ranks are about {:.3g} MPI operations, more than the "
          "{} ebb builds for one job: fewer iterations or ranks",
          p.iterations, p.ranks, ops, kMaxProgramOps));
    }
  }
  MpiTrace t;
  t.ranks.resize(p.ranks);
  Builder b(p, t.ranks);
  if (Status s = b.build(); !s.isOk()) return s;
  t.countOps();
  return t;
}

}  // namespace ebb::workload
