#ifdef EBB_HAVE_OTF2
#include "tests/workload/otf2_test_archive.h"

#include <unistd.h>

#include <map>

namespace ebb::workload::testing {
namespace {

const char* const kRegionNames[kRegions] = {"MPI_Send", "MPI_Recv", "MPI_Barrier", "MPI_Isend",
                                            "MPI_Wait"};

void writeEvent(OTF2_EvtWriter* w, const Otf2Event& e) {
  switch (e.kind) {
    case Otf2Event::kEnter:
      OTF2_EvtWriter_Enter(w, nullptr, e.time, e.region);
      break;
    case Otf2Event::kLeave:
      OTF2_EvtWriter_Leave(w, nullptr, e.time, e.region);
      break;
    case Otf2Event::kSend:
      OTF2_EvtWriter_MpiSend(w, nullptr, e.time, e.peer, e.comm, e.tag, e.length);
      break;
    case Otf2Event::kRecv:
      OTF2_EvtWriter_MpiRecv(w, nullptr, e.time, e.peer, e.comm, e.tag, e.length);
      break;
    case Otf2Event::kIsend:
      OTF2_EvtWriter_MpiIsend(w, nullptr, e.time, e.peer, e.comm, e.tag, e.length, e.req);
      break;
    case Otf2Event::kIsendComplete:
      OTF2_EvtWriter_MpiIsendComplete(w, nullptr, e.time, e.req);
      break;
    case Otf2Event::kCollective:
      OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, e.time);
      OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, e.time, e.op, e.comm, OTF2_UNDEFINED_UINT32,
                                      e.length, e.length);
      break;
    case Otf2Event::kRmaPut:  // on window 0
      OTF2_EvtWriter_RmaPut(w, nullptr, e.time, 0, e.peer, e.length, e.req);
      break;
  }
}

}  // namespace

std::string writeOtf2Archive(const std::filesystem::path& dir, const Otf2Archive& a) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  OTF2_Archive* ar = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1 << 20, 1 << 22,
                                       OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  OTF2_FlushCallbacks flush = {[](void*, OTF2_FileType, OTF2_LocationRef, void*,
                                  bool) -> OTF2_FlushType { return OTF2_FLUSH; },
                               nullptr};
  OTF2_Archive_SetFlushCallbacks(ar, &flush, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(ar);
  OTF2_Archive_OpenEvtFiles(ar);
  std::map<OTF2_LocationRef, std::uint64_t> events;
  for (const Otf2Location& l : a.locations) {
    if (l.events.empty()) continue;
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(ar, l.id);
    for (const Otf2Event& e : l.events) {
      writeEvent(w, e);
      events[l.id] += e.kind == Otf2Event::kCollective ? 2 : 1;
    }
    OTF2_Archive_CloseEvtWriter(ar, w);
  }
  OTF2_Archive_CloseEvtFiles(ar);
  OTF2_Archive_OpenDefFiles(ar);
  for (const Otf2Location& l : a.locations) {
    if (!l.localDefs) continue;
    OTF2_DefWriter* w = OTF2_Archive_GetDefWriter(ar, l.id);
    if (l.mapping) {
      std::vector<std::uint64_t> identity(kRegions);
      for (std::uint64_t i = 0; i < identity.size(); ++i)
        identity[i] = i;
      OTF2_IdMap* map = OTF2_IdMap_CreateFromUint64Array(identity.size(), identity.data(), false);
      OTF2_DefWriter_WriteMappingTable(w, OTF2_MAPPING_REGION, map);
      OTF2_IdMap_Free(map);
    }
    for (const auto& [time, offset] : l.clockOffsets)
      OTF2_DefWriter_WriteClockOffset(w, time, offset, 0.0);
    OTF2_Archive_CloseDefWriter(ar, w);
  }
  OTF2_Archive_CloseDefFiles(ar);
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(ar);
  OTF2_GlobalDefWriter_WriteClockProperties(g, a.ticksPerSecond, 0, 1000000000,
                                            OTF2_UNDEFINED_TIMESTAMP);
  OTF2_GlobalDefWriter_WriteString(g, 0, "");
  OTF2_GlobalDefWriter_WriteString(g, 1, "node");
  OTF2_GlobalDefWriter_WriteString(g, 2, "process");
  OTF2_GlobalDefWriter_WriteString(g, 3, "thread");
  OTF2_GlobalDefWriter_WriteString(g, 4, "MPI_COMM_WORLD");
  for (OTF2_RegionRef r = 0; r < kRegions; ++r) {
    OTF2_GlobalDefWriter_WriteString(g, 10 + r, kRegionNames[r]);
    OTF2_GlobalDefWriter_WriteRegion(g, r, 10 + r, 10 + r, 0, OTF2_REGION_ROLE_FUNCTION,
                                     OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, 0, 0, 0);
  }
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 1, 1, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  std::map<OTF2_LocationGroupRef, bool> processes;
  for (const Otf2Location& l : a.locations) {
    if (processes.emplace(l.process, true).second) {
      OTF2_GlobalDefWriter_WriteLocationGroup(g, l.process, 2, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                              OTF2_UNDEFINED_LOCATION_GROUP);
    }
  }
  for (const Otf2Location& l : a.locations) {
    OTF2_GlobalDefWriter_WriteLocation(g, l.id, 3, OTF2_LOCATION_TYPE_CPU_THREAD, events[l.id],
                                       l.process);
  }
  std::vector<std::uint64_t> world(a.world.begin(), a.world.end());
  std::vector<std::uint64_t> ranks(world.size());
  for (std::uint64_t r = 0; r < ranks.size(); ++r)
    ranks[r] = r;
  OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                  OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(world.size()),
                                  world.data());
  OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                  OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(ranks.size()),
                                  ranks.data());
  OTF2_GlobalDefWriter_WriteComm(g, 0, 4, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  OTF2_Archive_CloseGlobalDefWriter(ar, g);
  OTF2_Archive_Close(ar);
  return (dir / "traces.otf2").string();
}

std::filesystem::path otf2ScratchDir(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("ebb-otf2-" + name + "-" + std::to_string(::getpid()));
}

}  // namespace ebb::workload::testing
#endif
