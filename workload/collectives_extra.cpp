// The collectives beyond the seeds' first set: Bruck's alltoall and
// allgather, drawn alltoallv sizes, reduce-scatter, and the GGAS reduce and
// allreduce of Oden et al. (seed 003). docs/traffic.md, "collectives".
#include <algorithm>

#include "common/hash.h"
#include "workload/collective_steps.h"
#include "workload/collectives.h"

namespace ebb::workload {

using namespace steps;  // NOLINT(google-build-using-namespace): the shared building blocks

namespace {

std::uint32_t roundsOf(std::uint32_t n) {
  std::uint32_t k = 0;
  while ((std::uint64_t{1} << k) < n)
    ++k;
  return k;
}

// Every rank sends sizes[r][d] to every other rank d, one pairwise step each.
void pairwise(Programs& p, const std::vector<std::vector<std::int64_t>>& sizes, std::int32_t tag) {
  alltoallvPairwise(p, sizes, tag);
}

std::vector<std::vector<std::int64_t>> square(std::uint32_t n, std::int64_t v) {
  return std::vector<std::vector<std::int64_t>>(n, std::vector<std::int64_t>(n, v));
}

}  // namespace

void alltoallBruck(Programs& p, std::int64_t bytes, std::int32_t tag) {
  const std::uint32_t n = size(p);
  for (std::uint32_t k = 0; k < roundsOf(n); ++k) {
    const std::uint32_t dist = 1u << k;
    std::int64_t count = 0;  // blocks whose relative index has bit k set
    for (std::uint32_t i = 0; i < n; ++i)
      count += (i & dist) != 0 ? 1 : 0;
    for (std::uint32_t r = 0; r < n; ++r) {
      Step st;
      st.to((r + dist) % n, count * bytes, tag);
      st.from((r + n - dist % n) % n, count * bytes, tag);
      st.flush(p[r]);
    }
  }
}

void alltoallvDrawn(Programs& p, std::int64_t bytes, std::uint64_t seed, std::int32_t tag) {
  const std::uint32_t n = size(p);
  auto sizes = square(n, 0);
  for (std::uint32_t s = 0; s < n; ++s) {
    for (std::uint32_t d = 0; d < n; ++d) {
      const double u = unitDraw(splitmix64(splitmix64(seed ^ s) ^ d));
      sizes[s][d] = std::max<std::int64_t>(
          1, static_cast<std::int64_t>(static_cast<double>(bytes) * (0.5 + u) + 0.5));
    }
  }
  pairwise(p, sizes, tag);
}

void allgatherBruck(Programs& p, std::int64_t bytes, std::int32_t tag) {
  const std::uint32_t n = size(p);
  for (std::uint32_t k = 0; k < roundsOf(n); ++k) {
    const std::uint32_t dist = 1u << k;
    const std::int64_t count = std::min<std::int64_t>(dist, n - dist);
    for (std::uint32_t r = 0; r < n; ++r) {
      Step st;
      st.to((r + n - dist) % n, count * bytes, tag);
      st.from((r + dist) % n, count * bytes, tag);
      st.flush(p[r]);
    }
  }
}

void reduceScatter(Programs& p, ReduceScatterAlgo algo, std::int64_t bytes, std::int32_t tag) {
  const std::uint32_t n = size(p);
  if (n < 2) return;
  if (algo == ReduceScatterAlgo::kRing) {
    reduceScatterRing(p, bytes, tag);
    return;
  }
  // Recursive halving on the largest power of two; the ranks beyond it
  // first hand their vector to rank r - pof2, and get their block back.
  const std::uint32_t pof2 = largestPowerOfTwo(n);
  for (std::uint32_t r = pof2; r < n; ++r) {
    Step a, b;
    a.to(r - pof2, bytes, tag);
    b.from(r, bytes, tag);
    a.flush(p[r]);
    b.flush(p[r - pof2]);
  }
  std::vector<std::int64_t> held(pof2, bytes);
  for (std::uint32_t mask = pof2 / 2; mask > 0; mask /= 2) {
    for (std::uint32_t r = 0; r < pof2; ++r) {
      const std::int64_t half = held[r] / 2;
      Step st;
      st.to(r ^ mask, held[r] - half, tag);
      st.from(r ^ mask, held[r ^ mask] - held[r ^ mask] / 2, tag);
      st.flush(p[r]);
    }
    for (std::uint32_t r = 0; r < pof2; ++r)
      held[r] /= 2;
  }
  for (std::uint32_t r = pof2; r < n; ++r) {
    Step a, b;
    a.to(r, block(bytes, n, r), tag);
    b.from(r - pof2, block(bytes, n, r), tag);
    a.flush(p[r - pof2]);
    b.flush(p[r]);
  }
}

// ---- GGAS (seed 003) ----

void steps::ggasReduce(Programs& p, ReduceAlgo algo, std::uint32_t root, std::int64_t bytes,
                       std::int32_t tag, bool all) {
  const std::uint32_t n = size(p);
  switch (algo) {
    case ReduceAlgo::kGgasRead:
      barrier(p, tag);
      if (all) {
        pairwise(p, square(n, bytes), tag);  // every rank reads M from every other
      } else {
        gatherLinear(p, root, bytes, tag);
      }
      return;
    case ReduceAlgo::kGgasAllgather:
      if (all) {
        pairwise(p, square(n, bytes), tag);
        barrier(p, tag);
        return;
      }
      [[fallthrough]];  // reduce: only the root needs the data
    case ReduceAlgo::kGgasWrite:
      gatherLinear(p, root, bytes, tag);
      barrier(p, tag);
      if (all) {
        scatterLinear(p, root, bytes, tag);  // the root writes M to every rank
        barrier(p, tag);
      }
      return;
    case ReduceAlgo::kGgasWorkShare: {
      auto sizes = square(n, 0);
      for (std::uint32_t s = 0; s < n; ++s)
        for (std::uint32_t d = 0; d < n; ++d)
          sizes[s][d] = block(bytes, n, d);  // block d of every vector to rank d
      pairwise(p, sizes, tag);
      barrier(p, tag);
      if (all) {
        for (std::uint32_t s = 0; s < n; ++s)
          for (std::uint32_t d = 0; d < n; ++d)
            sizes[s][d] = block(bytes, n, s);  // rank s's reduced block to everyone
        pairwise(p, sizes, tag);
      } else {
        gatherSizes(p, root, blocks(bytes, n), tag);  // each rank's reduced block
      }
      barrier(p, tag);
      return;
    }
    default:
      return;
  }
}

}  // namespace ebb::workload
