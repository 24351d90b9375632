#include "sim_backend/mpi_replay.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fabric/kary_tree.h"
#include "workload/mpi_trace.h"

namespace ebb::sim {
using namespace ebb::workload;  // the traces and collectives replayed here
namespace {

using fabric::HostId;

// One message across one switch (2 links), as in the zero-load latency test.
TimePs cfg_oneWay(const EmulatorConfig& c) {
  return c.serializationPs(1) + c.linkLatencyPs + c.routingDelayPs + c.serializationPs(64) +
         c.linkLatencyPs;
}

std::vector<HostId> linear(std::size_t n) {
  std::vector<HostId> p;
  for (std::size_t i = 0; i < n; ++i)
    p.push_back(HostId(static_cast<std::uint32_t>(i)));
  return p;
}

struct Replayed {
  TimePs runtime;
  std::uint64_t sent;
  std::uint64_t bytes;
  std::uint64_t matched;
  bool done;
};

Replayed replay(const fabric::Topology& topo, const MpiTrace& trace, const EmulatorConfig& cfg) {
  agent::VirtualScheduler sched;
  FabricEmulator emu(topo, cfg, sched);
  MpiReplay mpi(emu, trace, linear(trace.ranks.size()));
  emu.onDelivery([&](const Delivery& d) { mpi.onDelivery(d); });
  mpi.start();
  while (!mpi.done() && sched.runOne()) {
  }
  return {mpi.runtime(), mpi.messagesSent(), mpi.bytesSent(), mpi.messagesMatched(), mpi.done()};
}

TEST(MpiReplay, AmgTraceReplaysToCompletionWithTheTracesTotals) {
  // EBB_TRACES_DIR: the project's shared traces (a CMake option, tests/CMakeLists.txt).
  auto trace = readAmgCsv(std::string(EBB_TRACES_DIR) + "/amg2013-27/amg27_events.csv");
  ASSERT_TRUE(trace) << trace.status().toString() << " (set -DEBB_TRACES_DIR)";
  EXPECT_EQ(trace->ranks.size(), 27u);
  EXPECT_EQ(trace->sends, 15'524u);
  EXPECT_EQ(trace->recvs, 15'524u);
  EXPECT_EQ(trace->waits, 1'508u);
  const fabric::Topology topo = fabric::KAryNTree::make(4, 3).value().build();
  const Replayed r = replay(topo, *trace, EmulatorConfig{});
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.sent, 15'524u);
  EXPECT_EQ(r.matched, 15'524u);
  EXPECT_EQ(r.bytes, trace->sendBytes);
  EXPECT_NEAR(static_cast<double>(r.bytes), 13.58e6, 0.01e6);
  // Closed loop: no rank finishes before its own compute is done; and the
  // replay is within 10% of the 84.9 ms the trace spans (the emulated
  // network is faster than the recorded one, so waits shrink).
  TimePs longestCompute = 0;
  for (const auto& ops : trace->ranks) {
    TimePs c = 0;
    for (const auto& op : ops)
      c += op.kind == MpiOpKind::kCompute ? op.duration : 0;
    longestCompute = std::max(longestCompute, c);
  }
  EXPECT_GE(r.runtime, longestCompute);
  EXPECT_NEAR(static_cast<double>(r.runtime), 84.9e9, 8.5e9);
}

// Ping-pong with long compute gaps: under deep-sleep every hop finds its link
// asleep, so the runtime grows by exactly 4 wake-ups per round trip.
TEST(MpiReplay, PingPongRuntimeGrowsByExactlyTheWakeUps) {
  const TimePs gap = 100'000'000;  // 100 us: every link is asleep again
  const int rounds = 20;
  MpiTrace t;
  t.ranks.resize(2);
  for (int i = 0; i < rounds; ++i) {
    t.ranks[0].push_back({MpiOpKind::kCompute, gap, 0, 0, 0, 0});
    t.ranks[0].push_back({MpiOpKind::kIsend, 0, 1, 64, 7, 0});
    t.ranks[0].push_back({MpiOpKind::kIrecv, 0, 1, 64, 7, 0});
    t.ranks[0].push_back({MpiOpKind::kWaitall, 0, 0, 0, 0, 2});
    t.ranks[1].push_back({MpiOpKind::kIrecv, 0, 0, 64, 7, 0});
    t.ranks[1].push_back({MpiOpKind::kWaitall, 0, 0, 0, 0, 1});
    t.ranks[1].push_back({MpiOpKind::kIsend, 0, 0, 64, 7, 0});
    t.ranks[1].push_back({MpiOpKind::kWaitall, 0, 0, 0, 0, 1});
  }
  const fabric::Topology topo = fabric::KAryNTree::make(2, 1).value().build();
  EmulatorConfig on;
  EmulatorConfig ds;
  ds.lpi = policies::LpiParams::table6(policies::LpiMode::kDeepSleep, 1);
  const Replayed a = replay(topo, t, on);
  const Replayed b = replay(topo, t, ds);
  ASSERT_TRUE(a.done);
  ASSERT_TRUE(b.done);
  EXPECT_EQ(a.matched, 2u * rounds);
  EXPECT_EQ(b.runtime - a.runtime, rounds * 4 * ds.lpi.wakeDeepSleep);
  // Closed loop: compute cannot overlap the messages (each round adds them).
  const TimePs oneWay = cfg_oneWay(on);
  EXPECT_EQ(a.runtime, rounds * (gap + 2 * oneWay));
}

// A blocking receive holds the rank until the message arrives: its later
// compute starts only then. A blocking send returns once delivered.
TEST(MpiReplay, BlockingReceiveDelaysTheRanksLaterCompute) {
  const TimePs before = 10'000'000, after = 5'000'000;
  MpiTrace t;
  t.ranks.resize(2);
  t.ranks[0] = {{MpiOpKind::kCompute, before, 0, 0, 0, 0}, {MpiOpKind::kSend, 0, 1, 64, 3, 0}};
  t.ranks[1] = {{MpiOpKind::kRecv, 0, 0, 64, 3, 0}, {MpiOpKind::kCompute, after, 0, 0, 0, 0}};
  const fabric::Topology topo = fabric::KAryNTree::make(2, 1).value().build();
  const EmulatorConfig cfg;
  const Replayed r = replay(topo, t, cfg);
  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.matched, 1u);
  EXPECT_EQ(r.runtime, before + cfg_oneWay(cfg) + after);
  // Without the blocking receive rank 1 would finish at `after`; with an
  // irecv and no wait it does.
  t.ranks[1] = {{MpiOpKind::kIrecv, 0, 0, 64, 3, 0}, {MpiOpKind::kCompute, after, 0, 0, 0, 0}};
  t.ranks[0] = {{MpiOpKind::kSend, 0, 1, 64, 3, 0}};
  EXPECT_EQ(replay(topo, t, cfg).runtime, after);
}

// wait completes exactly the request it names; wait with no name, the most recent.
TEST(MpiReplay, WaitCompletesTheNamedRequest) {
  const TimePs gap = 1'000'000;
  MpiTrace t;
  t.ranks.resize(2);
  // Rank 1 sends tag 1 at once and tag 2 after `gap`; rank 0 waits on tag 1 only.
  t.ranks[0] = {{MpiOpKind::kIrecv, 0, 1, 64, 2, 8},
                {MpiOpKind::kIrecv, 0, 1, 64, 1, 9},
                {MpiOpKind::kWait, 0, 0, 0, 0, 9},
                {MpiOpKind::kCompute, gap / 10, 0, 0, 0, 0},
                {MpiOpKind::kWait, 0, 0, 0, 0, 0}};
  t.ranks[1] = {{MpiOpKind::kIsend, 0, 0, 64, 1, 0},
                {MpiOpKind::kCompute, gap, 0, 0, 0, 0},
                {MpiOpKind::kIsend, 0, 0, 64, 2, 0},
                {MpiOpKind::kWaitall, 0, 0, 0, 0, 2}};
  const fabric::Topology topo = fabric::KAryNTree::make(2, 1).value().build();
  const EmulatorConfig cfg;
  const Replayed r = replay(topo, t, cfg);
  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.matched, 2u);
  EXPECT_EQ(r.runtime, gap + cfg_oneWay(cfg));
}

}  // namespace
}  // namespace ebb::sim

namespace ebb::sim {
namespace {

TEST(AmgCsv, BadInputNamesTheFileAndLine) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ebb-amg-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.csv").string();
  const std::pair<const char*, const char*> cases[] = {
      {"rank,op,t_enter_s,t_exit_s,peer,bytes,tag,request\n0,isend,0.1,0.2,1,64,0\n",
       "t.csv:2: 7 fields"},
      {"0,bcast,0.1,0.2,1,64,0,1\n", "t.csv:1: unknown op 'bcast'"},
      {"0,isend,0.2,0.1,1,64,0,1\n", "t.csv:1: t_exit_s '0.1'"},
      {"0,isend,x,0.1,1,64,0,1\n", "t.csv:1: t_enter_s 'x'"},
      {"0,isend,0.1,0.2,1,-5,0,1\n", "t.csv:1: bytes '-5'"},
      {"0,waitall,0.1,0.2,,,,\n", "t.csv:1: waitall needs its request count"},
      {"", "no MPI calls"},
  };
  for (const auto& [text, expect] : cases) {
    std::ofstream(path) << text;
    auto t = readAmgCsv(path);
    ASSERT_FALSE(t) << text;
    EXPECT_EQ(t.status().code(), ErrorCode::kParse);
    EXPECT_NE(t.status().message().find(expect), std::string::npos) << t.status().message();
  }
  auto missing = readAmgCsv("/nonexistent/amg.csv");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), ErrorCode::kIo);
  // Op names are case-insensitive.
  std::ofstream(path) << "0,ISEND,0.1,0.2,1,64,0,1\n1,IRecv,0.1,0.2,0,64,0,1\n";
  EXPECT_TRUE(readAmgCsv(path));
  // Blocking send/recv: their time is waiting, not compute.
  std::ofstream(path) << "0,send,0.1,0.3,1,64,0,\n1,Recv,0.0,0.3,0,64,0,\n";
  auto blocking = readAmgCsv(path);
  ASSERT_TRUE(blocking) << blocking.status().toString();
  EXPECT_EQ(blocking->sends, 1u);
  EXPECT_EQ(blocking->recvs, 1u);
  ASSERT_EQ(blocking->ranks[0].size(), 2u);  // compute 0.1 s, send
  EXPECT_EQ(blocking->ranks[0][1].kind, MpiOpKind::kSend);
  ASSERT_EQ(blocking->ranks[1].size(), 1u);
  EXPECT_EQ(blocking->ranks[1][0].kind, MpiOpKind::kRecv);
}

// Found by fuzz/amg_csv_fuzz.cpp: a time beyond what picoseconds in 64 bits
// hold became a negative compute duration instead of an error.
TEST(AmgCsv, TimesBeyondWhatEbbRepresentsAreAnError) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ebb-amg-range-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.csv").string();
  std::ofstream(path) << "0,isend,0.1,0.2,1,64,0,1\n0,irecv,0.3,2009166510,1,64,0,2\n";
  auto t = readAmgCsv(path);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.status().code(), ErrorCode::kParse);
  EXPECT_NE(t.status().message().find("t.csv:2: t_exit_s '2009166510' is beyond"),
            std::string::npos)
      << t.status().message();
  // The longest time that fits (9.2e6 s, about 106 days) still reads.
  std::ofstream(path) << "0,isend,0.1,9.2e6,1,64,0,1\n1,irecv,0.1,0.2,0,64,0,1\n";
  auto longest = readAmgCsv(path);
  ASSERT_TRUE(longest) << longest.status().toString();
  ASSERT_EQ(longest->ranks[0].size(), 3u);  // compute, isend, compute
  EXPECT_GT(longest->ranks[0][2].duration, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ebb::sim
