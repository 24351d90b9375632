// The named collective algorithms: pairs, bytes and steps as each prescribes,
// and replay to completion.
#include <gtest/gtest.h>

#include <map>

#include "tests/sim_backend/collective_rig.h"
#include "workload/collectives.h"

namespace ebb::sim {
using namespace ebb::workload;  // the traces and collectives replayed here
namespace {

using testing::Traffic;
using testing::traffic;

// Replays on a 4-ary 3-tree (rank r on host r); returns every delivery.
std::vector<Delivery> replay(const Programs& p) {
  return testing::replay(p, 4, 3);
}

TEST(CollectiveAlgos, SocketPhasedAlltoallSendsMOncePerPairWithOneSocketPerNodeOnTheNetwork) {
  for (auto [P, c] : {std::pair{16u, 4u}, std::pair{24u, 8u}, std::pair{8u, 8u}}) {
    const std::int64_t M = 256;
    Programs p(P);
    ASSERT_TRUE(alltoallSocketPhased(p, M, c, -1).isOk());
    const Traffic t = traffic(p);
    for (std::uint32_t a = 0; a < P; ++a) {
      for (std::uint32_t b = 0; b < P; ++b) {
        if (a == b) continue;
        std::vector<std::int64_t> payload;
        for (std::int64_t s :
             t.msgs.count({a, b}) ? t.msgs.at({a, b}) : std::vector<std::int64_t>{})
          if (s > 0) payload.push_back(s);
        EXPECT_EQ(payload, std::vector<std::int64_t>{M}) << a << "->" << b;
        // Zero-byte tokens only hand over between the sockets of one node.
        const bool sameNodeOtherSocket = a / c == b / c && (a % c < c / 2) != (b % c < c / 2);
        if (!sameNodeOtherSocket) {
          EXPECT_EQ(t.msgs.at({a, b}).size(), 1u) << a << "->" << b;
        }
      }
    }
    // On the emulator: per node, the off-node messages of socket A and of
    // socket B never overlap in time.
    const std::vector<Delivery> log = replay(p);
    std::map<std::uint32_t, std::vector<std::pair<TimePs, TimePs>>> bySocket[2];
    for (const Delivery& d : log) {
      const std::uint32_t s = d.src.value(), r = d.dst.value();
      if (d.bytes == M && s / c != r / c) {
        bySocket[s % c < c / 2 ? 0 : 1][s / c].emplace_back(d.created, d.delivered);
      }
    }
    int overlaps = 0;
    for (const auto& [node, as] : bySocket[0]) {
      for (const auto& a : as) {
        for (const auto& b : bySocket[1][node])
          overlaps += std::max(a.first, b.first) < std::min(a.second, b.second) ? 1 : 0;
      }
    }
    EXPECT_EQ(overlaps, 0) << "P=" << P;
    EXPECT_FALSE(bySocket[0].empty() && P > c);
  }
  Programs bad(12);
  EXPECT_FALSE(alltoallSocketPhased(bad, 8, 8, -1).isOk());
  EXPECT_FALSE(alltoallSocketPhased(bad, 8, 3, -1).isOk());
}

TEST(CollectiveAlgos, ScatterAllgatherBcastDeliversMToEveryRank) {
  const std::uint32_t P = 8;
  Programs p(P);
  bcastScatterAllgather(p, 3, 800, -1);
  const Traffic t = traffic(p);
  EXPECT_EQ(t.sends, (P - 1) + P * (P - 1));  // scatter, then P-1 ring steps per rank
  for (std::uint32_t r = 0; r < P; ++r) {
    if (r != 3) {
      EXPECT_EQ(t.recvBytes[r], 800);
    }
    EXPECT_EQ(t.steps[r], static_cast<int>(P - 1) + 1);
    for (std::uint32_t q = 0; q < P; ++q) {
      if (q != (r + 1) % P && q != r && r != 3) {
        EXPECT_EQ(t.msgs.count({r, q}), 0u);  // only the ring neighbour (and the root scatters)
      }
    }
  }
  replay(p);
}

TEST(CollectiveAlgos, SegmentedGatherAndScatterFollowTheThresholds) {
  const std::int64_t m1 = 5120, m2 = 65536, s = 65536;
  EXPECT_EQ(gatherSegments(1000, m1, m2), 1);
  EXPECT_EQ(gatherSegments(20000, m1, m2), 4);  // 20000/4 < M1 <= 20000/3
  EXPECT_EQ(gatherSegments(100000, m1, m2), 1);
  EXPECT_EQ(scatterSegments(60000, s), 1);
  EXPECT_EQ(scatterSegments(200000, s), 4);  // 200000/4 < S <= 200000/3
  const std::uint32_t P = 6;
  Programs p(P);
  gatherSegmented(p, 2, 20000, m1, m2, -1);
  scatterSegmented(p, 2, 200000, s, -2);
  const Traffic t = traffic(p);
  for (std::uint32_t r = 0; r < P; ++r) {
    if (r == 2) continue;
    std::int64_t up = 0, upCount = 0;
    for (std::int64_t b : t.msgs.at({r, 2u})) {
      if (b > 1) {
        up += b;
        ++upCount;
        EXPECT_LT(b, m1);
      }
    }
    EXPECT_EQ(up, 20000);
    EXPECT_EQ(upCount, 4);
    std::int64_t down = 0, downCount = 0;
    for (std::int64_t b : t.msgs.at({2u, r})) {
      if (b > 1) {
        down += b;
        ++downCount;
        EXPECT_LT(b, s);
      }
    }
    EXPECT_EQ(down, 200000);
    EXPECT_EQ(downCount, 4);
  }
  replay(p);
}

struct ReduceCase {
  ReduceAlgo algo;
  bool all;
  std::uint32_t P;
  std::uint64_t messages;  // total
  std::int64_t bytes;      // total payload
};

class ReduceAlgos : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(ReduceAlgos, MoveTheirPrescribedMessagesAndBytes) {
  const ReduceCase c = GetParam();
  Programs p(c.P);
  if (c.all) {
    allreduce(p, c.algo, 4800, -1);
  } else {
    reduce(p, c.algo, 1, 4800, -1);
  }
  const Traffic t = traffic(p);
  EXPECT_EQ(t.sends, c.messages);
  std::int64_t total = 0;
  for (std::int64_t b : t.sentBytes)
    total += b;
  EXPECT_EQ(total, c.bytes);
  replay(p);
}

constexpr std::int64_t M = 4800;
std::string caseName(const ReduceCase& c) {
  static const char* kNames[] = {"GatherToRoot", "Binomial", "Ring", "RecursiveDoubling",
                                 "ReduceScatterAllgather"};
  return std::string(kNames[static_cast<int>(c.algo)]) + (c.all ? "Allreduce" : "Reduce") +
         std::to_string(c.P);
}
INSTANTIATE_TEST_SUITE_P(
    All, ReduceAlgos,
    ::testing::Values(
        // gather-to-root: P-1 messages of M (allreduce: and back).
        ReduceCase{ReduceAlgo::kGatherToRoot, false, 8, 7, 7 * M},
        ReduceCase{ReduceAlgo::kGatherToRoot, true, 8, 14, 14 * M},
        // binomial: every non-root sends M once (allreduce: + the bcast).
        ReduceCase{ReduceAlgo::kBinomial, false, 6, 5, 5 * M},
        ReduceCase{ReduceAlgo::kBinomial, true, 6, 10, 10 * M},
        // ring: P(P-1) blocks of M/P in the reduce-scatter; reduce gathers P-1
        // blocks to the root, allreduce runs P-1 more ring steps.
        ReduceCase{ReduceAlgo::kRing, false, 8, 56 + 7, (56 + 7) * M / 8},
        ReduceCase{ReduceAlgo::kRing, true, 8, 112, 112 * M / 8},
        ReduceCase{ReduceAlgo::kRing, true, 6, 60, 60 * M / 6},
        // recursive doubling: P log2 P messages of M; P = 6 folds 2 ranks in and out.
        ReduceCase{ReduceAlgo::kRecursiveDoubling, true, 8, 24, 24 * M},
        ReduceCase{ReduceAlgo::kRecursiveDoubling, true, 6, 2 + 8 + 2, 12 * M},
        ReduceCase{ReduceAlgo::kRecursiveDoubling, false, 8, 24, 24 * M},
        // Rabenseifner: 2 log2 P messages per rank, 2 M (P-1)/P bytes per rank;
        // reduce: halving (M (P-1)/P per rank) + P-1 pieces of M/P to the root.
        ReduceCase{ReduceAlgo::kReduceScatterAllgather, true, 8, 48, 8 * 2 * M * 7 / 8},
        ReduceCase{ReduceAlgo::kReduceScatterAllgather, true, 6, 2 + 16 + 2,
                   4 * M + 4 * 2 * M * 3 / 4},
        ReduceCase{ReduceAlgo::kReduceScatterAllgather, false, 8, 24 + 7,
                   8 * M * 7 / 8 + 7 * M / 8}),
    [](const ::testing::TestParamInfo<ReduceCase>& tpi) { return caseName(tpi.param); });

TEST(CollectiveAlgos, NamesSelectAlgorithmsAndBadNamesListTheChoices) {
  CollectiveAlgos a;
  ASSERT_TRUE(parseAlgorithms(a, "alltoall=socket-phased,allreduce=ring,gather=segmented").isOk());
  EXPECT_EQ(a.alltoall, AlltoallAlgo::kSocketPhased);
  EXPECT_EQ(a.allreduce, ReduceAlgo::kRing);
  EXPECT_EQ(a.gather, RootedAlgo::kSegmented);
  const Status bad = parseAlgorithms(a, "allreduce=fast");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.message().find("choices: binomial, gather-to-root"), std::string::npos)
      << bad.message();
  EXPECT_FALSE(parseAlgorithms(a, "allreduce").isOk());
  const Status twice = parseAlgorithms(a, "allreduce=ring,allreduce=recursive-doubling");
  ASSERT_FALSE(twice.isOk());
  EXPECT_NE(twice.message().find("allreduce is named twice"), std::string::npos) << twice.message();
  EXPECT_FALSE(parseAlgorithms(a, "scan=ring").isOk());
  Programs p(4);
  EXPECT_FALSE(expandCollective(p, a, "scan", 8, -1).isOk());
  EXPECT_TRUE(expandCollective(p, a, "allreduce", 8, -1).isOk());
}

// The cost bound checked before a collective is built: never above the
// messages an instance really sends, and within a log P factor of them, so
// an all-pairs algorithm is never taken for a tree (every op, every named
// algorithm, several rank counts).
TEST(CollectiveAlgos, TheMessageBoundIsBelowTheTruthAndWithinALogFactor) {
  const std::map<std::string, std::vector<std::string>> kAlgorithms = {
      {"alltoall", {"pairwise", "socket-phased", "bruck"}},
      {"alltoallv", {"pairwise"}},
      {"allgather", {"ring", "bruck"}},
      {"reduce_scatter", {"ring", "recursive-halving"}},
      {"bcast", {"binomial", "scatter-allgather"}},
      {"gather", {"linear", "segmented"}},
      {"scatter", {"linear", "segmented"}},
      {"reduce",
       {"gather-to-root", "binomial", "ring", "recursive-doubling", "reduce-scatter-allgather",
        "ggas-read", "ggas-write", "ggas-allgather", "ggas-work-share"}},
      {"allreduce",
       {"gather-to-root", "binomial", "ring", "recursive-doubling", "reduce-scatter-allgather",
        "ggas-read", "ggas-write", "ggas-allgather", "ggas-work-share"}},
      {"barrier", {""}}};
  for (const auto& [op, names] : kAlgorithms) {
    for (const std::string& name : names) {
      CollectiveAlgos a;
      if (!name.empty()) {
        ASSERT_TRUE(setAlgorithm(a, op, name).isOk()) << op << " " << name;
      }
      for (std::uint32_t P : {2u, 3u, 8u, 13u, 16u, 24u}) {
        Programs p(P);
        if (!expandCollective(p, a, op, 1024, -1).isOk()) continue;  // e.g. socket-phased
        std::uint64_t sent = 0;
        for (const auto& rank : p) {
          for (const MpiOp& o : rank)
            sent += o.kind == MpiOpKind::kSend || o.kind == MpiOpKind::kIsend ? 1 : 0;
        }
        const std::uint64_t bound = collectiveMessagesAtLeast(a, op, P);
        std::uint32_t log2P = 0;
        while ((1u << log2P) < P)
          ++log2P;
        EXPECT_LE(bound, sent) << op << " " << name << " on " << P;
        EXPECT_LE(sent, bound * 4 * (log2P + 1)) << op << " " << name << " on " << P;
      }
    }
  }
  EXPECT_EQ(collectiveMessagesAtLeast({}, "alltoall", 32768), 32768ull * 32767);
  EXPECT_EQ(collectiveMessagesAtLeast({}, "bcast", 1), 0u);
}

}  // namespace
}  // namespace ebb::sim
