// The collectives of issue 16: Bruck's alltoall and allgather, drawn
// alltoallv, reduce-scatter, and the GGAS reduce and allreduce of seed 003,
// checked pair by pair against hand-computed schedules and replayed on the
// emulator to completion.
#include <gtest/gtest.h>

#include <set>

#include "tests/sim_backend/collective_rig.h"
#include "workload/collectives.h"

namespace ebb::sim {
using namespace ebb::workload;  // the collectives replayed here
namespace {

using testing::Traffic;
using testing::traffic;

// The messages of one pair larger than `over` bytes (the barriers' are 1).
std::vector<std::int64_t> data(const Traffic& f, std::uint32_t a, std::uint32_t b,
                               std::int64_t over = 1) {
  std::vector<std::int64_t> out;
  const auto it = f.msgs.find({a, b});
  if (it == f.msgs.end()) return out;
  for (std::int64_t m : it->second)
    if (m > over) out.push_back(m);
  return out;
}

using V = std::vector<std::int64_t>;

// P = 5, M = 100: round 0 sends the blocks with bit 0 set (1, 3) to r + 1,
// round 1 those with bit 1 (2, 3) to r + 2, round 2 block 4 to r + 4.
TEST(CollectivesExtra, BruckAlltoallSendsLogRoundsOfBlocks) {
  Programs p(5);
  alltoallBruck(p, 100, -1);
  const Traffic f = traffic(p);
  for (std::uint32_t r = 0; r < 5; ++r) {
    EXPECT_EQ(data(f, r, (r + 1) % 5), (V{200})) << r;
    EXPECT_EQ(data(f, r, (r + 2) % 5), (V{200})) << r;
    EXPECT_EQ(data(f, r, (r + 4) % 5), (V{100})) << r;
    EXPECT_TRUE(data(f, r, (r + 3) % 5).empty()) << r;
    EXPECT_EQ(f.steps[r], 3);
  }
  testing::replay(p, 4, 2);
  Programs q(8);
  alltoallBruck(q, 10, -1);
  const Traffic g = traffic(q);
  EXPECT_EQ(g.sentBytes[3], 3 * 40);  // 3 rounds of 4 blocks
  testing::replay(q, 4, 2);
}

// P = 5, M = 10 per rank: min(2^k, P - 2^k) blocks to r - 2^k: 1, 2, then 1.
TEST(CollectivesExtra, BruckAllgatherGathersEveryBlockInLogRounds) {
  Programs p(5);
  allgatherBruck(p, 10, -2);
  const Traffic f = traffic(p);
  for (std::uint32_t r = 0; r < 5; ++r) {
    EXPECT_EQ(data(f, r, (r + 4) % 5), (V{10}));  // r - 1
    EXPECT_EQ(data(f, r, (r + 3) % 5), (V{20}));  // r - 2
    EXPECT_EQ(data(f, r, (r + 1) % 5), (V{10}));  // r - 4
    EXPECT_EQ(f.recvBytes[r], 4 * 10);            // every other rank's block once
  }
  testing::replay(p, 4, 2);
}

TEST(CollectivesExtra, DrawnAlltoallvSizesAreSeededAndWithinHalfToOneAndAHalf) {
  Programs p(6), q(6), same(6);
  alltoallvDrawn(p, 1000, 1, -3);
  alltoallvDrawn(q, 1000, 2, -3);
  alltoallvDrawn(same, 1000, 1, -3);
  const Traffic f = traffic(p), g = traffic(q), h = traffic(same);
  EXPECT_EQ(f.sends, 30u);
  std::set<std::int64_t> sizes;
  for (const auto& [pair, m] : f.msgs) {
    ASSERT_EQ(m.size(), 1u);
    EXPECT_GE(m[0], 500);
    EXPECT_LE(m[0], 1500);
    sizes.insert(m[0]);
  }
  EXPECT_GT(sizes.size(), 20u);
  EXPECT_NE(f.msgs, g.msgs);
  EXPECT_EQ(f.msgs, h.msgs);
  testing::replay(p, 4, 2);
}

// M = 600 over P ranks: the ring sends P - 1 blocks of M/P to r + 1; halving
// (P = 4) sends half the vector, then a quarter; with P = 6 ranks 4 and 5
// fold into 0 and 1 first and get their 100-byte block back at the end.
TEST(CollectivesExtra, ReduceScatterRingAndRecursiveHalving) {
  Programs ring(4);
  reduceScatter(ring, ReduceScatterAlgo::kRing, 400, -4);
  const Traffic f = traffic(ring);
  for (std::uint32_t r = 0; r < 4; ++r)
    EXPECT_EQ(data(f, r, (r + 1) % 4), (V{100, 100, 100}));
  testing::replay(ring, 4, 2);
  Programs halving(4);
  reduceScatter(halving, ReduceScatterAlgo::kRecursiveHalving, 400, -4);
  const Traffic g = traffic(halving);
  EXPECT_EQ(data(g, 0, 2), (V{200}));
  EXPECT_EQ(data(g, 0, 1), (V{100}));
  EXPECT_EQ(g.sentBytes[3], 300);
  testing::replay(halving, 4, 2);
  Programs six(6);
  reduceScatter(six, ReduceScatterAlgo::kRecursiveHalving, 600, -4);
  const Traffic h = traffic(six);
  EXPECT_EQ(data(h, 4, 0), (V{600}));
  EXPECT_EQ(data(h, 5, 1), (V{600}));
  EXPECT_EQ(data(h, 0, 4), (V{100}));
  EXPECT_EQ(data(h, 1, 5), (V{100}));
  testing::replay(six, 4, 2);
}

// Seed 003's GGAS variants on 4 GPUs, M = 1000 bytes, pair by pair (the
// syncs are barriers of 1-byte messages, left out by `data`).
TEST(CollectivesExtra, GgasReduceAndAllreducePairByPair) {
  const auto run = [](ReduceAlgo algo, bool all) {
    Programs p(4);
    (all ? allreduce(p, algo, 1000, -5) : reduce(p, algo, 0, 1000, -5));
    testing::replay(p, 4, 2);
    return traffic(p);
  };
  // Remote reads: every rank reads M from every other (allreduce), the root
  // from every other (reduce).
  Traffic f = run(ReduceAlgo::kGgasRead, true);
  for (std::uint32_t a = 0; a < 4; ++a)
    for (std::uint32_t b = 0; b < 4; ++b)
      if (a != b) {
        EXPECT_EQ(data(f, a, b), (V{1000})) << a << "->" << b;
      }
  f = run(ReduceAlgo::kGgasRead, false);
  EXPECT_EQ(data(f, 2, 0), (V{1000}));
  EXPECT_TRUE(data(f, 0, 2).empty());
  // Remote writes: gather to the root, then (allreduce) the root writes M back.
  f = run(ReduceAlgo::kGgasWrite, true);
  EXPECT_EQ(data(f, 3, 0), (V{1000}));
  EXPECT_EQ(data(f, 0, 3), (V{1000}));
  EXPECT_TRUE(data(f, 1, 2).empty());
  f = run(ReduceAlgo::kGgasWrite, false);
  EXPECT_EQ(data(f, 3, 0), (V{1000}));
  EXPECT_TRUE(data(f, 0, 3).empty());
  // All-gather manner: every rank writes M to every other, one sync.
  f = run(ReduceAlgo::kGgasAllgather, true);
  EXPECT_EQ(data(f, 1, 2), (V{1000}));
  EXPECT_EQ(data(f, 2, 1), (V{1000}));
  // Work sharing: block d (250 bytes) of every vector to rank d, then each
  // rank's reduced block to every rank (allreduce) or to the root (reduce).
  f = run(ReduceAlgo::kGgasWorkShare, true);
  EXPECT_EQ(data(f, 1, 2), (V{250, 250}));
  // Two syncs, each a 2-step recursive-doubling barrier of 1 byte per step.
  EXPECT_EQ(f.sentBytes[1], 2 * 3 * 250 + 2 * 2);
  f = run(ReduceAlgo::kGgasWorkShare, false);
  EXPECT_EQ(data(f, 1, 2), (V{250}));
  EXPECT_EQ(data(f, 1, 0), (V{250, 250}));
}

TEST(CollectivesExtra, NamesReachEveryNewAlgorithm) {
  CollectiveAlgos a;
  EXPECT_TRUE(parseAlgorithms(a,
                              "alltoall=bruck,allgather=bruck,reduce_scatter=recursive-halving,"
                              "allreduce=ggas-work-share,reduce=ggas-read,alltoallv=pairwise")
                  .isOk());
  EXPECT_EQ(a.alltoall, AlltoallAlgo::kBruck);
  EXPECT_EQ(a.allgather, AllgatherAlgo::kBruck);
  EXPECT_EQ(a.reduceScatter, ReduceScatterAlgo::kRecursiveHalving);
  EXPECT_EQ(a.allreduce, ReduceAlgo::kGgasWorkShare);
  EXPECT_EQ(a.reduce, ReduceAlgo::kGgasRead);
  const Status bad = setAlgorithm(a, "allgather", "tree");
  EXPECT_NE(bad.message().find("choices: bruck, ring"), std::string::npos) << bad.message();
  Programs huge(8);
  const Status wraps = expandCollective(huge, a, "alltoall", std::int64_t{1} << 60, -9);
  EXPECT_NE(wraps.message().find("beyond any message"), std::string::npos) << wraps.message();
  for (const char* op : {"alltoallv", "allgather", "reduce_scatter"}) {
    Programs p(6);
    ASSERT_TRUE(expandCollective(p, a, op, 300, -9).isOk()) << op;
    EXPECT_GT(traffic(p).sends, 0u) << op;
    testing::replay(p, 4, 2);
  }
}

}  // namespace
}  // namespace ebb::sim
