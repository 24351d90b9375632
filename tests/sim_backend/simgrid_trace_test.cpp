#include "workload/simgrid_trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fabric/kary_tree.h"
#include "sim_backend/mpi_replay.h"

namespace ebb::sim {
using namespace ebb::workload;  // the traces and collectives replayed here
namespace {

namespace fs = std::filesystem;

TEST(SimgridTrace, The32RankTraceParsesAndExpandsEveryCollective) {
  SimgridStats st;
  auto t = readSimgridTrace(std::string(EBB_TRACES_DIR) + "/simgrid-ti-32", 1e9, &st);
  ASSERT_TRUE(t) << t.status().toString();
  ASSERT_EQ(t->ranks.size(), 32u);
  // Per rank: 92 allReduce, 43 allToAllV, 29 allToAll, 22 barrier, 12 bcast,
  // 12 reduceScatter, 12 allGatherV, 5 gather (README of the traces).
  EXPECT_EQ(st.collectives, 92u + 43 + 29 + 22 + 12 + 12 + 12 + 5);
  EXPECT_EQ(t->sends, t->recvs);
  // Its 189 GB of payload are too heavy for a unit test at packet level; the
  // replay below runs a small trace with every operation instead.
  EXPECT_GT(t->sendBytes, 100'000'000'000u);
}

TEST(SimgridTrace, EveryOperationReplaysToCompletion) {
  const fs::path dir = fs::temp_directory_path() / ("ebb-ti-all-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (int r = 0; r < 4; ++r) {
    std::ofstream f(dir / ("ti_trace" + std::to_string(r) + ".txt"));
    f << r << " init\n"
      << r << " compute 1000\n"
      << r << " bcast 16\n"
      << r << " barrier\n"
      << r << " allReduce 8 500\n"
      << r << " allToAll 4 4\n"
      << r << " allToAllV 40 1 2 3 4 40 " << r + 1 << ' ' << r + 1 << ' ' << r + 1 << ' ' << r + 1
      << "\n"  // rank r receives r + 1 from every rank
      << r << " gather 8 8 0\n"
      << r << " reduceScatter 2 2 2 2 100\n"
      << r << " allGatherV 3 3 3 3 3\n"
      << r << " comm_size 4\n"
      << r << " finalize\n";
  }
  SimgridStats st;
  auto t = readSimgridTrace(dir.string(), 1e9, &st);
  ASSERT_TRUE(t) << t.status().toString();
  EXPECT_EQ(st.collectives, 8u);
  const fabric::Topology topo = fabric::KAryNTree::make(2, 2).value().build();
  agent::VirtualScheduler sched;
  FabricEmulator emu(topo, EmulatorConfig{}, sched);
  std::vector<fabric::HostId> place;
  for (std::uint32_t r = 0; r < 4; ++r)
    place.push_back(fabric::HostId(r));
  MpiReplay mpi(emu, *t, place);
  emu.onDelivery([&](const Delivery& d) { mpi.onDelivery(d); });
  mpi.start();
  sched.runAll();
  EXPECT_TRUE(mpi.done());
  EXPECT_EQ(mpi.messagesMatched(), t->sends);
  EXPECT_EQ(mpi.bytesSent(), t->sendBytes);
  // Compute: 1000 flops at 1 GF/s = 1 us before anything else.
  EXPECT_GT(mpi.runtime(), 1'000'000);
}

// The whole 32-rank trace (189 GB) on a 4-ary 3-tree with every link on, at
// MPI scale: 1 MiB packets on 64 B/cycle links (docs/replay.md), so the
// replay takes seconds, not hours. Every message is sent and matched.
TEST(SimgridTrace, The32RankTraceReplaysToCompletionWithItsTotals) {
  SimgridStats st;
  auto t = readSimgridTrace(std::string(EBB_TRACES_DIR) + "/simgrid-ti-32", 1e9, &st);
  ASSERT_TRUE(t) << t.status().toString();
  const fabric::Topology topo = fabric::KAryNTree::make(4, 3).value().build();
  EmulatorConfig cfg;
  cfg.flitBytes = 64;
  cfg.packetBytes = 1 << 20;
  cfg.vcBufferBytes = 1 << 20;
  agent::VirtualScheduler sched;
  FabricEmulator emu(topo, cfg, sched);
  std::vector<fabric::HostId> place;
  for (std::uint32_t r = 0; r < 32; ++r)
    place.push_back(fabric::HostId(r));
  MpiReplay mpi(emu, *t, place);
  emu.onDelivery([&](const Delivery& d) { mpi.onDelivery(d); });
  mpi.start();
  sched.runAll();
  EXPECT_TRUE(mpi.done());
  EXPECT_EQ(mpi.messagesSent(), t->sends);
  EXPECT_EQ(mpi.messagesMatched(), t->sends);
  EXPECT_EQ(mpi.bytesSent(), t->sendBytes);
  // On the wire an empty message (a zero count in allToAllV) still takes one byte.
  std::uint64_t empty = 0;
  for (const auto& ops : t->ranks) {
    for (const MpiOp& op : ops)
      empty += op.kind == MpiOpKind::kIsend && op.bytes == 0 ? 1 : 0;
  }
  EXPECT_EQ(emu.stats().messagesDelivered, t->sends);
  EXPECT_EQ(emu.stats().bytesDelivered, t->sendBytes + empty);
}

TEST(SimgridTrace, PointToPointOpsReplay) {
  const fs::path dir = fs::temp_directory_path() / ("ebb-ti-p2p-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "ti_trace0.txt") << "0 init\n0 send 1 10\n0 Irecv 1 5 20\n0 wait\n"
                                          "0 isend 1 7\n0 waitAll\n0 allReduce 4 0\n";
  std::ofstream(dir / "ti_trace1.txt") << "1 init\n1 recv 0 10\n1 isend 0 5 20\n1 irecv 0 7\n"
                                          "1 waitall\n1 allreduce 4 0\n";
  auto t = readSimgridTrace(dir.string(), 1e9);
  ASSERT_TRUE(t) << t.status().toString();
  EXPECT_EQ(t->sends, 3u + 2u);
  EXPECT_EQ(t->sendBytes, 8u * (10 + 20 + 7 + 4 + 4));
  const fabric::Topology topo = fabric::KAryNTree::make(2, 1).value().build();
  agent::VirtualScheduler sched;
  FabricEmulator emu(topo, EmulatorConfig{}, sched);
  MpiReplay mpi(emu, *t, {fabric::HostId(0), fabric::HostId(1)});
  emu.onDelivery([&](const Delivery& d) { mpi.onDelivery(d); });
  mpi.start();
  sched.runAll();
  EXPECT_TRUE(mpi.done());
  EXPECT_EQ(mpi.messagesMatched(), 5u);
  std::ofstream(dir / "ti_trace1.txt") << "1 init\n1 recv 7 10\n";
  auto bad = readSimgridTrace(dir.string(), 1e9);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("ti_trace1.txt:2: peer rank 7 is not a rank of the trace"),
            std::string::npos)
      << bad.status().message();
}

// SimGrid's shared layout: every rank's lines in one file, interleaved. It
// reads as the same ranks in a folder of per-rank files; a folder's file
// still holds one rank, and a rank missing from the one file is named.
TEST(SimgridTrace, OneFileMayHoldEveryRank) {
  const fs::path dir = fs::temp_directory_path() / ("ebb-ti-one-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "split");
  std::ofstream(dir / "all.txt") << "0 init\n1 init\n0 compute 1000\n1 compute 1000\n"
                                    "0 send 1 100\n1 recv 0 100\n0 allReduce 4 0\n"
                                    "1 allreduce 4 0\n";
  std::ofstream(dir / "split" / "ti_trace0.txt")
      << "0 init\n0 compute 1000\n0 send 1 100\n0 allReduce 4 0\n";
  std::ofstream(dir / "split" / "ti_trace1.txt")
      << "1 init\n1 compute 1000\n1 recv 0 100\n1 allreduce 4 0\n";
  auto one = readSimgridTrace((dir / "all.txt").string(), 1e9);
  auto split = readSimgridTrace((dir / "split").string(), 1e9);
  ASSERT_TRUE(one) << one.status().toString();
  ASSERT_TRUE(split) << split.status().toString();
  ASSERT_EQ(one->ranks.size(), 2u);
  EXPECT_EQ(one->sends, split->sends);
  EXPECT_EQ(one->sendBytes, split->sendBytes);
  for (std::size_t r = 0; r < 2; ++r) {
    ASSERT_EQ(one->ranks[r].size(), split->ranks[r].size()) << r;
    for (std::size_t i = 0; i < one->ranks[r].size(); ++i) {
      EXPECT_EQ(one->ranks[r][i].kind, split->ranks[r][i].kind) << r << " " << i;
      EXPECT_EQ(one->ranks[r][i].peer, split->ranks[r][i].peer) << r << " " << i;
    }
  }
  std::ofstream(dir / "split" / "ti_trace1.txt") << "1 init\n0 compute 5\n";
  auto mixed = readSimgridTrace((dir / "split").string(), 1e9);
  ASSERT_FALSE(mixed);
  EXPECT_NE(mixed.status().message().find("ti_trace1.txt:2: rank 0 in a file of rank 1"),
            std::string::npos)
      << mixed.status().message();
  std::ofstream(dir / "gap.txt") << "0 init\n2 init\n";
  auto gap = readSimgridTrace((dir / "gap.txt").string(), 1e9);
  ASSERT_FALSE(gap);
  EXPECT_NE(gap.status().message().find("gap.txt: no line of rank 1"), std::string::npos)
      << gap.status().message();
}

TEST(SimgridTrace, BadInputNamesTheFileAndLine) {
  const fs::path dir = fs::temp_directory_path() / ("ebb-ti-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto write = [&](int rank, const std::string& text) {
    std::ofstream(dir / ("ti_trace" + std::to_string(rank) + ".txt")) << text;
  };
  write(0, "0 init\n0 compute 100\n0 bcast 4\n");
  write(1, "1 init\n1 compute 100\n1 allReduce 4 10\n");
  auto t = readSimgridTrace(dir.string(), 1e9);
  ASSERT_FALSE(t);
  EXPECT_NE(t.status().message().find("rank 1 calls allreduce where rank 0 calls bcast"),
            std::string::npos)
      << t.status().message();
  write(1, "1 init\n1 frobnicate 3\n");
  t = readSimgridTrace(dir.string(), 1e9);
  ASSERT_FALSE(t);
  EXPECT_NE(t.status().message().find("ti_trace1.txt:2: unknown operation 'frobnicate'"),
            std::string::npos)
      << t.status().message();
  write(1, "1 compute abc\n");
  t = readSimgridTrace(dir.string(), 1e9);
  ASSERT_FALSE(t);
  EXPECT_NE(t.status().message().find("ti_trace1.txt:1: argument 'abc'"), std::string::npos);
  // Peers outside the trace, or the rank itself, with file and line.
  write(1, "1 init\n1 send 7 64\n");
  t = readSimgridTrace(dir.string(), 1e9);
  ASSERT_FALSE(t);
  EXPECT_NE(t.status().message().find(
                "ti_trace1.txt:2: peer rank 7 is not a rank of the trace (it has 2 ranks, 0..1)"),
            std::string::npos)
      << t.status().message();
  write(1, "1 init\n1 compute 5\n1 isend 1 64\n");
  t = readSimgridTrace(dir.string(), 1e9);
  ASSERT_FALSE(t);
  EXPECT_NE(t.status().message().find("ti_trace1.txt:3: rank 1 names itself as its peer"),
            std::string::npos)
      << t.status().message();
  write(1, std::string("1 init\n\0\x01garbage\n", 16));
  t = readSimgridTrace(dir.string(), 1e9);
  ASSERT_FALSE(t);
  EXPECT_NE(t.status().message().find("ti_trace1.txt:2: binary data (NUL byte): not a text trace"),
            std::string::npos)
      << t.status().message();
  write(1, "1 init\n1 compute 100\n1 BCAST 4\n");  // case-insensitive
  t = readSimgridTrace(dir.string(), 1e9);
  EXPECT_TRUE(t) << t.status().toString();
  EXPECT_FALSE(readSimgridTrace((dir / "missing").string(), 1e9));
}

// A collective's root must be a rank of the trace, and every rank must give
// the same root and count (MPI's rule): no silent wrap, no rank 0 wins.
TEST(SimgridTrace, CollectivesWhoseRanksDisagreeOrNameNoRankAreErrors) {
  const fs::path dir = fs::temp_directory_path() / ("ebb-ti-root-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto write = [&](int rank, const std::string& text) {
    std::ofstream(dir / ("ti_trace" + std::to_string(rank) + ".txt")) << text;
  };
  const auto error = [&]() {
    auto t = readSimgridTrace(dir.string(), 1e9);
    return t ? std::string("accepted") : t.status().message();
  };
  write(0, "0 init\n0 bcast 4 2\n");
  write(1, "1 init\n1 bcast 4 2\n");
  EXPECT_NE(error().find("ti_trace0.txt:2: bcast root 2 is not a rank of the trace (0..1)"),
            std::string::npos)
      << error();
  write(0, "0 init\n0 gather 3 3 1\n");
  write(1, "1 init\n1 gather 3 3 0\n");
  EXPECT_NE(error().find("ti_trace1.txt:2: gather root is 0 where rank 0 gives 1"),
            std::string::npos)
      << error();
  write(0, "0 init\n0 reduce 8 10 1\n");
  write(1, "1 init\n1 reduce 9 10 1\n");
  EXPECT_NE(error().find("ti_trace1.txt:2: reduce count is 9 where rank 0 gives 8"),
            std::string::npos)
      << error();
  write(1, "1 init\n1 reduce\n");
  EXPECT_NE(error().find("ti_trace1.txt:2: reduce needs at least 1 arguments"), std::string::npos)
      << error();
  write(0, "0 init\n0 allreduce 8\n0 alltoall 5\n");
  write(1, "1 init\n1 allreduce 8\n1 alltoall 6\n");
  EXPECT_NE(error().find("ti_trace1.txt:3: alltoall count is 6 where rank 0 gives 5"),
            std::string::npos)
      << error();
  write(1, "1 init\n1 allreduce 8\n1 alltoall 5\n");
  EXPECT_EQ(error(), "accepted");
  fs::remove_all(dir);
}

// SimGrid's per-pair collectives: a line cut mid-way or run on (a wrong
// argument count) shifted or dropped counts silently; receive counts that do
// not match the peers' send counts were never compared; a wait with nothing
// outstanding was a no-op.
TEST(SimgridTrace, PerPairCollectivesAreCheckedWhole) {
  const fs::path dir = fs::temp_directory_path() / ("ebb-ti-pairs-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto write = [&](int rank, const std::string& text) {
    std::ofstream(dir / ("ti_trace" + std::to_string(rank) + ".txt")) << text;
  };
  const auto error = [&]() {
    auto t = readSimgridTrace(dir.string(), 1e9);
    return t ? std::string("accepted") : t.status().message();
  };
  // 2 ranks: rank 0 sends 10 to each, receives 10 from rank 0 and 20 from 1.
  write(0, "0 init\n0 allToAllV 20 10 10 30 10 20\n");
  write(1, "1 init\n1 allToAllV 40 20 20 30 10 20\n");
  EXPECT_EQ(error(), "accepted");
  write(0, "0 init\n0 allToAllV 20 10 10 30 10 20 0 0\n");  // with datatypes
  EXPECT_EQ(error(), "accepted");
  write(0, "0 init\n0 allToAllV 20 10 10 30 10\n");
  EXPECT_NE(error().find("ti_trace0.txt:2: alltoallv takes 6 or 8 arguments (<send size> <a send "
                         "count per rank> <receive size> <a receive count per rank> [<send "
                         "type> <receive type>]), not 5"),
            std::string::npos)
      << error();
  write(0, "0 init\n0 allToAllV 20 10 10 30 10 20 0 0 0\n");
  EXPECT_NE(error().find("ti_trace0.txt:2: alltoallv takes 6 or 8 arguments"), std::string::npos)
      << error();
  write(0, "0 init\n0 allToAllV 20 10 10 30 10 50\n");
  EXPECT_NE(error().find("ti_trace0.txt:2: alltoallv receive count from rank 1 is 50 where rank 1 "
                         "sends 20 to rank 0 (" +
                         (dir / "ti_trace1.txt").string() + ":2); the two sides must agree"),
            std::string::npos)
      << error();
  write(0, "0 init\n0 allGatherV 10 10 20\n");
  write(1, "1 init\n1 allGatherV 20 10 20\n");
  EXPECT_EQ(error(), "accepted");
  write(1, "1 init\n1 allGatherV 20 10 20 0 10\n");  // with displacements
  EXPECT_EQ(error(), "accepted");
  write(1, "1 init\n1 allGatherV 20 10\n");
  EXPECT_NE(error().find("ti_trace1.txt:2: allgatherv takes 3, 5 or 7 arguments"),
            std::string::npos)
      << error();
  write(1, "1 init\n1 allGatherV 20 10 30\n");
  EXPECT_NE(error().find("ti_trace1.txt:2: allgatherv receive count from rank 1 is 30 where rank "
                         "1 sends 20 to rank 1"),
            std::string::npos)
      << error();
  write(0, "0 init\n0 reduceScatter 10 5 100\n");
  write(1, "1 init\n1 reduceScatter 10 5 100\n");
  EXPECT_EQ(error(), "accepted");
  write(1, "1 init\n1 reduceScatter 10 5\n");
  EXPECT_NE(error().find("ti_trace1.txt:2: reducescatter takes 3 or 4 arguments (<a receive count "
                         "per rank> <flops> [<datatype>]), not 2"),
            std::string::npos)
      << error();
  write(1, "1 init\n1 reduceScatter 10 6 100\n");
  EXPECT_NE(error().find("ti_trace1.txt:2: reducescatter receive count 1 is 6 where rank 0 gives "
                         "5"),
            std::string::npos)
      << error();
  write(0, "0 init\n0 isend 1 4\n0 wait\n0 wait\n");
  write(1, "1 init\n1 recv 0 4\n");
  EXPECT_NE(error().find("ti_trace0.txt:4: wait but rank 0 has no isend or irecv outstanding"),
            std::string::npos)
      << error();
  write(0, "0 init\n0 isend 1 4\n0 wait\n");
  EXPECT_EQ(error(), "accepted");
  fs::remove_all(dir);
}

// A rank file that cannot be read (here a symlink to itself) is an error
// naming it, not an exception out of std::filesystem, nor a skipped rank.
TEST(SimgridTrace, AnUnreadableEntryOfTheFolderIsNamed) {
  const fs::path dir = fs::temp_directory_path() / ("ebb-ti-loop-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "t0.txt") << "0 send 1 1\n";
  std::ofstream(dir / "t1.txt") << "1 recv 0 1\n";
  fs::create_symlink("self.txt", dir / "self.txt");
  fs::create_symlink("missing.txt", dir / "dangling.txt");
  fs::create_symlink("notes", dir / "notes");  // not a .txt: not looked at
  // Each bad entry is named, whichever the folder lists first.
  for (int round = 0; round < 2; ++round) {
    const auto t = readSimgridTrace(dir.string(), 1e9);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.status().code(), ErrorCode::kIo);
    const std::string m = t.status().message();
    const fs::path named =
        m.find("cannot read " + (dir / "self.txt").string() + ": ") != std::string::npos
            ? dir / "self.txt"
            : dir / "dangling.txt";
    EXPECT_NE(m.find("cannot read " + named.string() + ": "), std::string::npos) << m;
    fs::remove(named);
  }
  EXPECT_TRUE(readSimgridTrace(dir.string(), 1e9));
  // The trace path itself a loop.
  fs::create_symlink("loop", dir / "loop");
  const auto t = readSimgridTrace((dir / "loop").string(), 1e9);
  ASSERT_FALSE(t);
  EXPECT_NE(t.status().message().find("cannot open trace " + (dir / "loop").string() + ": "),
            std::string::npos)
      << t.status().message();
}

// Found by fuzz/simgrid_ti_fuzz.cpp: a huge argument wrapped to a negative
// count, and compute beyond what picoseconds in 64 bits hold overflowed.
TEST(SimgridTrace, ArgumentsAndComputeBeyondWhatEbbRepresentsAreAnError) {
  const fs::path dir = fs::temp_directory_path() / ("ebb-ti-range-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "ti_trace0.txt";
  std::ofstream(file) << "0 init\n0 compute 2385555555555555555555555555555555555550\n";
  auto t = readSimgridTrace(file.string(), 1e9);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.status().code(), ErrorCode::kParse);
  EXPECT_NE(t.status().message().find("ti_trace0.txt:2: argument "
                                      "'2385555555555555555555555555555555555550' of compute is "
                                      "beyond 1e+15"),
            std::string::npos)
      << t.status().message();
  // In range as flops, but too long at a slow rate.
  std::ofstream(file) << "0 init\n0 compute 1e15\n";
  t = readSimgridTrace(file.string(), 1.0);
  ASSERT_FALSE(t);
  EXPECT_NE(t.status().message().find("ti_trace0.txt:2: 1000000000000000 flops at 1 flops/s last "
                                      "beyond"),
            std::string::npos)
      << t.status().message();
  std::ofstream(file) << "0 init\n0 allReduce 8 1e15\n";
  t = readSimgridTrace(file.string(), 1.0);
  ASSERT_FALSE(t);
  EXPECT_NE(t.status().message().find("ti_trace0.txt:2: 1000000000000000 flops"), std::string::npos)
      << t.status().message();
  // The same at 1 GF/s is 11.6 days of compute and reads.
  std::ofstream(file) << "0 init\n0 compute 1e15\n";
  t = readSimgridTrace(file.string(), 1e9);
  ASSERT_TRUE(t) << t.status().toString();
  ASSERT_EQ(t->ranks[0].size(), 1u);
  EXPECT_EQ(t->ranks[0][0].duration, 1'000'000'000'000'000'000);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ebb::sim
