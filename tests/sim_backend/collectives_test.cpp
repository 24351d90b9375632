#include "workload/collectives.h"

#include <gtest/gtest.h>

#include "tests/sim_backend/collective_rig.h"

namespace ebb::sim {
using namespace ebb::workload;  // the traces and collectives replayed here
namespace {

using testing::Traffic;
using testing::traffic;

// Replays the programs on a 4-ary 2-tree: they complete and every message matches.
void replaysCleanly(const Programs& p) {
  testing::replay(p, 4, 2);
}

TEST(Collectives, PairwiseAlltoallSendsMToEveryOtherRankOnceInPMinus1Steps) {
  const std::uint32_t P = 8;
  Programs p(P);
  alltoallPairwise(p, 1000, -1);
  const Traffic f = traffic(p);
  EXPECT_EQ(f.sends, P * (P - 1));
  EXPECT_EQ(f.recvs, P * (P - 1));
  for (std::uint32_t a = 0; a < P; ++a) {
    EXPECT_EQ(f.steps[a], static_cast<int>(P - 1));
    for (std::uint32_t b = 0; b < P; ++b) {
      if (a == b) continue;
      EXPECT_EQ((f.count.at({a, b})), 1);
      EXPECT_EQ((f.bytes.at({a, b})), 1000);
    }
  }
  replaysCleanly(p);
}

TEST(Collectives, AlltoallvMovesThePerPairSizes) {
  const std::uint32_t P = 5;
  std::vector<std::vector<std::int64_t>> sizes(P, std::vector<std::int64_t>(P));
  for (std::uint32_t a = 0; a < P; ++a)
    for (std::uint32_t b = 0; b < P; ++b)
      sizes[a][b] = 10 * a + b + 1;
  Programs p(P);
  alltoallvPairwise(p, sizes, -2);
  const Traffic f = traffic(p);
  for (std::uint32_t a = 0; a < P; ++a) {
    for (std::uint32_t b = 0; b < P; ++b) {
      if (a != b) {
        EXPECT_EQ((f.bytes.at({a, b})), sizes[a][b]);
      }
    }
  }
  replaysCleanly(p);
}

TEST(Collectives, BinomialBcastReachesEveryRankOnceInLogRounds) {
  for (std::uint32_t P : {2u, 7u, 8u, 13u}) {
    for (std::uint32_t root : {0u, P - 1}) {
      Programs p(P);
      bcastBinomial(p, root, 512, -3);
      const Traffic f = traffic(p);
      EXPECT_EQ(f.sends, P - 1);
      std::vector<int> received(P, 0);
      for (const auto& [pair, n] : f.count)
        received[pair.second] += n;
      for (std::uint32_t r = 0; r < P; ++r)
        EXPECT_EQ(received[r], r == root ? 0 : 1);
      std::uint32_t rounds = 0;
      while ((1u << rounds) < P)
        ++rounds;
      std::uint32_t rootSends = 0;
      for (const auto& [pair, n] : f.count)
        rootSends += pair.first == root ? 1 : 0;
      EXPECT_EQ(rootSends, rounds) << "P=" << P;
      replaysCleanly(p);
    }
  }
}

TEST(Collectives, RecursiveDoublingAllreduce) {
  Programs p(8);
  allreduceRecursiveDoubling(p, 256, -4);
  const Traffic f = traffic(p);
  EXPECT_EQ(f.sends, 8u * 3u);  // log2 8 = 3 exchanges per rank
  for (std::uint32_t r = 0; r < 8; ++r) {
    EXPECT_EQ(f.steps[r], 3);
    for (std::uint32_t m : {1u, 2u, 4u})
      EXPECT_EQ((f.count.at({r, r ^ m})), 1);
  }
  replaysCleanly(p);
  Programs odd(6);  // not a power of two: 2 ranks fold in and out around 4 x 2 exchanges
  allreduceRecursiveDoubling(odd, 256, -5);
  EXPECT_EQ(traffic(odd).sends, 2u + 8u + 2u);
  replaysCleanly(odd);
}

TEST(Collectives, LinearGatherAndScatter) {
  Programs p(9);
  gatherLinear(p, 4, 300, -6);
  scatterLinear(p, 4, 200, -7);
  const Traffic f = traffic(p);
  EXPECT_EQ(f.sends, 16u);
  for (std::uint32_t r = 0; r < 9; ++r) {
    if (r == 4) continue;
    EXPECT_EQ((f.bytes.at({r, 4u})), 300);
    EXPECT_EQ((f.bytes.at({4u, r})), 200);
  }
  replaysCleanly(p);
}

TEST(Collectives, BarrierCompletesForAnySize) {
  for (std::uint32_t P : {2u, 5u, 16u}) {
    Programs p(P);
    barrier(p, -8);
    barrier(p, -9);
    replaysCleanly(p);
  }
}

// A collective on a communicator of some ranks (an OTF2 trace's
// sub-communicator): only the members communicate, among themselves, with the
// root given as a communicator rank.
TEST(Collectives, ExpandedOverASubsetOnlyItsMembersTakePart) {
  Programs p(6);
  const std::vector<std::uint32_t> members = {4, 1, 5};  // communicator ranks 0, 1, 2
  ASSERT_TRUE(expandCollectiveOver(p, members, {}, "gather", 100, -4, 2).isOk());
  const Traffic f = traffic(p);
  EXPECT_EQ(f.sends, 2u);
  EXPECT_EQ((f.bytes.at({4u, 5u})), 100);  // to communicator rank 2, rank 5
  EXPECT_EQ((f.bytes.at({1u, 5u})), 100);
  for (const std::uint32_t r : {0u, 2u, 3u}) {
    EXPECT_TRUE(p[r].empty()) << r;
  }
  ASSERT_TRUE(expandCollectiveOver(p, members, {}, "allreduce", 8, -5).isOk());
  ASSERT_TRUE(expandCollectiveOver(p, {3, 0}, {}, "alltoall", 8, -6).isOk());
  for (const MpiOp& op : p[3]) {
    if (op.kind == MpiOpKind::kIsend || op.kind == MpiOpKind::kIrecv) {
      EXPECT_EQ(op.peer, 0u);
    }
  }
  EXPECT_TRUE(p[2].empty());
  replaysCleanly(p);
  EXPECT_FALSE(expandCollectiveOver(p, {1, 6}, {}, "barrier", 1, -7).isOk());
  EXPECT_FALSE(expandCollectiveOver(p, {1, 1}, {}, "barrier", 1, -7).isOk());
  EXPECT_FALSE(expandCollectiveOver(p, {1, 2}, {}, "bcast", 1, -7, 2).isOk());
  EXPECT_FALSE(expandCollectiveOver(p, {}, {}, "barrier", 1, -7).isOk());
}

}  // namespace
}  // namespace ebb::sim
