// An MPI rank is a process (an OTF2 location group of type PROCESS), not
// each of its threads (CPU_THREAD locations).

#include <gtest/gtest.h>

#include "workload/otf2_trace.h"

#ifdef EBB_HAVE_OTF2
#include "tests/workload/otf2_test_archive.h"

namespace ebb::workload {
namespace {

using testing::Otf2Archive;
using testing::Otf2Event;
using testing::Otf2Location;

// An MPI call on a thread: Enter `region` at t, its MPI event at t + 10,
// Leave at t + 20.
std::vector<Otf2Event> call(OTF2_RegionRef region, OTF2_TimeStamp t, Otf2Event mpi) {
  mpi.time = t + 10;
  return {
      {Otf2Event::kEnter, t, 0, 0, 0, region}, mpi, {Otf2Event::kLeave, t + 20, 0, 0, 0, region}};
}

std::vector<Otf2Event> operator+(std::vector<Otf2Event> a, const std::vector<Otf2Event>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Otf2Event send(std::uint32_t to, std::uint64_t bytes) {
  return {Otf2Event::kSend, 0, to, bytes};
}
Otf2Event recv(std::uint32_t from, std::uint64_t bytes) {
  return {Otf2Event::kRecv, 0, from, bytes};
}
Otf2Event isend(std::uint32_t to, std::uint64_t bytes, std::uint64_t req) {
  return {Otf2Event::kIsend, 0, to, bytes, req};
}
Otf2Event isendComplete(std::uint64_t req) {
  return {Otf2Event::kIsendComplete, 0, 0, 0, req};
}
Otf2Event barrier() {
  return {Otf2Event::kCollective, 0, 0, 1};
}

// Score-P's ids: thread k of rank r is location (k << 32) | r.
constexpr OTF2_LocationRef thread1(OTF2_LocationRef rank) {
  return (OTF2_LocationRef{1} << 32) | rank;
}

// (kind, peer, bytes) of each message op, and the compute durations (ps), of
// a rank, in order.
using Msg = std::tuple<MpiOpKind, std::uint32_t, std::int64_t>;
std::vector<Msg> messages(const std::vector<MpiOp>& ops) {
  std::vector<Msg> out;
  for (const MpiOp& op : ops) {
    if (op.kind == MpiOpKind::kSend || op.kind == MpiOpKind::kRecv ||
        op.kind == MpiOpKind::kIsend || op.kind == MpiOpKind::kIrecv)
      out.emplace_back(op.kind, op.peer, op.bytes);
  }
  return out;
}
std::vector<TimePs> computes(const std::vector<MpiOp>& ops) {
  std::vector<TimePs> out;
  for (const MpiOp& op : ops) {
    if (op.kind == MpiOpKind::kCompute && op.duration > 0) out.push_back(op.duration);
  }
  return out;
}

// Two processes of two threads each (Score-P's layout: the master thread is
// MPI_COMM_WORLD's location). The threads' events merge, in time order, into
// their process's rank; peers are ranks; the time when none of a process's
// threads is in MPI is its compute. Each thread was a rank of its own: 4
// ranks, rank 2 sending what rank 1 expects from rank 0.
TEST(Otf2Threads, TheThreadsOfAProcessAreOneRankInTimeOrder) {
  const auto dir = testing::otf2ScratchDir("threads");
  using testing::kMpiBarrier;
  using testing::kMpiIsend;
  using testing::kMpiRecv;
  using testing::kMpiSend;
  using testing::kMpiWait;
  Otf2Archive a;
  a.world = {0, 1};
  a.locations = {
      {0, 0, call(kMpiSend, 100, send(1, 100)) + call(kMpiBarrier, 500, barrier())},
      {thread1(0), 0,
       call(kMpiIsend, 200, isend(1, 200, 1)) + call(kMpiWait, 300, isendComplete(1))},
      // Rank 1's second thread enters MPI while its first is still inside.
      {1, 1, call(kMpiRecv, 150, recv(0, 100)) + call(kMpiBarrier, 500, barrier())},
      {thread1(1),
       1,
       {{Otf2Event::kEnter, 160, 0, 0, 0, kMpiRecv},
        {Otf2Event::kRecv, 260, 0, 200},
        {Otf2Event::kLeave, 270, 0, 0, 0, kMpiRecv}}},
  };
  Otf2Stats st;
  auto t = readOtf2Trace(testing::writeOtf2Archive(dir, a), {}, &st);
  ASSERT_TRUE(t) << t.status().toString();
  ASSERT_EQ(t->ranks.size(), 2u);
  using K = MpiOpKind;
  // Then the barrier's one-byte messages.
  EXPECT_EQ(messages(t->ranks[0]),
            (std::vector<Msg>{
                {K::kSend, 1, 100}, {K::kIsend, 1, 200}, {K::kIsend, 1, 1}, {K::kIrecv, 1, 1}}));
  EXPECT_EQ(messages(t->ranks[1]),
            (std::vector<Msg>{
                {K::kRecv, 0, 100}, {K::kRecv, 0, 200}, {K::kIsend, 0, 1}, {K::kIrecv, 0, 1}}));
  // 1 tick = 1 ns. Rank 0: 120..200, 220..300, 320..500 outside MPI (the
  // isend's own 20 ns count too); rank 1: only 270..500, its threads'
  // calls overlapping.
  EXPECT_EQ(computes(t->ranks[0]), (std::vector<TimePs>{80000, 20000, 80000, 180000}));
  EXPECT_EQ(computes(t->ranks[1]), (std::vector<TimePs>{230000}));
  EXPECT_EQ(st.p2pSends, 2u);
  EXPECT_EQ(st.collectives, 1u);
  std::filesystem::remove_all(dir);
}

// Errors on a thread name its rank and its location, and count the events
// in the thread's own file.
TEST(Otf2Threads, AnErrorOnAThreadNamesItsRankAndLocation) {
  const auto dir = testing::otf2ScratchDir("threaderr");
  Otf2Archive a;
  a.world = {0, 1};
  Otf2Event self = send(0, 8);
  self.time = 10;
  a.locations = {{0, 0, {}}, {thread1(0), 0, {self}}, {1, 1, {}}};
  const std::string anchor = testing::writeOtf2Archive(dir, a);
  auto t = readOtf2Trace(anchor);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.status().code(), ErrorCode::kParse);
  EXPECT_NE(t.status().message().find(anchor + ": rank 0 (location 4294967296), event 1: rank 0 "
                                               "names itself as its peer"),
            std::string::npos)
      << t.status().message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ebb::workload
#endif
