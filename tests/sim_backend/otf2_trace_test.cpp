#include "workload/otf2_trace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#ifdef EBB_HAVE_OTF2
#include <otf2/otf2.h>
#endif

#include "fabric/kary_tree.h"
#include "sim_backend/mpi_replay.h"

namespace ebb::sim {
using namespace ebb::workload;  // the traces and collectives replayed here
namespace {

struct Case {
  const char* dir;
  std::uint32_t ranks;
  std::uint64_t sends;  // MPI_Send, all of `bytes`
  std::int64_t bytes;
};

// TraceR's stencil4d traces (traces/README.md): every one replays to
// completion on a 4-ary 3-tree with all links on, with the trace's totals.
TEST(Otf2Trace, StencilTracesReplayToCompletionWithTheirTotals) {
  ASSERT_TRUE(haveOtf2()) << "built without OTF2: scripts/setup.sh installs libotf2-trace-dev";
  for (const Case& c : {Case{"traces-32", 32, 512, 131072}, Case{"traces-64", 64, 1024, 262144}}) {
    Otf2Stats st;
    auto t = readOtf2Trace(
        std::string(EBB_TRACES_DIR) + "/stencil4d-otf2/" + c.dir + "/traces.otf2", {}, &st);
    ASSERT_TRUE(t) << t.status().toString();
    EXPECT_EQ(t->ranks.size(), c.ranks);
    EXPECT_EQ(st.p2pSends, c.sends);
    EXPECT_EQ(st.recvs, c.sends);  // every MPI_Irecv completed
    EXPECT_EQ(st.p2pBytes, c.sends * static_cast<std::uint64_t>(c.bytes));
    EXPECT_EQ(st.collectives, 3u);  // barriers per rank
    const fabric::Topology topo = fabric::KAryNTree::make(4, 3).value().build();
    agent::VirtualScheduler sched;
    EmulatorConfig cfg;  // 4 KiB packets at 16 B/cycle: MPI-scale, and fast
    cfg.flitBytes = 16;
    cfg.packetBytes = 4096;
    cfg.vcBufferBytes = 4096;
    FabricEmulator emu(topo, cfg, sched);
    std::vector<fabric::HostId> place;
    for (std::uint32_t r = 0; r < c.ranks; ++r)
      place.push_back(fabric::HostId(r));
    MpiReplay mpi(emu, *t, place);
    emu.onDelivery([&](const Delivery& d) { mpi.onDelivery(d); });
    mpi.start();
    sched.runAll();
    EXPECT_TRUE(mpi.done()) << c.dir;
    EXPECT_EQ(mpi.messagesSent(), t->sends);
    EXPECT_EQ(mpi.messagesMatched(), t->sends);
    EXPECT_EQ(mpi.bytesSent(), t->sendBytes);
    // The application's bytes plus one byte per barrier message.
    EXPECT_EQ(t->sendBytes, st.p2pBytes + (t->sends - st.p2pSends));
  }
}

TEST(Otf2Trace, MissingOrGarbledTracesAreErrorsNotCrashes) {
  auto missing = readOtf2Trace("/nonexistent/traces.otf2");
  ASSERT_FALSE(missing);
  if (!haveOtf2()) {
    EXPECT_EQ(missing.status().code(), ErrorCode::kUnavailable);
    return;
  }
  EXPECT_EQ(missing.status().code(), ErrorCode::kIo);
  const auto path =
      std::filesystem::temp_directory_path() / ("ebb-otf2-" + std::to_string(::getpid()) + ".otf2");
  std::ofstream(path) << "not an otf2 anchor\n";
  auto garbled = readOtf2Trace(path.string());
  ASSERT_FALSE(garbled);
  EXPECT_NE(garbled.status().message().find(path.string()), std::string::npos);
  std::filesystem::remove(path);
}

// A broken event or local definition file is named itself, with its rank,
// not the anchor that lists it.
TEST(Otf2Trace, ABrokenRankFileIsNamedNotTheAnchor) {
  namespace fs = std::filesystem;
  const fs::path src = fs::path(EBB_TRACES_DIR) / "stencil4d-otf2" / "traces-32";
  if (!haveOtf2()) {  // built without libotf2-trace-dev: said so, never a crash
    EXPECT_EQ(readOtf2Trace((src / "traces.otf2").string()).status().code(),
              ErrorCode::kUnavailable);
    return;
  }
  const fs::path dir =
      fs::temp_directory_path() / ("ebb-otf2-broken-" + std::to_string(::getpid()));
  const auto damage = [&](const std::string& file, bool garble) {
    fs::remove_all(dir);
    fs::copy(src, dir, fs::copy_options::recursive);
    const fs::path p = dir / "traces" / file;
    std::string bytes;
    {
      std::ifstream in(p, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    if (garble) {
      for (std::size_t i = bytes.size() / 3; i < bytes.size() / 3 + 200 && i < bytes.size(); ++i)
        bytes[i] = static_cast<char>((i * 131) & 0xFF);
    }
    bytes.resize(bytes.size() * 2 / 3);
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
    return readOtf2Trace((dir / "traces.otf2").string());
  };
  auto evt = damage("5.evt", true);
  ASSERT_FALSE(evt);
  EXPECT_NE(evt.status().message().find((dir / "traces" / "5.evt").string() + " (rank 5"),
            std::string::npos)
      << evt.status().message();
  auto def = damage("7.def", false);
  ASSERT_FALSE(def);
  EXPECT_NE(def.status().message().find((dir / "traces" / "7.def").string() +
                                        ": unreadable local definitions (rank 7"),
            std::string::npos)
      << def.status().message();
  fs::remove_all(dir);
}

#ifdef EBB_HAVE_OTF2
// One event of a test archive (OTF2's MPI records; a collective is written as
// its CollectiveBegin and CollectiveEnd, two events).
struct Ev {
  enum Kind { kSend, kRecv, kIsend, kIsendComplete, kIrecvRequest, kIrecv, kCollective };
  Kind kind = kSend;
  std::uint32_t peer = 0;
  std::uint64_t length = 64;
  std::uint64_t req = 0;
  OTF2_CollectiveOp op = OTF2_COLLECTIVE_OP_BARRIER;
  std::uint32_t root = OTF2_UNDEFINED_UINT32;
  std::uint32_t tag = 7;
};
Ev send(std::uint32_t to, std::uint64_t length = 64) {
  return {Ev::kSend, to, length};
}
Ev recv(std::uint32_t from, std::uint64_t length = 64) {
  return {Ev::kRecv, from, length};
}
Ev isend(std::uint32_t to, std::uint64_t req) {
  return {Ev::kIsend, to, 64, req};
}
Ev isendComplete(std::uint64_t req) {
  return {Ev::kIsendComplete, 0, 0, req};
}
Ev irecvRequest(std::uint64_t req) {
  return {Ev::kIrecvRequest, 0, 0, req};
}
Ev irecv(std::uint32_t from, std::uint64_t req) {
  return {Ev::kIrecv, from, 64, req};
}
Ev collective(OTF2_CollectiveOp op, std::uint32_t root = OTF2_UNDEFINED_UINT32,
              std::uint64_t bytes = 64) {
  Ev e{Ev::kCollective, 0, bytes};
  e.op = op;
  e.root = root;
  return e;
}

// An OTF2 archive in `dir` with one location (rank) per entry of `ranks`,
// each with its events, one every 1000 ticks; the clock ticks `resolution`
// times a second.
std::string writeTrace(const std::filesystem::path& dir, const std::vector<std::vector<Ev>>& ranks,
                       std::uint64_t resolution = 1000000000) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  OTF2_Archive* a = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1 << 20, 1 << 22,
                                      OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  OTF2_FlushCallbacks flush = {[](void*, OTF2_FileType, OTF2_LocationRef, void*,
                                  bool) -> OTF2_FlushType { return OTF2_FLUSH; },
                               nullptr};
  OTF2_Archive_SetFlushCallbacks(a, &flush, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(a);
  OTF2_Archive_OpenEvtFiles(a);
  std::vector<std::uint64_t> events(ranks.size(), 0);
  for (OTF2_LocationRef loc = 0; loc < ranks.size(); ++loc) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, loc);
    OTF2_TimeStamp t = 0;
    for (const Ev& e : ranks[loc]) {
      t += 1000;
      switch (e.kind) {
        case Ev::kSend:
          OTF2_EvtWriter_MpiSend(w, nullptr, t, e.peer, 0, e.tag, e.length);
          break;
        case Ev::kRecv:
          OTF2_EvtWriter_MpiRecv(w, nullptr, t, e.peer, 0, e.tag, e.length);
          break;
        case Ev::kIsend:
          OTF2_EvtWriter_MpiIsend(w, nullptr, t, e.peer, 0, e.tag, e.length, e.req);
          break;
        case Ev::kIsendComplete:
          OTF2_EvtWriter_MpiIsendComplete(w, nullptr, t, e.req);
          break;
        case Ev::kIrecvRequest:
          OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, t, e.req);
          break;
        case Ev::kIrecv:
          OTF2_EvtWriter_MpiIrecv(w, nullptr, t, e.peer, 0, e.tag, e.length, e.req);
          break;
        case Ev::kCollective:
          OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t);
          OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t, e.op, 0, e.root, e.length, e.length);
          ++events[loc];
          break;
      }
      ++events[loc];
    }
    OTF2_Archive_CloseEvtWriter(a, w);
  }
  OTF2_Archive_CloseEvtFiles(a);
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
  OTF2_GlobalDefWriter_WriteClockProperties(g, resolution, 0, 100000, OTF2_UNDEFINED_TIMESTAMP);
  OTF2_GlobalDefWriter_WriteString(g, 0, "");
  OTF2_GlobalDefWriter_WriteString(g, 1, "node");
  OTF2_GlobalDefWriter_WriteString(g, 2, "rank");
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 1, 1, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  for (OTF2_LocationRef loc = 0; loc < ranks.size(); ++loc) {
    OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(loc), 2,
                                            OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                            OTF2_UNDEFINED_LOCATION_GROUP);
    OTF2_GlobalDefWriter_WriteLocation(g, loc, 2, OTF2_LOCATION_TYPE_CPU_THREAD, events[loc],
                                       static_cast<OTF2_LocationGroupRef>(loc));
  }
  OTF2_Archive_CloseGlobalDefWriter(a, g);
  OTF2_Archive_Close(a);
  return (dir / "traces.otf2").string();
}

// A two-rank OTF2 archive in `dir`: rank 0 sends `sends` messages to rank 1
// (tag 7, 64 bytes each), rank 1 receives `recvs` of them.
std::string writeTwoRankTrace(const std::filesystem::path& dir, int sends, int recvs) {
  return writeTrace(dir, {std::vector<Ev>(static_cast<std::size_t>(sends), send(1)),
                          std::vector<Ev>(static_cast<std::size_t>(recvs), recv(0))});
}

// The message of reading a trace that must be refused (E_PARSE).
std::string refusal(const std::string& anchor) {
  auto t = readOtf2Trace(anchor);
  EXPECT_FALSE(t) << anchor << " was accepted";
  if (t) return {};
  EXPECT_EQ(t.status().code(), ErrorCode::kParse) << t.status().toString();
  return t.status().message();
}

std::filesystem::path scratchDir(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("ebb-otf2-" + name + "-" + std::to_string(::getpid()));
}

// Sends and receives must pair up, as in the other trace formats: a trace
// cut short is refused by name, not replayed into a deadlock.
TEST(Otf2Trace, SendsWithoutReceivesAreRefusedByName) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ebb-otf2-pairs-" + std::to_string(::getpid()));
  auto whole = readOtf2Trace(writeTwoRankTrace(dir, 3, 3));
  ASSERT_TRUE(whole) << whole.status().toString();
  EXPECT_EQ(whole->sends, 3u);
  EXPECT_EQ(whole->recvs, 3u);
  const std::string anchor = writeTwoRankTrace(dir, 3, 1);
  auto cut = readOtf2Trace(anchor);
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.status().code(), ErrorCode::kParse);
  EXPECT_NE(cut.status().message().find(anchor + " (send number 2 of these): this send from rank "
                                                 "0 to rank 1 (tag 7) and 1 after it have no "
                                                 "matching receive on rank 1"),
            std::string::npos)
      << cut.status().message();
  auto extra = readOtf2Trace(writeTwoRankTrace(dir, 1, 2));
  ASSERT_FALSE(extra);
  EXPECT_NE(extra.status().message().find("(receive number 2 of these): this receive on rank 1 "
                                          "from rank 0 (tag 7) and 0 after it have no matching "
                                          "send"),
            std::string::npos)
      << extra.status().message();
  std::filesystem::remove_all(dir);
}

// A length of 2^63 or more does not fit the replay's signed sizes: it wrapped
// to a negative size that passed the message-size limit and replayed as a
// tiny message. Refused naming the rank and its event (OTF2 has no lines).
TEST(Otf2Trace, MessageLengthsBeyondInt64AreRefusedNotWrapped) {
  const auto dir = scratchDir("huge");
  const std::uint64_t huge = 18446744073709551000ull;
  const std::string anchor = writeTrace(dir, {{send(1, huge)}, {recv(0, huge)}});
  EXPECT_NE(refusal(anchor).find(anchor + ": rank 0, event 1: a message of 18446744073709551000 "
                                          "bytes is beyond the 9223372036854775807 bytes ebb "
                                          "represents"),
            std::string::npos)
      << refusal(anchor);
  Ev late = irecv(0, 5);
  late.length = huge;
  EXPECT_NE(refusal(writeTrace(dir, {{send(1)}, {irecvRequest(5), late}}))
                .find(": rank 1, event 2: a message of 18446744073709551000 bytes is beyond"),
            std::string::npos);
  EXPECT_NE(
      refusal(writeTrace(dir,
                         {{collective(OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_UNDEFINED_UINT32, huge)},
                          {collective(OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_UNDEFINED_UINT32, huge)}}))
          .find(": rank 0, event 2: allreduce: a message of 18446744073709551000 bytes"),
      std::string::npos);
  // The largest size that fits is the reader's to accept (the replay's
  // message limit refuses it later, with the numbers).
  const std::uint64_t most = 9223372036854775807ull;
  auto t = readOtf2Trace(writeTrace(dir, {{send(1, most)}, {recv(0, most)}}));
  ASSERT_TRUE(t) << t.status().toString();
  EXPECT_EQ(t->sendBytes, most);
  std::filesystem::remove_all(dir);
}

// As in AMG and SimGrid traces: a rank sending to or receiving from itself
// was replayed as a message never delivered, with exit 0.
TEST(Otf2Trace, ARankNamingItselfAsItsPeerIsRefused) {
  const auto dir = scratchDir("self");
  std::string anchor = writeTrace(dir, {{send(1), send(0)}, {recv(0)}});
  EXPECT_NE(refusal(anchor).find(anchor + ": rank 0, event 2: rank 0 names itself as its peer"),
            std::string::npos)
      << refusal(anchor);
  anchor = writeTrace(dir, {{send(1)}, {recv(0), recv(1)}});
  EXPECT_NE(refusal(anchor).find(": rank 1, event 2: rank 1 names itself as its peer"),
            std::string::npos)
      << refusal(anchor);
  anchor = writeTrace(dir, {{send(1)}, {recv(0), irecvRequest(3), irecv(1, 3)}});
  EXPECT_NE(refusal(anchor).find(": rank 1, event 3: rank 1 names itself as its peer"),
            std::string::npos)
      << refusal(anchor);
  std::filesystem::remove_all(dir);
}

// A rooted collective's root must be a rank of the trace and the same on
// every rank, as SimGrid traces are held to; rank 0's root silently won.
TEST(Otf2Trace, CollectiveRootsMustBeRanksAndAgree) {
  const auto dir = scratchDir("root");
  const auto bcast = [](std::uint32_t root) { return collective(OTF2_COLLECTIVE_OP_BCAST, root); };
  std::string anchor = writeTrace(dir, {{bcast(99)}, {bcast(99)}});
  EXPECT_NE(
      refusal(anchor).find(anchor + ": rank 0, event 2: bcast root 99 is not a rank of the trace "
                                    "(0..1)"),
      std::string::npos)
      << refusal(anchor);
  anchor = writeTrace(dir, {{bcast(OTF2_UNDEFINED_UINT32)}, {bcast(OTF2_UNDEFINED_UINT32)}});
  EXPECT_NE(refusal(anchor).find("bcast root undefined is not a rank of the trace (0..1)"),
            std::string::npos)
      << refusal(anchor);
  anchor = writeTrace(dir, {{bcast(0)}, {bcast(1)}});
  EXPECT_NE(
      refusal(anchor).find(anchor + ": rank 1, event 2: bcast root is 1 where rank 0 gives 0 (rank "
                                    "0, event 2); every rank must give the same"),
      std::string::npos)
      << refusal(anchor);
  auto ok = readOtf2Trace(writeTrace(dir, {{bcast(1), collective(OTF2_COLLECTIVE_OP_BARRIER)},
                                           {bcast(1), collective(OTF2_COLLECTIVE_OP_BARRIER)}}));
  ASSERT_TRUE(ok) << ok.status().toString();
  EXPECT_GT(ok->sends, 0u);
  std::filesystem::remove_all(dir);
}

// Request bookkeeping: a request posted twice before it completes, or the
// completion of one never posted, was silently accepted (the first post left
// as a receive that never matches); a clock resolution of 0 would leave every
// timestamp without a duration.
TEST(Otf2Trace, RequestsAndTheClockAreChecked) {
  const auto dir = scratchDir("requests");
  auto ok = readOtf2Trace(
      writeTrace(dir, {{isend(1, 3), isendComplete(3), isend(1, 3), isendComplete(3)},
                       {irecvRequest(7), irecv(0, 7), irecvRequest(7), irecv(0, 7)}}));
  ASSERT_TRUE(ok) << ok.status().toString();
  EXPECT_EQ(ok->sends, 2u);
  EXPECT_EQ(ok->recvs, 2u);
  std::string anchor = writeTrace(dir, {{send(1)}, {irecvRequest(7), irecvRequest(7), recv(0)}});
  EXPECT_NE(refusal(anchor).find(anchor + ": rank 1, event 2: MPI_Irecv posts request 7 again "
                                          "before it completed"),
            std::string::npos)
      << refusal(anchor);
  anchor = writeTrace(dir, {{isend(1, 3), isendComplete(99)}, {recv(0)}});
  EXPECT_NE(refusal(anchor).find(anchor + ": rank 0, event 2: MPI_Isend completes request 99 "
                                          "that was never posted"),
            std::string::npos)
      << refusal(anchor);
  anchor = writeTrace(dir, {{isend(1, 3), isend(1, 3)}, {recv(0), recv(0)}});
  EXPECT_NE(refusal(anchor).find(": rank 0, event 2: MPI_Isend posts request 3 again before it "
                                 "completed (posted at event 1)"),
            std::string::npos)
      << refusal(anchor);
  anchor = writeTrace(dir, {{send(1)}, {recv(0)}}, 0);
  EXPECT_NE(refusal(anchor).find(anchor + ": clock resolution 0"), std::string::npos)
      << refusal(anchor);
  std::filesystem::remove_all(dir);
}

// An unsupported collective is named as OTF2 names it, not by its number;
// communicator creation (what Score-P records for MPI_Comm_split/dup) says
// why it is refused.
TEST(Otf2Trace, UnsupportedCollectivesAreNamed) {
  const auto dir = scratchDir("ops");
  const auto both = [&](OTF2_CollectiveOp op) {
    return refusal(writeTrace(dir, {{collective(op)}, {collective(op)}}));
  };
  EXPECT_NE(both(OTF2_COLLECTIVE_OP_CREATE_HANDLE)
                .find(": rank 0, event 2: collective operation CREATE_HANDLE (17) is not "
                      "supported (barrier, bcast, gather, scatter, reduce, allreduce, alltoall, "
                      "allgather): ebb replays MPI_COMM_WORLD only"),
            std::string::npos)
      << both(OTF2_COLLECTIVE_OP_CREATE_HANDLE);
  EXPECT_NE(both(OTF2_COLLECTIVE_OP_ALLTOALLV)
                .find("collective operation ALLTOALLV (9) is not supported (barrier, bcast, "
                      "gather, scatter, reduce, allreduce, alltoall, allgather)"),
            std::string::npos)
      << both(OTF2_COLLECTIVE_OP_ALLTOALLV);
  std::filesystem::remove_all(dir);
}
#endif

}  // namespace
}  // namespace ebb::sim
