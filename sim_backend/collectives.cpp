#include "sim_backend/collectives.h"

namespace ebb::sim {

namespace {

MpiOp send(std::uint32_t peer, std::int64_t bytes, std::int32_t tag) {
  return {MpiOpKind::kIsend, 0, peer, bytes, tag, 0};
}
MpiOp recv(std::uint32_t peer, std::int64_t bytes, std::int32_t tag) {
  return {MpiOpKind::kIrecv, 0, peer, bytes, tag, 0};
}
MpiOp waitall(std::uint32_t n) {
  return {MpiOpKind::kWaitall, 0, 0, 0, 0, n};
}

std::uint32_t size(const Programs& p) {
  return static_cast<std::uint32_t>(p.size());
}

// Binomial reduce toward relative rank 0 (the mirror of the bcast).
void reduceBinomial(Programs& p, std::uint32_t root, std::int64_t bytes, std::int32_t tag) {
  const std::uint32_t n = size(p);
  for (std::uint32_t r = 0; r < n; ++r) {
    const std::uint32_t v = (r + n - root) % n;
    auto& ops = p[r];
    std::uint32_t mask = 1;
    while (mask < n) {
      if (v & mask) {
        ops.push_back(send((v - mask + root) % n, bytes, tag));
        ops.push_back(waitall(1));
        break;
      }
      if (v + mask < n) {
        ops.push_back(recv((v + mask + root) % n, bytes, tag));
        ops.push_back(waitall(1));
      }
      mask <<= 1;
    }
  }
}

}  // namespace

void alltoallPairwise(Programs& p, std::int64_t bytes, std::int32_t tag) {
  const std::uint32_t n = size(p);
  std::vector<std::vector<std::int64_t>> sizes(n, std::vector<std::int64_t>(n, bytes));
  alltoallvPairwise(p, sizes, tag);
}

void alltoallvPairwise(Programs& p, const std::vector<std::vector<std::int64_t>>& sizes,
                       std::int32_t tag) {
  const std::uint32_t n = size(p);
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::uint32_t s = 1; s < n; ++s) {
      const std::uint32_t to = (r + s) % n;
      const std::uint32_t from = (r + n - s) % n;
      p[r].push_back(send(to, sizes[r][to], tag));
      p[r].push_back(recv(from, sizes[from][r], tag));
      p[r].push_back(waitall(2));
    }
  }
}

void bcastBinomial(Programs& p, std::uint32_t root, std::int64_t bytes, std::int32_t tag) {
  const std::uint32_t n = size(p);
  for (std::uint32_t r = 0; r < n; ++r) {
    const std::uint32_t v = (r + n - root) % n;
    auto& ops = p[r];
    std::uint32_t mask = 1;
    while (mask < n) {
      if (v & mask) {
        ops.push_back(recv((v - mask + root) % n, bytes, tag));
        ops.push_back(waitall(1));
        break;
      }
      mask <<= 1;
    }
    std::uint32_t sends = 0;
    for (mask >>= 1; mask > 0; mask >>= 1) {
      if (v + mask < n) {
        ops.push_back(send((v + mask + root) % n, bytes, tag));
        ++sends;
      }
    }
    if (sends) ops.push_back(waitall(sends));
  }
}

void allreduceRecursiveDoubling(Programs& p, std::int64_t bytes, std::int32_t tag) {
  const std::uint32_t n = size(p);
  if (n < 2) return;
  if ((n & (n - 1)) != 0) {
    reduceBinomial(p, 0, bytes, tag);
    bcastBinomial(p, 0, bytes, tag);
    return;
  }
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::uint32_t mask = 1; mask < n; mask <<= 1) {
      p[r].push_back(send(r ^ mask, bytes, tag));
      p[r].push_back(recv(r ^ mask, bytes, tag));
      p[r].push_back(waitall(2));
    }
  }
}

void gatherLinear(Programs& p, std::uint32_t root, std::int64_t bytes, std::int32_t tag) {
  const std::uint32_t n = size(p);
  for (std::uint32_t r = 0; r < n; ++r) {
    if (r == root) {
      for (std::uint32_t s = 0; s < n; ++s) {
        if (s != root) p[r].push_back(recv(s, bytes, tag));
      }
      if (n > 1) p[r].push_back(waitall(n - 1));
    } else {
      p[r].push_back(send(root, bytes, tag));
      p[r].push_back(waitall(1));
    }
  }
}

void scatterLinear(Programs& p, std::uint32_t root, std::int64_t bytes, std::int32_t tag) {
  const std::uint32_t n = size(p);
  for (std::uint32_t r = 0; r < n; ++r) {
    if (r == root) {
      for (std::uint32_t s = 0; s < n; ++s) {
        if (s != root) p[r].push_back(send(s, bytes, tag));
      }
      if (n > 1) p[r].push_back(waitall(n - 1));
    } else {
      p[r].push_back(recv(root, bytes, tag));
      p[r].push_back(waitall(1));
    }
  }
}

void barrier(Programs& p, std::int32_t tag) {
  allreduceRecursiveDoubling(p, 1, tag);
}

}  // namespace ebb::sim
