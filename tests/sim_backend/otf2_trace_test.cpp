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
  EXPECT_NE(missing.status().message().find("/nonexistent/traces.otf2: no such file"),
            std::string::npos)
      << missing.status().message();
  // The archive's folder for its anchor: said so, with the anchor inside.
  const std::string folder = std::string(EBB_TRACES_DIR) + "/stencil4d-otf2/traces-32";
  auto dir = readOtf2Trace(folder);
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.status().message().find(folder + ": is a folder, expected an OTF2 anchor file"),
            std::string::npos)
      << dir.status().message();
  EXPECT_NE(dir.status().message().find(folder + "/traces.otf2?"), std::string::npos)
      << dir.status().message();
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
  OTF2_CommRef comm = 0;  // ranks (peer, root) are ranks of this communicator
};
// `e` on communicator `comm`.
Ev on(OTF2_CommRef comm, Ev e) {
  e.comm = comm;
  return e;
}
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
// times a second. Communicators as Score-P defines them: 0 is MPI_COMM_WORLD
// (all ranks), comms[i] lists the world ranks of communicator i + 1 ("Comm
// i+1") in its rank order; a group of type COMM_GROUP each, indices into the
// COMM_LOCATIONS group of the locations. `world` false: no Group nor Comm
// definitions at all.
std::string writeTrace(const std::filesystem::path& dir, const std::vector<std::vector<Ev>>& ranks,
                       std::uint64_t resolution = 1000000000,
                       const std::vector<std::vector<std::uint64_t>>& comms = {},
                       bool world = true) {
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
          OTF2_EvtWriter_MpiSend(w, nullptr, t, e.peer, e.comm, e.tag, e.length);
          break;
        case Ev::kRecv:
          OTF2_EvtWriter_MpiRecv(w, nullptr, t, e.peer, e.comm, e.tag, e.length);
          break;
        case Ev::kIsend:
          OTF2_EvtWriter_MpiIsend(w, nullptr, t, e.peer, e.comm, e.tag, e.length, e.req);
          break;
        case Ev::kIsendComplete:
          OTF2_EvtWriter_MpiIsendComplete(w, nullptr, t, e.req);
          break;
        case Ev::kIrecvRequest:
          OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, t, e.req);
          break;
        case Ev::kIrecv:
          OTF2_EvtWriter_MpiIrecv(w, nullptr, t, e.peer, e.comm, e.tag, e.length, e.req);
          break;
        case Ev::kCollective:
          OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t);
          OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t, e.op, e.comm, e.root, e.length, e.length);
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
  if (world) {
    std::vector<std::uint64_t> all(ranks.size());
    for (std::size_t r = 0; r < all.size(); ++r)
      all[r] = r;  // location r is MPI_COMM_WORLD rank r
    OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                    OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(all.size()),
                                    all.data());
    OTF2_GlobalDefWriter_WriteString(g, 3, "MPI_COMM_WORLD");
    OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                    OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(all.size()),
                                    all.data());
    OTF2_GlobalDefWriter_WriteComm(g, 0, 3, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    for (std::uint32_t c = 1; c <= comms.size(); ++c) {
      const std::vector<std::uint64_t>& members = comms[c - 1];
      OTF2_GlobalDefWriter_WriteString(g, 3 + c, ("Comm " + std::to_string(c)).c_str());
      OTF2_GlobalDefWriter_WriteGroup(g, 1 + c, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                      OTF2_GROUP_FLAG_NONE,
                                      static_cast<std::uint32_t>(members.size()), members.data());
      OTF2_GlobalDefWriter_WriteComm(g, c, 3 + c, 1 + c, 0, OTF2_COMM_FLAG_NONE);
    }
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
  EXPECT_NE(refusal(anchor).find(anchor + ": rank 0, event 2: bcast root 99 is not a rank of "
                                          "communicator 0 \"MPI_COMM_WORLD\" (0..1)"),
            std::string::npos)
      << refusal(anchor);
  anchor = writeTrace(dir, {{bcast(OTF2_UNDEFINED_UINT32)}, {bcast(OTF2_UNDEFINED_UINT32)}});
  EXPECT_NE(refusal(anchor).find("bcast root undefined is not a rank of communicator 0"),
            std::string::npos)
      << refusal(anchor);
  anchor = writeTrace(dir, {{bcast(0)}, {bcast(1)}});
  EXPECT_NE(
      refusal(anchor).find(anchor + ": rank 1, event 2: bcast root on communicator 0 "
                                    "\"MPI_COMM_WORLD\" is 1 where rank 0 gives 0 (rank 0, event "
                                    "2); every member must give the same"),
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
// window creation says why it is refused. Communicator creation and freeing
// (what Score-P records for MPI_Comm_split/dup/free) move no data: skipped,
// the communicators come from their definitions.
TEST(Otf2Trace, UnsupportedCollectivesAreNamed) {
  const auto dir = scratchDir("ops");
  const auto both = [&](OTF2_CollectiveOp op) {
    return refusal(writeTrace(dir, {{collective(op)}, {collective(op)}}));
  };
  EXPECT_NE(both(OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE)
                .find(": rank 0, event 2: collective operation CREATE_HANDLE_AND_ALLOCATE (21) "
                      "is not supported (barrier, bcast, gather, scatter, reduce, allreduce, "
                      "alltoall, allgather): ebb does not replay one-sided communication"),
            std::string::npos)
      << both(OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE);
  const Ev split = collective(OTF2_COLLECTIVE_OP_CREATE_HANDLE);
  const Ev free = collective(OTF2_COLLECTIVE_OP_DESTROY_HANDLE);
  auto skipped = readOtf2Trace(writeTrace(dir, {{split, send(1), free}, {split, recv(0), free}}));
  ASSERT_TRUE(skipped) << skipped.status().toString();
  EXPECT_EQ(skipped->sends, 1u);
  EXPECT_NE(both(OTF2_COLLECTIVE_OP_ALLTOALLV)
                .find("collective operation ALLTOALLV (9) is not supported (barrier, bcast, "
                      "gather, scatter, reduce, allreduce, alltoall, allgather)"),
            std::string::npos)
      << both(OTF2_COLLECTIVE_OP_ALLTOALLV);
  std::filesystem::remove_all(dir);
}
// Replays `t` on a 4-ary 2-tree, rank r on host r: whether every rank
// finishes with every message matched.
bool replaysToCompletion(const MpiTrace& t) {
  const fabric::Topology topo = fabric::KAryNTree::make(4, 2).value().build();
  agent::VirtualScheduler sched;
  EmulatorConfig cfg;
  cfg.flitBytes = 16;
  cfg.packetBytes = 4096;
  cfg.vcBufferBytes = 4096;
  FabricEmulator emu(topo, cfg, sched);
  std::vector<fabric::HostId> place;
  for (std::uint32_t r = 0; r < t.ranks.size(); ++r)
    place.push_back(fabric::HostId(r));
  MpiReplay mpi(emu, t, place);
  emu.onDelivery([&](const Delivery& d) { mpi.onDelivery(d); });
  mpi.start();
  sched.runAll();
  return mpi.done() && mpi.messagesMatched() == t.sends;
}

// The (kind, peer) of each message op of a rank, in order.
std::vector<std::pair<MpiOpKind, std::uint32_t>> messages(const std::vector<MpiOp>& ops) {
  std::vector<std::pair<MpiOpKind, std::uint32_t>> out;
  for (const MpiOp& op : ops) {
    if (op.kind == MpiOpKind::kSend || op.kind == MpiOpKind::kRecv ||
        op.kind == MpiOpKind::kIsend || op.kind == MpiOpKind::kIrecv) {
      out.emplace_back(op.kind, op.peer);
    }
  }
  return out;
}

// Point-to-point peers are ranks of the event's communicator: with
// communicator 1 = world ranks {2, 3} and 2 = {3, 1}, rank 2's "receiver 1"
// on 1 is rank 3, rank 1's "sender 0" on 2 is rank 3. They were taken for
// world ranks: a spurious deadlock naming the wrong ranks.
TEST(Otf2Trace, SubCommunicatorPeersAreTranslatedToTheTracesRanks) {
  const auto dir = scratchDir("subcomm");
  using K = MpiOpKind;
  auto t = readOtf2Trace(
      writeTrace(dir,
                 {{},
                  {on(2, irecvRequest(4)), on(2, irecv(0, 4)), on(2, send(0))},
                  {on(1, send(1))},
                  {on(1, recv(0)), on(2, isend(1, 9)), on(2, isendComplete(9)), on(2, recv(1))}},
                 1000000000, {{2, 3}, {3, 1}}));
  ASSERT_TRUE(t) << t.status().toString();
  ASSERT_EQ(t->ranks.size(), 4u);
  EXPECT_TRUE(messages(t->ranks[0]).empty());
  EXPECT_EQ(messages(t->ranks[1]),
            (std::vector<std::pair<K, std::uint32_t>>{{K::kIrecv, 3}, {K::kSend, 3}}));
  EXPECT_EQ(messages(t->ranks[2]), (std::vector<std::pair<K, std::uint32_t>>{{K::kSend, 3}}));
  EXPECT_EQ(messages(t->ranks[3]), (std::vector<std::pair<K, std::uint32_t>>{
                                       {K::kRecv, 2}, {K::kIsend, 1}, {K::kRecv, 1}}));
  EXPECT_TRUE(replaysToCompletion(*t));
  std::filesystem::remove_all(dir);
}

// A peer beyond its communicator, a rank using a communicator it is not a
// member of, an undefined communicator, and a peer that is the rank itself
// by another name are refused naming the rank, the event and the
// communicator.
TEST(Otf2Trace, SubCommunicatorPeersMustBeItsRanks) {
  const auto dir = scratchDir("subpeer");
  const std::vector<std::vector<std::uint64_t>> comms = {{2, 3}};
  const auto with = [&](std::vector<Ev> two, std::vector<Ev> three) {
    return writeTrace(dir, {{}, {}, std::move(two), std::move(three)}, 1000000000, comms);
  };
  std::string anchor = with({on(1, send(2))}, {on(1, recv(0))});
  EXPECT_NE(refusal(anchor).find(anchor + ": rank 2, event 1: receiver rank 2 is beyond the 2 "
                                          "ranks of communicator 1 \"Comm 1\" (MPI_Send on it)"),
            std::string::npos)
      << refusal(anchor);
  anchor = with({on(1, send(1))}, {on(1, irecvRequest(3)), on(1, irecv(7, 3))});
  EXPECT_NE(refusal(anchor).find(": rank 3, event 2: sender rank 7 is beyond the 2 ranks of "
                                 "communicator 1 \"Comm 1\" (MPI_Irecv on it)"),
            std::string::npos)
      << refusal(anchor);
  anchor = writeTrace(dir, {{on(1, send(1))}, {}, {}, {on(1, recv(0))}}, 1000000000, comms);
  EXPECT_NE(refusal(anchor).find(": rank 0, event 1: MPI_Send on communicator 1 \"Comm 1\", of "
                                 "which rank 0 is not a member (2 of the trace's 4 ranks)"),
            std::string::npos)
      << refusal(anchor);
  anchor = with({on(1, send(1))}, {on(5, recv(0))});
  EXPECT_NE(refusal(anchor).find(": rank 3, event 1: MPI_Recv: communicator 5 is not defined (no "
                                 "Comm definition)"),
            std::string::npos)
      << refusal(anchor);
  anchor = with({on(1, send(0))}, {});
  EXPECT_NE(refusal(anchor).find(": rank 2, event 1: rank 2 names itself as its peer (rank 0 of "
                                 "communicator 1 \"Comm 1\")"),
            std::string::npos)
      << refusal(anchor);
  // A trace without communicator definitions names what is missing.
  anchor = writeTrace(dir, {{send(1)}, {recv(0)}}, 1000000000, {}, false);
  EXPECT_NE(refusal(anchor).find(": rank 0, event 1: MPI_Send: communicator 0 is not defined"),
            std::string::npos)
      << refusal(anchor);
  std::filesystem::remove_all(dir);
}

// A collective on a sub-communicator is its members' only: the k-th
// collective on communicator C of each member is one operation, expanded
// over C's ranks with the root a rank of C, in each rank's order among its
// other collectives.
TEST(Otf2Trace, SubCommunicatorCollectivesExpandOverTheirMembers) {
  const auto dir = scratchDir("subcoll");
  const Ev allreduce = on(1, collective(OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_UNDEFINED_UINT32, 8));
  const Ev bcast = on(1, collective(OTF2_COLLECTIVE_OP_BCAST, 0, 100));  // root: rank 3
  const Ev barrier = collective(OTF2_COLLECTIVE_OP_BARRIER);
  Otf2Stats st;
  auto t = readOtf2Trace(
      writeTrace(dir,
                 {{barrier}, {allreduce, bcast, barrier}, {barrier}, {allreduce, bcast, barrier}},
                 1000000000, {{3, 1}}),
      {}, &st);
  ASSERT_TRUE(t) << t.status().toString();
  EXPECT_EQ(st.collectives, 3u);
  std::uint64_t toOneOfBcast = 0;
  for (std::uint32_t r = 0; r < 4; ++r) {
    for (const MpiOp& op : t->ranks[r]) {
      if (op.kind != MpiOpKind::kIsend && op.kind != MpiOpKind::kIrecv) continue;
      // Ranks 0 and 2 take part in the barrier only, 1 and 3 talk to each other.
      if (r == 0 || r == 2 || op.peer == 0 || op.peer == 2) {
        EXPECT_EQ(op.bytes, 1) << "rank " << r;
      }
      if (op.bytes == 100) {
        EXPECT_EQ(r, op.kind == MpiOpKind::kIsend ? 3u : 1u);  // from the root, rank 3
        ++toOneOfBcast;
      }
    }
  }
  EXPECT_EQ(toOneOfBcast, 2u);  // its isend and its irecv
  EXPECT_TRUE(replaysToCompletion(*t));
  std::filesystem::remove_all(dir);
}

// Members that disagree on a sub-communicator's collectives are refused
// naming the communicator; so are collectives on communicators that the
// ranks call in orders that would wait for each other.
TEST(Otf2Trace, SubCommunicatorCollectivesMustAgree) {
  const auto dir = scratchDir("subagree");
  const auto op = [](OTF2_CommRef c, OTF2_CollectiveOp o,
                     std::uint32_t root = OTF2_UNDEFINED_UINT32) {
    return on(c, collective(o, root));
  };
  const std::vector<std::vector<std::uint64_t>> comms = {{3, 1}, {1, 3}};
  const auto with = [&](std::vector<Ev> one, std::vector<Ev> three) {
    return writeTrace(dir, {{}, std::move(one), {}, std::move(three)}, 1000000000, comms);
  };
  std::string anchor = with({op(1, OTF2_COLLECTIVE_OP_ALLREDUCE)}, {});
  EXPECT_NE(refusal(anchor).find(anchor + ": communicator 1 \"Comm 1\": rank 1 has 1 "
                                          "collectives on it, rank 3 has 0"),
            std::string::npos)
      << refusal(anchor);
  anchor = with({op(1, OTF2_COLLECTIVE_OP_BARRIER)}, {op(1, OTF2_COLLECTIVE_OP_ALLREDUCE)});
  EXPECT_NE(refusal(anchor).find(": rank 1, event 2: collective 1 on communicator 1 \"Comm 1\" "
                                 "is barrier on rank 1 but allreduce on rank 3 (rank 3, event 2)"),
            std::string::npos)
      << refusal(anchor);
  anchor = with({op(1, OTF2_COLLECTIVE_OP_BCAST, 2)}, {op(1, OTF2_COLLECTIVE_OP_BCAST, 2)});
  EXPECT_NE(refusal(anchor).find(": rank 1, event 2: bcast root 2 is not a rank of communicator "
                                 "1 \"Comm 1\" (0..1)"),
            std::string::npos)
      << refusal(anchor);
  anchor = with({op(1, OTF2_COLLECTIVE_OP_BCAST, 0)}, {op(1, OTF2_COLLECTIVE_OP_BCAST, 1)});
  EXPECT_NE(refusal(anchor).find(": bcast root on communicator 1 \"Comm 1\" is 0 where rank 3 "
                                 "gives 1"),
            std::string::npos)
      << refusal(anchor);
  anchor = writeTrace(dir, {{op(1, OTF2_COLLECTIVE_OP_BARRIER)}, {}, {}, {}}, 1000000000, comms);
  EXPECT_NE(refusal(anchor).find(": rank 0, event 2: barrier on communicator 1 \"Comm 1\", of "
                                 "which rank 0 is not a member"),
            std::string::npos)
      << refusal(anchor);
  anchor = with({op(1, OTF2_COLLECTIVE_OP_BARRIER), op(2, OTF2_COLLECTIVE_OP_BARRIER)},
                {op(2, OTF2_COLLECTIVE_OP_BARRIER), op(1, OTF2_COLLECTIVE_OP_BARRIER)});
  EXPECT_NE(refusal(anchor).find(": barrier on communicator 1 \"Comm 1\" never runs: rank 3 "
                                 "first calls barrier on communicator 2 \"Comm 2\""),
            std::string::npos)
      << refusal(anchor);
  std::filesystem::remove_all(dir);
}

// A location that recorded no events has no event file: a rank without
// operations, not an unreadable file. One whose definition gives it events
// but whose file is gone is named as missing.
TEST(Otf2Trace, ALocationWithoutEventsIsARankWithoutOperations) {
  namespace fs = std::filesystem;
  const auto dir = scratchDir("noevents");
  const std::string anchor = writeTrace(dir, {{send(2)}, {}, {recv(0)}});
  auto t = readOtf2Trace(anchor);
  ASSERT_TRUE(t) << t.status().toString();
  ASSERT_EQ(t->ranks.size(), 3u);
  EXPECT_TRUE(t->ranks[1].empty());
  EXPECT_EQ(t->sends, 1u);
  auto none = readOtf2Trace(writeTrace(dir, {{}, {}}));
  ASSERT_TRUE(none) << none.status().toString();
  EXPECT_EQ(none->ranks.size(), 2u);
  // A broken file is still named, not the location without one before it.
  writeTrace(dir, {{send(2)}, {}, {recv(0)}});
  std::ofstream(dir / "traces" / "2.evt", std::ios::binary | std::ios::trunc) << "garbage";
  EXPECT_NE(refusal(anchor).find((dir / "traces" / "2.evt").string() + " (rank 2"),
            std::string::npos)
      << refusal(anchor);
  writeTrace(dir, {{send(1)}, {recv(0)}});
  fs::remove(dir / "traces" / "1.evt");
  EXPECT_NE(refusal(anchor).find((dir / "traces" / "1.evt").string() +
                                 " (rank 1) is missing, and the definitions give location 1 1 "
                                 "events"),
            std::string::npos)
      << refusal(anchor);
  fs::remove_all(dir);
}
#endif

}  // namespace
}  // namespace ebb::sim
