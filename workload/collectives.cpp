#include "workload/collectives.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "workload/collective_steps.h"

namespace ebb::workload {

namespace {

using namespace steps;  // NOLINT(google-build-using-namespace): the shared building blocks

// Binomial reduce toward `root` (the mirror of the bcast).
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

// The pof2 core of Rabenseifner's algorithm on ranks 0..pof2-1 (already
// folded): recursive halving reduce-scatter; `pieces[r]` = bytes rank r holds.
void reduceScatterHalving(Programs& p, std::uint32_t pof2, std::int64_t bytes, std::int32_t tag,
                          std::vector<std::pair<std::int64_t, std::int64_t>>& range) {
  range.assign(pof2, {0, bytes});
  for (std::uint32_t mask = pof2 / 2; mask > 0; mask /= 2) {
    for (std::uint32_t r = 0; r < pof2; ++r) {
      auto& [lo, hi] = range[r];
      const std::int64_t mid = lo + (hi - lo) / 2;
      const bool lower = (r & mask) == 0;
      Step st;
      st.to(r ^ mask, lower ? hi - mid : mid - lo, tag);
      st.from(r ^ mask, lower ? mid - lo : hi - mid, tag);
      st.flush(p[r]);
      (lower ? hi : lo) = mid;
    }
  }
}

// Recursive doubling allgather of the ranges left by reduceScatterHalving.
void allgatherDoubling(Programs& p, std::uint32_t pof2, std::int32_t tag,
                       std::vector<std::pair<std::int64_t, std::int64_t>> range) {
  for (std::uint32_t mask = 1; mask < pof2; mask *= 2) {
    auto next = range;
    for (std::uint32_t r = 0; r < pof2; ++r) {
      const auto mine = range[r];
      const auto theirs = range[r ^ mask];
      Step st;
      st.to(r ^ mask, mine.second - mine.first, tag);
      st.from(r ^ mask, theirs.second - theirs.first, tag);
      st.flush(p[r]);
      next[r] = {std::min(mine.first, theirs.first), std::max(mine.second, theirs.second)};
    }
    range = std::move(next);
  }
}

// Ranks >= pof2 hand their M to rank r - pof2 (before) or get it back (after).
void fold(Programs& p, std::uint32_t pof2, std::int64_t bytes, std::int32_t tag, bool in) {
  for (std::uint32_t r = pof2; r < size(p); ++r) {
    const std::uint32_t partner = r - pof2;
    Step a, b;
    (in ? a.to(partner, bytes, tag) : a.from(partner, bytes, tag));
    (in ? b.from(r, bytes, tag) : b.to(r, bytes, tag));
    a.flush(p[r]);
    b.flush(p[partner]);
  }
}

// Applies `body` to the programs renumbered so that `root` is rank 0.
template <class F>
void rooted(Programs& p, std::uint32_t root, F body) {
  const std::uint32_t n = size(p);
  Programs v(n);
  body(v);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t real = (i + root) % n;
    for (MpiOp op : v[i]) {
      if (op.kind == MpiOpKind::kIsend || op.kind == MpiOpKind::kIrecv) {
        op.peer = (op.peer + root) % n;
      }
      p[real].push_back(op);
    }
  }
}

}  // namespace

// ---- alltoall ----

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

Status alltoallSocketPhased(Programs& p, std::int64_t bytes, std::uint32_t coresPerNode,
                            std::int32_t tag) {
  const std::uint32_t P = size(p);
  const std::uint32_t c = coresPerNode;
  if (c < 2 || c % 2 != 0 || P % c != 0) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("alltoall socket-phased: cores per node ({}) must be even and divide the "
                        "{} ranks",
                        c, P)};
  }
  const std::uint32_t N = P / c;
  const std::uint32_t h = c / 2;  // ranks per socket
  // Token tags stay negative and apart from every collective's own tag.
  const std::int32_t tokenTag = tag - 0x40000000;
  const auto rankOf = [&](std::uint32_t node, std::uint32_t socket, std::uint32_t local) {
    return node * c + socket * h + local;
  };
  // Phase 1: pairwise inside each node.
  for (std::uint32_t r = 0; r < P; ++r) {
    const std::uint32_t base = r / c * c;
    for (std::uint32_t s = 1; s < c; ++s) {
      Step st;
      st.to(base + (r - base + s) % c, bytes, tag);
      st.from(base + (r - base + c - s) % c, bytes, tag);
      st.flush(p[r]);
    }
  }
  // The per-node sequence of socket activations: (socket, exchanges), where an
  // exchange of rank (socket, local) is appended by `work`.
  std::vector<std::uint32_t> active(N, 0);  // after phase 1: A acts next
  const auto handover = [&](std::uint32_t node, std::uint32_t toSocket) {
    if (active[node] == toSocket) return;
    const std::uint32_t fromSocket = active[node];
    for (std::uint32_t l = 0; l < h; ++l) {
      Step give, take;
      for (std::uint32_t m = 0; m < h; ++m) {
        give.to(rankOf(node, toSocket, m), 0, tokenTag);
        take.from(rankOf(node, fromSocket, m), 0, tokenTag);
      }
      give.flush(p[rankOf(node, fromSocket, l)]);
      take.flush(p[rankOf(node, toSocket, l)]);
    }
    active[node] = toSocket;
  };
  // Phases 2 and 3: pairwise over one socket group, off-node partners only.
  for (std::uint32_t socket = 0; socket < 2; ++socket) {
    for (std::uint32_t node = 0; node < N; ++node)
      handover(node, socket);
    const std::uint32_t G = N * h;
    for (std::uint32_t g = 0; g < G; ++g) {
      const std::uint32_t self = rankOf(g / h, socket, g % h);
      for (std::uint32_t s = 1; s < G; ++s) {
        const std::uint32_t to = (g + s) % G;
        const std::uint32_t from = (g + G - s) % G;
        Step st;
        if (to / h != g / h) st.to(rankOf(to / h, socket, to % h), bytes, tag);
        if (from / h != g / h) st.from(rankOf(from / h, socket, from % h), bytes, tag);
        st.flush(p[self]);
      }
    }
  }
  // Phase 4: round-robin pairing of nodes (circle method; node N is a bye).
  const std::uint32_t slots = N % 2 == 0 ? N : N + 1;
  const auto cross = [&](std::uint32_t ni, std::uint32_t si, std::uint32_t nj, std::uint32_t sj) {
    // Socket si of node ni exchanges with socket sj of node nj, h sub-steps.
    for (std::uint32_t l = 0; l < h; ++l) {
      for (std::uint32_t s = 0; s < h; ++s) {
        Step a, b;
        a.to(rankOf(nj, sj, (l + s) % h), bytes, tag);
        a.from(rankOf(nj, sj, (l + h - s) % h), bytes, tag);
        a.flush(p[rankOf(ni, si, l)]);
        b.to(rankOf(ni, si, (l + s) % h), bytes, tag);
        b.from(rankOf(ni, si, (l + h - s) % h), bytes, tag);
        b.flush(p[rankOf(nj, sj, l)]);
      }
    }
  };
  for (std::uint32_t round = 0; round + 1 < slots; ++round) {
    for (std::uint32_t k = 0; k < slots / 2; ++k) {
      // Slot 0 stays; the others rotate.
      const auto at = [&](std::uint32_t pos) {
        return pos == 0 ? 0 : 1 + (pos - 1 + round) % (slots - 1);
      };
      std::uint32_t i = at(k), j = at(slots - 1 - k);
      if (i >= N || j >= N) continue;
      if (i > j) std::swap(i, j);
      handover(i, 0);
      handover(j, 1);
      cross(i, 0, j, 1);
      handover(i, 1);
      handover(j, 0);
      cross(i, 1, j, 0);
    }
  }
  return Status::ok();
}

// ---- bcast ----

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

void allgatherRing(Programs& p, const std::vector<std::int64_t>& blockBytes, std::int32_t tag) {
  const std::uint32_t n = size(p);
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::uint32_t s = 0; s + 1 < n; ++s) {
      Step st;
      st.to((r + 1) % n, blockBytes[(r + n - s) % n], tag);
      st.from((r + n - 1) % n, blockBytes[(r + 2 * n - s - 1) % n], tag);
      st.flush(p[r]);
    }
  }
}

void bcastScatterAllgather(Programs& p, std::uint32_t root, std::int64_t bytes, std::int32_t tag) {
  rooted(p, root, [&](Programs& v) {
    const std::uint32_t n = size(v);
    const std::vector<std::int64_t> b = blocks(bytes, n);
    Step st;
    for (std::uint32_t r = 1; r < n; ++r) {
      st.to(r, b[r], tag);
      Step rx;
      rx.from(0, b[r], tag);
      rx.flush(v[r]);
    }
    st.flush(v[0]);
    allgatherRing(v, b, tag);
  });
}

// ---- gather / scatter ----

void gatherLinear(Programs& p, std::uint32_t root, std::int64_t bytes, std::int32_t tag) {
  gatherSizes(p, root, std::vector<std::int64_t>(p.size(), bytes), tag);
}

void scatterLinear(Programs& p, std::uint32_t root, std::int64_t bytes, std::int32_t tag) {
  const std::uint32_t n = size(p);
  for (std::uint32_t r = 0; r < n; ++r) {
    Step st;
    if (r == root) {
      for (std::uint32_t s = 0; s < n; ++s) {
        if (s != root) st.to(s, bytes, tag);
      }
    } else {
      st.from(root, bytes, tag);
    }
    st.flush(p[r]);
  }
}

std::int64_t gatherSegments(std::int64_t bytes, std::int64_t m1, std::int64_t m2) {
  // The least m with bytes/m < M1 (then bytes/(m-1) >= M1).
  return m1 > 0 && bytes >= m1 && bytes <= m2 ? bytes / m1 + 1 : 1;
}

std::int64_t scatterSegments(std::int64_t bytes, std::int64_t s) {
  return s > 0 && bytes >= s ? bytes / s + 1 : 1;
}

void gatherSegmented(Programs& p, std::uint32_t root, std::int64_t bytes, std::int64_t m1,
                     std::int64_t m2, std::int32_t tag) {
  const std::int64_t m = gatherSegments(bytes, m1, m2);
  if (m == 1) {
    gatherLinear(p, root, bytes, tag);
    return;
  }
  // The barriers keep the segments from congesting the root (seed 002).
  for (std::int64_t i = 0; i < m; ++i) {
    barrier(p, tag);
    gatherLinear(p, root, bytes / m + (i < bytes % m ? 1 : 0), tag);
  }
}

void scatterSegmented(Programs& p, std::uint32_t root, std::int64_t bytes, std::int64_t s,
                      std::int32_t tag) {
  const std::int64_t m = scatterSegments(bytes, s);
  for (std::int64_t i = 0; i < m; ++i)
    scatterLinear(p, root, bytes / m + (i < bytes % m ? 1 : 0), tag);
}

// ---- reduce / allreduce ----

void allreduceRecursiveDoubling(Programs& p, std::int64_t bytes, std::int32_t tag) {
  allreduce(p, ReduceAlgo::kRecursiveDoubling, bytes, tag);
}

void reduce(Programs& p, ReduceAlgo algo, std::uint32_t root, std::int64_t bytes,
            std::int32_t tag) {
  const std::uint32_t n = size(p);
  if (n < 2) return;
  switch (algo) {
    case ReduceAlgo::kGatherToRoot:
      gatherLinear(p, root, bytes, tag);
      return;
    case ReduceAlgo::kBinomial:
      reduceBinomial(p, root, bytes, tag);
      return;
    case ReduceAlgo::kRing:
      rooted(p, root, [&](Programs& v) {
        reduceScatterRing(v, bytes, tag);
        std::vector<std::int64_t> held(n);
        for (std::uint32_t r = 0; r < n; ++r)
          held[r] = block(bytes, n, (r + 1) % n);
        gatherSizes(v, 0, held, tag);
      });
      return;
    case ReduceAlgo::kRecursiveDoubling:
      allreduce(p, ReduceAlgo::kRecursiveDoubling, bytes, tag);
      return;
    case ReduceAlgo::kGgasRead:
    case ReduceAlgo::kGgasWrite:
    case ReduceAlgo::kGgasAllgather:
    case ReduceAlgo::kGgasWorkShare:
      ggasReduce(p, algo, root, bytes, tag, false);
      return;
    case ReduceAlgo::kReduceScatterAllgather:
      rooted(p, root, [&](Programs& v) {
        const std::uint32_t pof2 = largestPowerOfTwo(n);
        fold(v, pof2, bytes, tag, true);
        std::vector<std::pair<std::int64_t, std::int64_t>> range;
        reduceScatterHalving(v, pof2, bytes, tag, range);
        // Gather the pieces to the root (the folded ranks hold none).
        for (std::uint32_t r = 1; r < pof2; ++r) {
          Step a;
          a.to(0, range[r].second - range[r].first, tag);
          a.flush(v[r]);
        }
        Step rx;
        for (std::uint32_t r = 1; r < pof2; ++r)
          rx.from(r, range[r].second - range[r].first, tag);
        rx.flush(v[0]);
      });
      return;
  }
}

void allreduce(Programs& p, ReduceAlgo algo, std::int64_t bytes, std::int32_t tag) {
  const std::uint32_t n = size(p);
  if (n < 2) return;
  switch (algo) {
    case ReduceAlgo::kGatherToRoot:
      gatherLinear(p, 0, bytes, tag);
      scatterLinear(p, 0, bytes, tag);  // the root sends the whole result to each
      return;
    case ReduceAlgo::kBinomial:
      reduceBinomial(p, 0, bytes, tag);
      bcastBinomial(p, 0, bytes, tag);
      return;
    case ReduceAlgo::kRing: {
      reduceScatterRing(p, bytes, tag);
      // Rank r holds block (r+1)%P: the allgather ring starts there.
      std::vector<std::int64_t> b(n);
      for (std::uint32_t r = 0; r < n; ++r)
        b[r] = block(bytes, n, (r + 1) % n);
      allgatherRing(p, b, tag);
      return;
    }
    case ReduceAlgo::kRecursiveDoubling: {
      const std::uint32_t pof2 = largestPowerOfTwo(n);
      fold(p, pof2, bytes, tag, true);
      for (std::uint32_t r = 0; r < pof2; ++r) {
        for (std::uint32_t mask = 1; mask < pof2; mask <<= 1) {
          Step st;
          st.to(r ^ mask, bytes, tag);
          st.from(r ^ mask, bytes, tag);
          st.flush(p[r]);
        }
      }
      fold(p, pof2, bytes, tag, false);
      return;
    }
    case ReduceAlgo::kGgasRead:
    case ReduceAlgo::kGgasWrite:
    case ReduceAlgo::kGgasAllgather:
    case ReduceAlgo::kGgasWorkShare:
      ggasReduce(p, algo, 0, bytes, tag, true);
      return;
    case ReduceAlgo::kReduceScatterAllgather: {
      const std::uint32_t pof2 = largestPowerOfTwo(n);
      fold(p, pof2, bytes, tag, true);
      std::vector<std::pair<std::int64_t, std::int64_t>> range;
      reduceScatterHalving(p, pof2, bytes, tag, range);
      allgatherDoubling(p, pof2, tag, range);
      fold(p, pof2, bytes, tag, false);
      return;
    }
  }
}

void barrier(Programs& p, std::int32_t tag) {
  allreduceRecursiveDoubling(p, 1, tag);
}

Status expandCollectiveOver(Programs& p, const std::vector<std::uint32_t>& members,
                            const CollectiveAlgos& algos, const std::string& op, std::int64_t bytes,
                            std::int32_t tag, std::uint32_t root) {
  if (members.empty()) return {ErrorCode::kInvalidArgument, "a collective needs members"};
  std::vector<bool> seen(p.size(), false);
  for (const std::uint32_t m : members) {
    if (m >= p.size()) {
      return {ErrorCode::kInvalidArgument,
              fmt::format("member {} is beyond the {} ranks", m, p.size())};
    }
    if (seen[m]) return {ErrorCode::kInvalidArgument, fmt::format("member {} named twice", m)};
    seen[m] = true;
  }
  if (root >= members.size()) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("root {} is beyond the {} members", root, members.size())};
  }
  Programs sub(members.size());
  if (Status s = expandCollective(sub, algos, op, bytes, tag, root); !s.isOk()) return s;
  for (std::size_t i = 0; i < members.size(); ++i) {
    std::vector<MpiOp>& out = p[members[i]];
    for (MpiOp o : sub[i]) {
      if (o.kind == MpiOpKind::kIsend || o.kind == MpiOpKind::kIrecv ||
          o.kind == MpiOpKind::kSend || o.kind == MpiOpKind::kRecv) {
        o.peer = members[o.peer];
      }
      out.push_back(o);
    }
  }
  return Status::ok();
}

}  // namespace ebb::workload
