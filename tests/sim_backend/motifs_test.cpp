// Communication motifs (docs/traffic.md, "Motifs"): the rank grids, each
// motif's messages on small N against hand-computed schedules, every send
// matched by a receive of the same size in order, and each program replayed
// closed-loop on the emulator to completion (no deadlock).
#include "workload/motifs.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "tests/sim_backend/collective_rig.h"

namespace ebb::sim {
using namespace ebb::workload;  // the motifs replayed here
namespace {

using testing::Traffic;
using testing::traffic;

MotifParams params(Motif m, std::uint32_t ranks, std::uint32_t cells) {
  MotifParams p;
  p.motif = m;
  p.ranks = ranks;
  p.cells = cells;
  p.iterations = 1;
  p.computePerIteration = 1'000'000;  // 1 us
  return p;
}

Programs programOf(const MotifParams& p) {
  Result<MpiTrace> t = generateMotif(p);
  EXPECT_TRUE(t) << t.status().toString();
  return t ? t->ranks : Programs{};
}

// Per (src, dst, tag) the sizes sent and the sizes received, in program order.
void everySendIsReceived(const Programs& p) {
  using Key = std::tuple<std::uint32_t, std::uint32_t, std::int32_t>;
  std::map<Key, std::vector<std::int64_t>> sent, received;
  for (std::uint32_t r = 0; r < p.size(); ++r) {
    for (const MpiOp& op : p[r]) {
      if (op.kind == MpiOpKind::kIsend || op.kind == MpiOpKind::kSend)
        sent[{r, op.peer, op.tag}].push_back(op.bytes);
      if (op.kind == MpiOpKind::kIrecv || op.kind == MpiOpKind::kRecv)
        received[{op.peer, r, op.tag}].push_back(op.bytes);
      if (op.kind != MpiOpKind::kCompute && op.kind != MpiOpKind::kWaitall) {
        EXPECT_NE(op.peer, r) << "rank " << r << " talks to itself";
      }
    }
  }
  EXPECT_EQ(sent, received);
}

TEST(Motifs, RankGridsAreNearCubic) {
  using A3 = std::array<std::uint32_t, 3>;
  EXPECT_EQ(gridOf(8), (A3{2, 2, 2}));
  EXPECT_EQ(gridOf(27), (A3{3, 3, 3}));
  EXPECT_EQ(gridOf(12), (A3{3, 2, 2}));
  EXPECT_EQ(gridOf(64), (A3{4, 4, 4}));
  EXPECT_EQ(gridOf(256), (A3{8, 8, 4}));
  EXPECT_EQ(gridOf(4096), (A3{16, 16, 16}));
  EXPECT_EQ(gridOf(7), (A3{7, 1, 1}));
  EXPECT_EQ(gridOf(2), (A3{2, 1, 1}));
  using A2 = std::array<std::uint32_t, 2>;
  EXPECT_EQ(grid2Of(8), (A2{4, 2}));
  EXPECT_EQ(grid2Of(16), (A2{4, 4}));
  EXPECT_EQ(grid2Of(12), (A2{4, 3}));
  EXPECT_EQ(grid2Of(7), (A2{7, 1}));
}

// 2x2x2 ranks, 4^3 cells each, 8 bytes per face cell: every rank has one
// face neighbour per dimension (non-periodic), so 3 faces of 4 x 4 x 8 = 128
// bytes, then two recursive-doubling allreduces of 8 bytes (3 steps each).
TEST(Motifs, Halo3dIsSixFaceExchangeThenTwoDotProducts) {
  const Programs p = programOf(params(Motif::kHalo3d, 8, 4));
  const Traffic f = traffic(p);
  for (std::uint32_t r = 0; r < 8; ++r) {
    EXPECT_EQ(f.sent[r], 3 + 2 * 3) << r;
    EXPECT_EQ(f.sentBytes[r], 3 * 128 + 6 * 8) << r;
  }
  EXPECT_EQ((f.msgs.at({0, 1})), (std::vector<std::int64_t>{128, 8, 8}));  // x face, then allreduce
  EXPECT_EQ((f.msgs.at({0, 2}).front()), 128);
  EXPECT_EQ((f.msgs.at({0, 4}).front()), 128);
  EXPECT_EQ(f.count.count({0, 7}), 0u);  // no diagonal neighbour
  // Rank 0's program: 3 receives, 3 sends, the wait, the compute, then the
  // allreduces.
  ASSERT_GE(p[0].size(), 8u);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(p[0][static_cast<std::size_t>(i)].kind, MpiOpKind::kIrecv);
  for (int i = 3; i < 6; ++i)
    EXPECT_EQ(p[0][static_cast<std::size_t>(i)].kind, MpiOpKind::kIsend);
  EXPECT_EQ(p[0][6].kind, MpiOpKind::kWaitall);
  EXPECT_EQ(p[0][6].count, 6u);
  EXPECT_EQ(p[0][7].kind, MpiOpKind::kCompute);
  EXPECT_EQ(p[0][7].duration, 1'000'000);
  everySendIsReceived(p);
  testing::replay(p, 4, 2);
}

// 3x3x3 ranks: the centre (13) has all 26 neighbours, a corner (0) 7: 3
// faces of 4 x 4 x 24 bytes, 3 edges of 4 x 24, 1 corner of 24.
TEST(Motifs, Halo3d26SendsFacesEdgesAndCorners) {
  const Programs p = programOf(params(Motif::kHalo3d26, 27, 4));
  const Traffic f = traffic(p);
  const int allreduce = 5 + 2;  // recursive doubling on 27: fold, 4 steps, unfold
  EXPECT_EQ(f.sentBytes[13] - 8 * (f.sent[13] - 26), 6 * 384 + 12 * 96 + 8 * 24);
  EXPECT_EQ(f.sentBytes[0] - 8 * (f.sent[0] - 7), 3 * 384 + 3 * 96 + 24);
  EXPECT_EQ((f.msgs.at({13, 14}).front()), 384);  // +x face
  EXPECT_EQ((f.msgs.at({13, 17}).front()), 96);   // +x+y edge
  EXPECT_EQ((f.msgs.at({13, 26}).front()), 24);   // +x+y+z corner
  EXPECT_LE(f.sent[13], 26 + allreduce);
  everySendIsReceived(p);
  testing::replay(p, 4, 3);
}

// 2x2 ranks, 4^3 cells in 2 z-blocks, 64 bytes per face cell: each face is
// 4 x 2 x 64 = 512 bytes. Every rank is upstream in x for half of the 8
// octants and in y for half, so it sends 8 x 2 x (1/2 + 1/2) = 16 faces.
TEST(Motifs, Sweep3dFollowsTheWavefrontOfEachOctant) {
  MotifParams mp = params(Motif::kSweep3d, 4, 4);
  mp.zBlocks = 2;
  const Programs p = programOf(mp);
  const Traffic f = traffic(p);
  for (std::uint32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(f.sentBytes[r], 16 * 512 + 2 * 8) << r;  // + a 2-step allreduce
  }
  // Octant 0 sweeps +x +y: rank 0 starts it (no receive before its first
  // compute) and sends to 1 and 2 after each block; rank 3 waits for 2 (x)
  // then 1 (y) first.
  EXPECT_EQ(p[0][0].kind, MpiOpKind::kCompute);
  EXPECT_EQ(p[0][1].kind, MpiOpKind::kIsend);
  EXPECT_EQ(p[0][1].peer, 1u);
  EXPECT_EQ(p[0][2].peer, 2u);
  EXPECT_EQ(p[3][0].kind, MpiOpKind::kRecv);
  EXPECT_EQ(p[3][0].peer, 2u);
  EXPECT_EQ(p[3][1].kind, MpiOpKind::kRecv);
  EXPECT_EQ(p[3][1].peer, 1u);
  // Two octants in flight: rank 0 waits for octant 0's 4 sends only when
  // octant 2 begins.
  std::size_t firstWait = 0;
  while (p[0][firstWait].kind != MpiOpKind::kWaitall)
    ++firstWait;
  EXPECT_EQ(p[0][firstWait].count, 4u);
  std::size_t sendsBefore = 0;
  for (std::size_t i = 0; i < firstWait; ++i)
    sendsBefore += p[0][i].kind == MpiOpKind::kIsend ? 1u : 0u;
  EXPECT_EQ(sendsBefore, 4u + 2u);  // octant 0: 4; octant 1 (-x +y): 2 in y
  everySendIsReceived(p);
  testing::replay(p, 4, 2);
  for (std::uint32_t n : {6u, 9u, 16u}) {  // other grids, more octants in flight
    mp.ranks = n;
    mp.octantsInFlight = 4;
    const Programs q = programOf(mp);
    everySendIsReceived(q);
    testing::replay(q, 4, 2);
  }
}

// 2x2x2 ranks, 8^3 cells, 2 levels: halos of 8 x 8 x 8 = 512 then 4 x 4 x 8
// = 128 bytes on the way down and again up; the coarse grid (8 >> 2)^3 x 8
// = 64 bytes per rank gathered to rank 0 and scattered back.
TEST(Motifs, MultigridCoarsensItsHalosAndGathersTheCoarseGrid) {
  MotifParams mp = params(Motif::kMultigrid, 8, 8);
  mp.levels = 2;
  const Programs p = programOf(mp);
  const Traffic f = traffic(p);
  EXPECT_EQ((f.msgs.at({1, 0})), (std::vector<std::int64_t>{512, 128, 64, 128, 512, 8}));
  EXPECT_EQ((f.msgs.at({0, 1})), (std::vector<std::int64_t>{512, 128, 64, 128, 512, 8}));
  EXPECT_EQ((f.msgs.at({7, 0})), (std::vector<std::int64_t>{64}));  // gather only
  everySendIsReceived(p);
  testing::replay(p, 4, 2);
  // More levels than halvings: the edge stays one cell, and so does the
  // coarse grid each rank hands in (8 bytes, not 1).
  mp.cells = 4;
  mp.levels = 4;
  const Traffic g = traffic(programOf(mp));
  EXPECT_EQ((g.msgs.at({7, 0})), (std::vector<std::int64_t>{8}));
}

// 8 ranks on 4 x 2 pencils, 4^3 complex points each (1024 bytes): the row
// alltoall (4 ranks) moves 256 bytes per pair, the column one (2 ranks) 512;
// forward rows then columns, inverse columns then rows.
TEST(Motifs, Fft3dTransposesInRowsThenColumns) {
  const Programs p = programOf(params(Motif::kFft3d, 8, 4));
  const Traffic f = traffic(p);
  for (std::uint32_t r = 0; r < 8; ++r) {
    EXPECT_EQ(f.sent[r], 3 * 2 + 1 * 2) << r;
    EXPECT_EQ(f.sentBytes[r], 3 * 256 * 2 + 512 * 2) << r;
  }
  EXPECT_EQ((f.msgs.at({0, 1})), (std::vector<std::int64_t>{256, 256}));  // same row
  EXPECT_EQ((f.msgs.at({0, 4})), (std::vector<std::int64_t>{512, 512}));  // same column
  EXPECT_EQ(f.count.count({0, 5}), 0u);
  everySendIsReceived(p);
  testing::replay(p, 4, 2);
}

// 2x2x2 ranks, periodic: per dimension both neighbours are the same rank and
// get a ghost message each, 4 x 4 x 24 = 384 bytes +-25%; every 2nd
// iteration atoms migrate to a drawn subset of the 26 neighbour offsets.
TEST(Motifs, ParticlesVaryTheirSizesAndMigrationNeighbours) {
  MotifParams mp = params(Motif::kParticles, 8, 4);
  mp.iterations = 4;
  mp.migrateEvery = 2;
  const Programs p = programOf(mp);
  const Traffic f = traffic(p);
  const std::vector<std::int64_t>& ghosts = f.msgs.at({0, 1});
  ASSERT_GE(ghosts.size(), 8u);  // 2 per iteration in x
  std::set<std::int64_t> sizes(ghosts.begin(), ghosts.end());
  EXPECT_GT(sizes.size(), 3u) << "sizes vary";
  for (std::int64_t b : ghosts) {
    if (b == 8) continue;  // the energy allreduce
    EXPECT_GE(b, 4 * 4 * 24 * 3 / 4 - 1);
    EXPECT_LE(b, 4 * 4 * 24 * 5 / 4 + 1);
  }
  // Migration: rank 0 reaches 7 other ranks through 26 offsets; the subset
  // differs between the two migrations and between seeds.
  everySendIsReceived(p);
  testing::replay(p, 4, 2);
  mp.seed = 2;
  const Traffic g = traffic(programOf(mp));
  EXPECT_NE(f.sentBytes, g.sentBytes);
}

TEST(Motifs, EveryMotifMatchesAndCompletesOnOddShapes) {
  for (Motif m : {Motif::kHalo3d, Motif::kHalo3d26, Motif::kSweep3d, Motif::kMultigrid,
                  Motif::kFft3d, Motif::kParticles}) {
    for (std::uint32_t n : {2u, 5u, 12u}) {
      MotifParams mp = params(m, n, 3);
      mp.iterations = 2;
      const Programs p = programOf(mp);
      SCOPED_TRACE(std::string(motifName(m)) + " on " + std::to_string(n));
      everySendIsReceived(p);
      testing::replay(p, 4, 2);
    }
  }
}

TEST(Motifs, ComputeFollowsTheFlopsModel) {
  MotifParams mp = params(Motif::kHalo3d, 8, 10);
  mp.computePerIteration = -1;
  mp.flopsPerCell = 100;
  mp.flopsPerS = 1e9;  // 1000 cells x 100 flops / 1e9 = 100 us
  const Programs p = programOf(mp);
  EXPECT_EQ(p[0][7].kind, MpiOpKind::kCompute);
  EXPECT_EQ(p[0][7].duration, 100'000'000);
}

TEST(Motifs, BadParametersNameTheRule) {
  const auto expectRule = [](const MotifParams& p, const char* what) {
    const Result<MpiTrace> t = generateMotif(p);
    ASSERT_FALSE(t) << what;
    EXPECT_NE(t.status().message().find(what), std::string::npos) << t.status().message();
  };
  MotifParams p;
  p.ranks = 1;
  expectRule(p, "ranks: must be in [2,");
  p = {};
  p.cells = 0;
  expectRule(p, "cells: must be in [1,");
  p = {};
  p.iterations = 0;
  expectRule(p, "iterations");
  p = {};
  p.octantsInFlight = 9;
  expectRule(p, "octants_in_flight");
  p = {};
  p.flopsPerS = 0;
  expectRule(p, "flops_per_s: must be > 0");
  p = {};
  p.flopsPerCell = 1e13;  // 3.3e19 ps per iteration at 32^3 cells and 1e10 flop/s
  expectRule(p, "beyond the time range");
  p = {};
  p.motif = Motif::kFft3d;
  p.cells = 4096;
  p.bytesPerCell = std::int64_t{1} << 28;  // 2^64 bytes per rank
  expectRule(p, "beyond any message ebb replays");
  EXPECT_FALSE(parseMotif("lulesh"));
  EXPECT_NE(parseMotif("lulesh").status().message().find("halo3d26"), std::string::npos);
  EXPECT_EQ(parseMotif("sweep3d").value(), Motif::kSweep3d);
}

}  // namespace
}  // namespace ebb::sim
