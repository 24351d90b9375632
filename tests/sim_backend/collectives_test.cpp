#include "workload/collectives.h"

#include <gtest/gtest.h>

#include <map>

#include "fabric/kary_tree.h"
#include "sim_backend/mpi_replay.h"

namespace ebb::sim {
using namespace ebb::workload;  // the traces and collectives replayed here
namespace {

struct Flows {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t> bytes;  // (src, dst)
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> count;
  std::vector<int> waits;  // waitalls per rank (steps)
  std::uint64_t sends = 0;
  std::uint64_t recvs = 0;
};

Flows flows(const Programs& p) {
  Flows f;
  f.waits.assign(p.size(), 0);
  for (std::uint32_t r = 0; r < p.size(); ++r) {
    for (const MpiOp& op : p[r]) {
      if (op.kind == MpiOpKind::kIsend) {
        f.bytes[{r, op.peer}] += op.bytes;
        ++f.count[{r, op.peer}];
        ++f.sends;
      } else if (op.kind == MpiOpKind::kIrecv) {
        ++f.recvs;
      } else if (op.kind == MpiOpKind::kWaitall) {
        ++f.waits[r];
      }
    }
  }
  return f;
}

// Replays the programs on a 4-ary 2-tree: they complete and every message matches.
void replaysCleanly(const Programs& p) {
  const fabric::Topology topo = fabric::KAryNTree::make(4, 2).value().build();
  agent::VirtualScheduler sched;
  FabricEmulator emu(topo, EmulatorConfig{}, sched);
  MpiTrace t;
  t.ranks = p;
  std::vector<fabric::HostId> place;
  for (std::uint32_t r = 0; r < p.size(); ++r)
    place.push_back(fabric::HostId(r));
  MpiReplay mpi(emu, t, place);
  emu.onDelivery([&](const Delivery& d) { mpi.onDelivery(d); });
  mpi.start();
  sched.runAll();
  EXPECT_TRUE(mpi.done());
  EXPECT_EQ(mpi.messagesMatched(), mpi.messagesSent());
}

TEST(Collectives, PairwiseAlltoallSendsMToEveryOtherRankOnceInPMinus1Steps) {
  const std::uint32_t P = 8;
  Programs p(P);
  alltoallPairwise(p, 1000, -1);
  const Flows f = flows(p);
  EXPECT_EQ(f.sends, P * (P - 1));
  EXPECT_EQ(f.recvs, P * (P - 1));
  for (std::uint32_t a = 0; a < P; ++a) {
    EXPECT_EQ(f.waits[a], static_cast<int>(P - 1));
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
  const Flows f = flows(p);
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
      const Flows f = flows(p);
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
  const Flows f = flows(p);
  EXPECT_EQ(f.sends, 8u * 3u);  // log2 8 = 3 exchanges per rank
  for (std::uint32_t r = 0; r < 8; ++r) {
    EXPECT_EQ(f.waits[r], 3);
    for (std::uint32_t m : {1u, 2u, 4u})
      EXPECT_EQ((f.count.at({r, r ^ m})), 1);
  }
  replaysCleanly(p);
  Programs odd(6);  // not a power of two: 2 ranks fold in and out around 4 x 2 exchanges
  allreduceRecursiveDoubling(odd, 256, -5);
  EXPECT_EQ(flows(odd).sends, 2u + 8u + 2u);
  replaysCleanly(odd);
}

TEST(Collectives, LinearGatherAndScatter) {
  Programs p(9);
  gatherLinear(p, 4, 300, -6);
  scatterLinear(p, 4, 200, -7);
  const Flows f = flows(p);
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

}  // namespace
}  // namespace ebb::sim
