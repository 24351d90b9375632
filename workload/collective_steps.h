#pragma once

// The building blocks of the collective algorithms (collectives.cpp,
// collectives_extra.cpp): point-to-point ops, block sizes, and a step (a
// rank's sends and receives, then a wait for all of them). Internal to
// workload/.

#include <cstdint>
#include <vector>

#include "workload/collectives.h"

namespace ebb::workload::steps {

inline MpiOp send(std::uint32_t peer, std::int64_t bytes, std::int32_t tag) {
  return {MpiOpKind::kIsend, 0, peer, bytes, tag, 0};
}
inline MpiOp recv(std::uint32_t peer, std::int64_t bytes, std::int32_t tag) {
  return {MpiOpKind::kIrecv, 0, peer, bytes, tag, 0};
}
inline MpiOp waitall(std::uint32_t n) {
  return {MpiOpKind::kWaitall, 0, 0, 0, 0, n};
}

inline std::uint32_t size(const Programs& p) {
  return static_cast<std::uint32_t>(p.size());
}

// Block i of `bytes` split over n ranks.
inline std::int64_t block(std::int64_t bytes, std::uint32_t n, std::uint32_t i) {
  const auto nn = static_cast<std::int64_t>(n);
  return bytes / nn + (static_cast<std::int64_t>(i) < bytes % nn ? 1 : 0);
}

inline std::vector<std::int64_t> blocks(std::int64_t bytes, std::uint32_t n) {
  std::vector<std::int64_t> b(n);
  for (std::uint32_t i = 0; i < n; ++i)
    b[i] = block(bytes, n, i);
  return b;
}

inline std::uint32_t largestPowerOfTwo(std::uint32_t n) {
  std::uint32_t p = 1;
  while (p * 2 <= n)
    p *= 2;
  return p;
}

// One step of a rank: post sends and receives, then wait for all of them.
struct Step {
  std::vector<MpiOp> ops;
  void to(std::uint32_t peer, std::int64_t bytes, std::int32_t tag) {
    ops.push_back(send(peer, bytes, tag));
  }
  void from(std::uint32_t peer, std::int64_t bytes, std::int32_t tag) {
    ops.push_back(recv(peer, bytes, tag));
  }
  void flush(std::vector<MpiOp>& prog) {
    if (ops.empty()) return;
    const auto n = static_cast<std::uint32_t>(ops.size());
    prog.insert(prog.end(), ops.begin(), ops.end());
    prog.push_back(waitall(n));
    ops.clear();
  }
};

// Gather of per-rank sizes to root (linear; sizes[r] from rank r).
inline void gatherSizes(Programs& p, std::uint32_t root, const std::vector<std::int64_t>& sizes,
                        std::int32_t tag) {
  const std::uint32_t n = size(p);
  for (std::uint32_t r = 0; r < n; ++r) {
    Step st;
    if (r == root) {
      for (std::uint32_t s = 0; s < n; ++s) {
        if (s != root) st.from(s, sizes[s], tag);
      }
    } else {
      st.to(root, sizes[r], tag);
    }
    st.flush(p[r]);
  }
}

// Ring reduce-scatter: after P-1 steps rank r holds reduced block (r+1)%P.
inline void reduceScatterRing(Programs& p, std::int64_t bytes, std::int32_t tag) {
  const std::uint32_t n = size(p);
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::uint32_t s = 0; s + 1 < n; ++s) {
      Step st;
      st.to((r + 1) % n, block(bytes, n, (r + n - s) % n), tag);
      st.from((r + n - 1) % n, block(bytes, n, (r + 2 * n - s - 1) % n), tag);
      st.flush(p[r]);
    }
  }
}

// The GGAS reduce (all = false) and allreduce (all = true) of seed 003
// (collectives_extra.cpp); `algo` is one of the kGgas* values.
void ggasReduce(Programs& p, ReduceAlgo algo, std::uint32_t root, std::int64_t bytes,
                std::int32_t tag, bool all);

}  // namespace ebb::workload::steps
