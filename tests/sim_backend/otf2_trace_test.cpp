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
// A two-rank OTF2 archive in `dir`: rank 0 sends `sends` messages to rank 1
// (tag 7, 64 bytes each), rank 1 receives `recvs` of them.
std::string writeTwoRankTrace(const std::filesystem::path& dir, int sends, int recvs) {
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
  std::uint64_t events[2] = {0, 0};
  for (OTF2_LocationRef loc = 0; loc < 2; ++loc) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, loc);
    const int n = loc == 0 ? sends : recvs;
    for (int i = 0; i < n; ++i) {
      const OTF2_TimeStamp t = 1000 * static_cast<OTF2_TimeStamp>(i + 1);
      if (loc == 0) OTF2_EvtWriter_MpiSend(w, nullptr, t, 1, 0, 7, 64);
      if (loc == 1) OTF2_EvtWriter_MpiRecv(w, nullptr, t, 0, 0, 7, 64);
      ++events[loc];
    }
    OTF2_Archive_CloseEvtWriter(a, w);
  }
  OTF2_Archive_CloseEvtFiles(a);
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
  OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, 100000, OTF2_UNDEFINED_TIMESTAMP);
  OTF2_GlobalDefWriter_WriteString(g, 0, "");
  OTF2_GlobalDefWriter_WriteString(g, 1, "node");
  OTF2_GlobalDefWriter_WriteString(g, 2, "rank");
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 1, 1, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  for (OTF2_LocationRef loc = 0; loc < 2; ++loc) {
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
#endif

}  // namespace
}  // namespace ebb::sim
