#include "workload/otf2_trace.h"

#include <fmt/format.h>

#ifdef EBB_HAVE_OTF2
#include <otf2/otf2.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <optional>

#include "common/file_io.h"
#include "workload/otf2_archive_files.h"
#include "workload/otf2_broken_events.h"
#include "workload/otf2_collective_match.h"
#include "workload/otf2_communicators.h"
#include "workload/otf2_local_defs.h"
#include "workload/otf2_rank_log.h"
#include "workload/otf2_ranks.h"
#endif

namespace ebb::workload {

#ifndef EBB_HAVE_OTF2

bool haveOtf2() {
  return false;
}

Result<MpiTrace> readOtf2Trace(const std::string& anchor, const CollectiveAlgos&, Otf2Stats*) {
  return Status(ErrorCode::kUnavailable,
                fmt::format("{}: this ebb was built without OTF2 (install libotf2-trace-dev and "
                            "rebuild)",
                            anchor));
}

#else

bool haveOtf2() {
  return true;
}

namespace {

using namespace otf2;  // the reader's parts (workload/otf2_*.h)

// Where one location (thread) is: inside an MPI call or not.
struct ThreadState {
  OTF2_TimeStamp enterTime = 0;
  bool inMpi = false;
  bool nonBlocking = false;
};

struct Reading {
  std::map<OTF2_StringRef, std::string> strings;
  std::map<OTF2_RegionRef, std::string> regions;
  std::map<OTF2_LocationRef, LocationDef> locations;
  std::map<OTF2_LocationGroupRef, LocationGroupDef> locationGroups;
  std::map<OTF2_LocationRef, std::uint32_t> rankOf;  // once all locations are known
  Communicators comms;
  std::map<OTF2_LocationRef, OTF2_EvtReader*> evtReaders;
  std::map<OTF2_LocationRef, ThreadState> threads;
  std::vector<RankLog> logs;  // one per rank
  double psPerTick = 1.0;
  bool clockResolutionZero = false;
  std::string error;
  Otf2Stats stats;

  RankLog* log(OTF2_LocationRef loc) {
    const auto it = rankOf.find(loc);
    return it == rankOf.end() ? nullptr : &logs[it->second];
  }
  TimePs ps(OTF2_TimeStamp ticks) const {
    return static_cast<TimePs>(static_cast<double>(ticks) * psPerTick);
  }
  // The ordinal (1-based) of the event of `loc` being delivered: the global
  // reader calls back before it reads the location's next event.
  std::uint64_t eventOf(OTF2_LocationRef loc) const {
    const auto it = evtReaders.find(loc);
    std::uint64_t pos = 0;
    if (it != evtReaders.end() && it->second) OTF2_EvtReader_GetPos(it->second, &pos);
    return pos;
  }
  // "rank R, event N" (with the location when it is not the rank's number):
  // an OTF2 trace has no lines, so its events are counted per location.
  std::string where(OTF2_LocationRef loc) const {
    const auto it = rankOf.find(loc);
    const std::uint32_t rank = it == rankOf.end() ? 0 : it->second;
    return rank == loc ? fmt::format("rank {}, event {}", rank, eventOf(loc))
                       : fmt::format("rank {} (location {}), event {}", rank, loc, eventOf(loc));
  }
  void fail(OTF2_LocationRef loc, const std::string& rule) {
    if (error.empty()) error = fmt::format("{}: {}", where(loc), rule);
  }

  // The trace rank of `peer` ("receiver"/"sender"), a rank of `comm` as the
  // event `what` of `loc` gives it; nullopt once failed.
  std::optional<std::uint32_t> peerOf(OTF2_LocationRef loc, const char* what, OTF2_CommRef comm,
                                      const char* role, std::uint32_t peer) {
    std::string why;
    const Communicator* c = comms.resolve(comm, why);
    if (!c) {
      fail(loc, fmt::format("{}: {}", what, why));
      return std::nullopt;
    }
    const auto rank = peerRank(*c, comms.rankCount, rankOf[loc], what, role, peer, why);
    if (!rank) fail(loc, why);
    return rank;
  }
};

// The largest message the replay represents (MpiOp::bytes is an int64).
constexpr std::uint64_t kMaxBytes = std::numeric_limits<std::int64_t>::max();

std::string tooLarge(std::uint64_t length) {
  return fmt::format("a message of {} bytes is beyond the {} bytes ebb represents", length,
                     kMaxBytes);
}

Reading& R(void* p) {
  return *static_cast<Reading*>(p);
}

std::uint32_t requestName(std::uint64_t id) {
  return static_cast<std::uint32_t>(id % 0xFFFFFFFEu) + 1;
}

OTF2_CallbackCode onString(void* ud, OTF2_StringRef self, const char* s) {
  R(ud).strings[self] = s;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onRegion(void* ud, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef,
                           OTF2_StringRef, OTF2_RegionRole, OTF2_Paradigm, OTF2_RegionFlag,
                           OTF2_StringRef, uint32_t, uint32_t) {
  R(ud).regions[self] = R(ud).strings[name];
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onLocationGroup(void* ud, OTF2_LocationGroupRef self, OTF2_StringRef,
                                  OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef,
                                  OTF2_LocationGroupRef creator) {
  R(ud).locationGroups[self] = {type, creator};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onLocation(void* ud, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType,
                             uint64_t events, OTF2_LocationGroupRef group) {
  R(ud).locations[self] = {events, group};  // ranked once all are known
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onGroup(void* ud, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type,
                          OTF2_Paradigm paradigm, OTF2_GroupFlag flags, uint32_t count,
                          const uint64_t* members) {
  GroupDef& g = R(ud).comms.groups[self];
  g.type = type;
  g.paradigm = paradigm;
  g.flags = flags;
  g.members.assign(members, members + count);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onComm(void* ud, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group,
                         OTF2_CommRef, OTF2_CommFlag) {
  R(ud).comms.comms[self] = {name, group};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onInterComm(void* ud, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef,
                              OTF2_GroupRef, OTF2_CommRef, OTF2_CommFlag) {
  R(ud).comms.interComms.insert(self);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onClock(void* ud, uint64_t resolution, uint64_t, uint64_t, uint64_t) {
  if (resolution > 0) {
    R(ud).psPerTick = 1e12 / static_cast<double>(resolution);
  } else {
    R(ud).clockResolutionZero = true;  // ticks would not convert to time
  }
  return OTF2_CALLBACK_SUCCESS;
}

bool isMpi(const std::string& region) {
  return region.rfind("MPI_", 0) == 0;
}

OTF2_CallbackCode onEnter(OTF2_LocationRef loc, OTF2_TimeStamp t, void* ud, OTF2_AttributeList*,
                          OTF2_RegionRef region) {
  Reading& r = R(ud);
  RankLog* l = r.log(loc);
  ThreadState& th = r.threads[loc];
  const std::string& name = r.regions[region];
  if (!l || th.inMpi || !isMpi(name)) return OTF2_CALLBACK_SUCCESS;
  // The time since the process's threads last left MPI is the rank's own
  // work (none while another of its threads is inside an MPI call).
  if (l->inMpi == 0 && l->lastLeave && t > *l->lastLeave) {
    l->ops.push_back({MpiOpKind::kCompute, r.ps(t - *l->lastLeave), 0, 0, 0, 0});
  }
  ++l->inMpi;
  th.inMpi = true;
  th.enterTime = t;
  th.nonBlocking = name == "MPI_Isend" || name == "MPI_Irecv";
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onLeave(OTF2_LocationRef loc, OTF2_TimeStamp t, void* ud, OTF2_AttributeList*,
                          OTF2_RegionRef region) {
  Reading& r = R(ud);
  RankLog* l = r.log(loc);
  ThreadState& th = r.threads[loc];
  if (!l || !th.inMpi || !isMpi(r.regions[region])) return OTF2_CALLBACK_SUCCESS;
  if (th.nonBlocking && t > th.enterTime) {
    l->ops.push_back({MpiOpKind::kCompute, r.ps(t - th.enterTime), 0, 0, 0, 0});
  }
  th.inMpi = false;
  --l->inMpi;
  l->lastLeave = t;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode addSend(void* ud, OTF2_LocationRef loc, MpiOpKind kind, uint32_t peer,
                          OTF2_CommRef comm, uint32_t tag, uint64_t length, std::uint32_t name) {
  Reading& r = R(ud);
  RankLog* l = r.log(loc);
  if (!l) return OTF2_CALLBACK_SUCCESS;
  const auto to =
      r.peerOf(loc, kind == MpiOpKind::kSend ? "MPI_Send" : "MPI_Isend", comm, "receiver", peer);
  if (!to) return OTF2_CALLBACK_INTERRUPT;
  const std::uint32_t receiver = *to;
  if (length > kMaxBytes) {
    r.fail(loc, tooLarge(length));
    return OTF2_CALLBACK_INTERRUPT;
  }
  l->ops.push_back({kind, 0, receiver, static_cast<std::int64_t>(length),
                    static_cast<std::int32_t>(tag & 0x3FFFFFFF), name});
  ++r.stats.p2pSends;
  r.stats.p2pBytes += length;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onSend(OTF2_LocationRef loc, OTF2_TimeStamp, void* ud, OTF2_AttributeList*,
                         uint32_t receiver, OTF2_CommRef comm, uint32_t tag, uint64_t length) {
  return addSend(ud, loc, MpiOpKind::kSend, receiver, comm, tag, length, 0);
}

OTF2_CallbackCode onIsend(OTF2_LocationRef loc, OTF2_TimeStamp, void* ud, OTF2_AttributeList*,
                          uint32_t receiver, OTF2_CommRef comm, uint32_t tag, uint64_t length,
                          uint64_t req) {
  Reading& r = R(ud);
  if (RankLog* l = r.log(loc)) {
    // A request is posted once until it completes: a second post would leave
    // the first one's wait completing the wrong message.
    if (const auto it = l->pendingIsend.find(req); it != l->pendingIsend.end()) {
      r.fail(loc, fmt::format("MPI_Isend posts request {} again before it completed (posted at "
                              "event {})",
                              req, it->second));
      return OTF2_CALLBACK_INTERRUPT;
    }
    l->pendingIsend[req] = r.eventOf(loc);
  }
  return addSend(ud, loc, MpiOpKind::kIsend, receiver, comm, tag, length, requestName(req));
}

OTF2_CallbackCode onIsendComplete(OTF2_LocationRef loc, OTF2_TimeStamp, void* ud,
                                  OTF2_AttributeList*, uint64_t req) {
  Reading& r = R(ud);
  if (RankLog* l = r.log(loc)) {
    if (l->pendingIsend.erase(req) == 0) {
      r.fail(loc, fmt::format("MPI_Isend completes request {} that was never posted", req));
      return OTF2_CALLBACK_INTERRUPT;
    }
    l->ops.push_back({MpiOpKind::kWait, 0, 0, 0, 0, requestName(req)});
  }
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onIrecvRequest(OTF2_LocationRef loc, OTF2_TimeStamp, void* ud,
                                 OTF2_AttributeList*, uint64_t req) {
  // Its source and tag are only known when it completes (onIrecv).
  Reading& r = R(ud);
  if (RankLog* l = r.log(loc)) {
    if (l->pendingIrecv.count(req)) {
      r.fail(loc, fmt::format("MPI_Irecv posts request {} again before it completed", req));
      return OTF2_CALLBACK_INTERRUPT;
    }
    l->pendingIrecv[req] = l->ops.size();
    l->ops.push_back({MpiOpKind::kIrecv, 0, 0, 0, 0, requestName(req)});
  }
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onRecv(OTF2_LocationRef loc, OTF2_TimeStamp, void* ud, OTF2_AttributeList*,
                         uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t length) {
  Reading& r = R(ud);
  RankLog* l = r.log(loc);
  if (!l) return OTF2_CALLBACK_SUCCESS;
  const auto from = r.peerOf(loc, "MPI_Recv", comm, "sender", peer);
  if (!from) return OTF2_CALLBACK_INTERRUPT;
  const std::uint32_t sender = *from;
  if (length > kMaxBytes) {
    r.fail(loc, tooLarge(length));
    return OTF2_CALLBACK_INTERRUPT;
  }
  l->ops.push_back({MpiOpKind::kRecv, 0, sender, static_cast<std::int64_t>(length),
                    static_cast<std::int32_t>(tag & 0x3FFFFFFF), 0});
  ++r.stats.recvs;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onIrecv(OTF2_LocationRef loc, OTF2_TimeStamp, void* ud, OTF2_AttributeList*,
                          uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t length,
                          uint64_t req) {
  Reading& r = R(ud);
  RankLog* l = r.log(loc);
  if (!l) return OTF2_CALLBACK_SUCCESS;
  const auto it = l->pendingIrecv.find(req);
  if (it == l->pendingIrecv.end()) {
    r.fail(loc, fmt::format("MPI_Irecv completes request {} that was never posted", req));
    return OTF2_CALLBACK_INTERRUPT;
  }
  const auto from = r.peerOf(loc, "MPI_Irecv", comm, "sender", peer);
  if (!from) return OTF2_CALLBACK_INTERRUPT;
  const std::uint32_t sender = *from;
  if (length > kMaxBytes) {
    r.fail(loc, tooLarge(length));
    return OTF2_CALLBACK_INTERRUPT;
  }
  MpiOp& posted = l->ops[it->second];
  posted.peer = sender;
  posted.tag = static_cast<std::int32_t>(tag & 0x3FFFFFFF);
  posted.bytes = static_cast<std::int64_t>(length);
  l->pendingIrecv.erase(it);
  l->ops.push_back({MpiOpKind::kWait, 0, 0, 0, 0, requestName(req)});
  ++r.stats.recvs;
  return OTF2_CALLBACK_SUCCESS;
}

// One-sided communication (MPI_Put/_Get/_Accumulate...) is refused, not
// skipped: its traffic would silently be missing from the replay.
OTF2_CallbackCode refuseRma(void* ud, OTF2_LocationRef loc, const char* what, OTF2_RmaWinRef win,
                            std::uint64_t bytes) {
  R(ud).fail(loc, fmt::format("one-sided communication ({} of {} bytes on RMA window {}) is not "
                              "replayed: ebb replays two-sided MPI only (point-to-point and "
                              "collectives), and leaving it out would drop its traffic",
                              what, bytes, win));
  return OTF2_CALLBACK_INTERRUPT;
}

OTF2_CallbackCode onRmaPut(OTF2_LocationRef loc, OTF2_TimeStamp, void* ud, OTF2_AttributeList*,
                           OTF2_RmaWinRef win, uint32_t, uint64_t bytes, uint64_t) {
  return refuseRma(ud, loc, "an RMA put", win, bytes);
}

OTF2_CallbackCode onRmaGet(OTF2_LocationRef loc, OTF2_TimeStamp, void* ud, OTF2_AttributeList*,
                           OTF2_RmaWinRef win, uint32_t, uint64_t bytes, uint64_t) {
  return refuseRma(ud, loc, "an RMA get", win, bytes);
}

OTF2_CallbackCode onRmaAtomic(OTF2_LocationRef loc, OTF2_TimeStamp, void* ud, OTF2_AttributeList*,
                              OTF2_RmaWinRef win, uint32_t, OTF2_RmaAtomicType, uint64_t sent,
                              uint64_t, uint64_t) {
  return refuseRma(ud, loc, "an RMA atomic", win, sent);
}

// OTF2's name of a collective operation (OTF2_Events.h), for errors.
std::string collectiveOpName(OTF2_CollectiveOp op) {
  static const char* const kNames[] = {"BARRIER",
                                       "BCAST",
                                       "GATHER",
                                       "GATHERV",
                                       "SCATTER",
                                       "SCATTERV",
                                       "ALLGATHER",
                                       "ALLGATHERV",
                                       "ALLTOALL",
                                       "ALLTOALLV",
                                       "ALLTOALLW",
                                       "ALLREDUCE",
                                       "REDUCE",
                                       "REDUCE_SCATTER",
                                       "SCAN",
                                       "EXSCAN",
                                       "REDUCE_SCATTER_BLOCK",
                                       "CREATE_HANDLE",
                                       "DESTROY_HANDLE",
                                       "ALLOCATE",
                                       "DEALLOCATE",
                                       "CREATE_HANDLE_AND_ALLOCATE",
                                       "DESTROY_HANDLE_AND_DEALLOCATE"};
  const auto k = static_cast<std::size_t>(op);
  return k < std::size(kNames) ? kNames[k] : "an unknown operation";
}

OTF2_CallbackCode onCollectiveEnd(OTF2_LocationRef loc, OTF2_TimeStamp, void* ud,
                                  OTF2_AttributeList*, OTF2_CollectiveOp op, OTF2_CommRef comm,
                                  uint32_t root, uint64_t sent, uint64_t received) {
  Reading& r = R(ud);
  RankLog* l = r.log(loc);
  if (!l) return OTF2_CALLBACK_SUCCESS;
  // Creating or freeing a communicator (MPI_Comm_split, _dup, _free) moves
  // no data: the new communicator's ranks come from its definition.
  if (op == OTF2_COLLECTIVE_OP_CREATE_HANDLE || op == OTF2_COLLECTIVE_OP_DESTROY_HANDLE) {
    return OTF2_CALLBACK_SUCCESS;
  }
  static const std::map<OTF2_CollectiveOp, const char*> names = {
      {OTF2_COLLECTIVE_OP_BARRIER, "barrier"},   {OTF2_COLLECTIVE_OP_BCAST, "bcast"},
      {OTF2_COLLECTIVE_OP_GATHER, "gather"},     {OTF2_COLLECTIVE_OP_SCATTER, "scatter"},
      {OTF2_COLLECTIVE_OP_REDUCE, "reduce"},     {OTF2_COLLECTIVE_OP_ALLREDUCE, "allreduce"},
      {OTF2_COLLECTIVE_OP_ALLTOALL, "alltoall"}, {OTF2_COLLECTIVE_OP_ALLGATHER, "allgather"}};
  const auto it = names.find(op);
  if (it == names.end()) {
    const bool window = op == OTF2_COLLECTIVE_OP_ALLOCATE || op == OTF2_COLLECTIVE_OP_DEALLOCATE ||
                        op == OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE ||
                        op == OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE;
    r.fail(loc,
           fmt::format(
               "collective operation {} ({}) is not supported (barrier, bcast, "
               "gather, scatter, reduce, allreduce, alltoall, allgather){}",
               collectiveOpName(op), static_cast<int>(op),
               window ? ": ebb does not replay one-sided communication (MPI windows: it replays "
                        "two-sided MPI only)"
                      : ""));
    return OTF2_CALLBACK_INTERRUPT;
  }
  const std::string name = it->second;
  std::string why;
  const Communicator* c = r.comms.resolve(comm, why);
  if (!c) {
    r.fail(loc, fmt::format("{}: {}", name, why));
    return OTF2_CALLBACK_INTERRUPT;
  }
  const std::uint32_t self = r.rankOf[loc];
  if (!c->self && !c->indexOf.count(self)) {
    r.fail(loc, fmt::format("{} on {}, of which rank {} is not a member ({} of the trace's {} "
                            "ranks)",
                            name, c->name, self, c->members.size(), r.logs.size()));
    return OTF2_CALLBACK_INTERRUPT;
  }
  // A rooted collective's root is a rank of its communicator, never wrapped
  // nor guessed (the others record none: OTF2_UNDEFINED_UINT32).
  const bool rooted = name == "bcast" || name == "gather" || name == "scatter" || name == "reduce";
  const std::size_t size = c->self ? 1 : c->peers.size();
  if (rooted && (root >= size || (!c->self && !c->indexOf.count(c->peers[root])))) {
    r.fail(loc, fmt::format(
                    "{} root {} is not a rank of {} (0..{})", name,
                    root == OTF2_UNDEFINED_UINT32 ? std::string("undefined") : std::to_string(root),
                    c->name, size - 1));
    return OTF2_CALLBACK_INTERRUPT;
  }
  if (sent > kMaxBytes || received > kMaxBytes) {
    r.fail(loc, fmt::format("{}: {}", name, tooLarge(std::max(sent, received))));
    return OTF2_CALLBACK_INTERRUPT;
  }
  // On MPI_COMM_SELF a rank only talks to itself: no traffic.
  if (c->self) return OTF2_CALLBACK_SUCCESS;
  l->collectives.push_back(
      {l->ops.size(), Collective{name, comm, rooted ? root : 0, sent, received, r.where(loc)}});
  return OTF2_CALLBACK_SUCCESS;
}

// The library's own messages would go to stderr; ebb reports its errors itself.
OTF2_ErrorCode quiet(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char*,
                     va_list) {
  return code;
}

}  // namespace

Result<MpiTrace> readOtf2Trace(const std::string& anchor, const CollectiveAlgos& algos,
                               Otf2Stats* stats) {
  OTF2_Error_RegisterCallback(quiet, nullptr);
  std::error_code ec;
  if (std::filesystem::is_directory(anchor, ec)) {
    // The usual slip: the archive's folder for its anchor file.
    const std::filesystem::path inside = std::filesystem::path(anchor) / "traces.otf2";
    return Status(ErrorCode::kIo,
                  fmt::format("trace {}: is a folder, expected an OTF2 anchor file (the .otf2 "
                              "file of the archive{})",
                              anchor,
                              std::filesystem::is_regular_file(inside, ec)
                                  ? fmt::format(": {}?", inside.string())
                                  : ""));
  }
  if (Status st = checkReadableFile(anchor, "trace"); !st.isOk()) return st;
  OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
  if (!reader) {
    return Status(ErrorCode::kIo, fmt::format("{}: not a readable OTF2 anchor file", anchor));
  }
  struct Closer {
    OTF2_Reader* r;
    ~Closer() { OTF2_Reader_Close(r); }
  } closer{reader};
  OTF2_Reader_SetSerialCollectiveCallbacks(reader);
  Reading rd;
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(reader);
  if (!gdr) return Status(ErrorCode::kParse, fmt::format("{}: no global definitions", anchor));
  OTF2_GlobalDefReaderCallbacks* dcb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(dcb, onString);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(dcb, onRegion);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(dcb, onLocationGroup);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(dcb, onLocation);
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(dcb, onClock);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(dcb, onGroup);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(dcb, onComm);
  OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(dcb, onInterComm);
  OTF2_Reader_RegisterGlobalDefCallbacks(reader, gdr, dcb, &rd);
  uint64_t defs = 0;
  const OTF2_ErrorCode defStatus = OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &defs);
  OTF2_GlobalDefReaderCallbacks_Delete(dcb);
  OTF2_Reader_CloseGlobalDefReader(reader, gdr);
  if (defStatus != OTF2_SUCCESS || rd.locations.empty()) {
    // The global definitions are the anchor's <name>.def beside it: named,
    // as a broken event file is.
    const std::string defFile = std::filesystem::path(anchor).replace_extension(".def").string();
    return Status(ErrorCode::kParse,
                  fmt::format("{}: unreadable global definitions ({}; the archive of {})", defFile,
                              OTF2_Error_GetDescription(defStatus), anchor));
  }
  if (rd.clockResolutionZero) {
    return Status(ErrorCode::kParse,
                  fmt::format("{}: clock resolution 0 in the global definitions: timestamps "
                              "cannot be converted to time (ticks per second must be > 0)",
                              anchor));
  }
  rd.rankOf = ranksOfLocations(rd.locations, rd.locationGroups, rd.comms.rankCount);
  rd.comms.rankOf = &rd.rankOf;
  rd.comms.strings = &rd.strings;
  rd.logs.resize(rd.comms.rankCount);
  // A location that recorded no events has no event file (the library
  // writes none): nothing to read for it.
  std::map<OTF2_LocationRef, std::uint32_t> read;  // location -> rank
  for (const auto& [loc, rk] : rd.rankOf) {
    if (rd.locations[loc].events == 0 &&
        !std::filesystem::exists(locationFile(anchor, loc, "evt"), ec))
      continue;
    read.emplace(loc, rk);
    OTF2_Reader_SelectLocation(reader, loc);
  }
  OTF2_Reader_OpenEvtFiles(reader);
  // Before the event readers: the library maps and corrects a location's
  // events with its local definitions when its event reader is made.
  Status local = readLocalDefinitions(reader, anchor, read, rd.stats.warnings);
  if (!local.isOk()) {
    OTF2_Reader_CloseEvtFiles(reader);
    return local;
  }
  for (const std::string& w : rd.stats.warnings)
    std::cerr << "warning: " << w << "\n";
  for (const auto& [loc, rk] : read)
    rd.evtReaders[loc] = OTF2_Reader_GetEvtReader(reader, loc);
  OTF2_GlobalEvtReader* ger = OTF2_Reader_GetGlobalEvtReader(reader);
  OTF2_GlobalEvtReaderCallbacks* ecb = OTF2_GlobalEvtReaderCallbacks_New();
  OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(ecb, onEnter);
  OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(ecb, onLeave);
  OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(ecb, onSend);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(ecb, onIsend);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback(ecb, onIsendComplete);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback(ecb, onIrecvRequest);
  OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(ecb, onRecv);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(ecb, onIrecv);
  OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(ecb, onCollectiveEnd);
  OTF2_GlobalEvtReaderCallbacks_SetRmaPutCallback(ecb, onRmaPut);
  OTF2_GlobalEvtReaderCallbacks_SetRmaGetCallback(ecb, onRmaGet);
  OTF2_GlobalEvtReaderCallbacks_SetRmaAtomicCallback(ecb, onRmaAtomic);
  OTF2_Reader_RegisterGlobalEvtCallbacks(reader, ger, ecb, &rd);
  uint64_t events = 0;
  const OTF2_ErrorCode evtStatus =
      read.empty() ? OTF2_SUCCESS : OTF2_Reader_ReadAllGlobalEvents(reader, ger, &events);
  OTF2_GlobalEvtReaderCallbacks_Delete(ecb);
  OTF2_Reader_CloseGlobalEvtReader(reader, ger);
  OTF2_Reader_CloseEvtFiles(reader);
  if (!rd.error.empty()) {
    return Status(ErrorCode::kParse, fmt::format("{}: {}", anchor, rd.error));
  }
  if (evtStatus != OTF2_SUCCESS && evtStatus != OTF2_ERROR_INTERRUPTED_BY_CALLBACK) {
    // Name the file that is broken, not the anchor that lists it.
    const std::string broken = brokenEventFile(anchor, rd.rankOf, rd.locations);
    return Status(ErrorCode::kParse, broken.empty()
                                         ? fmt::format("{}: unreadable events ({})", anchor,
                                                       OTF2_Error_GetDescription(evtStatus))
                                         : broken);
  }
  Result<MpiTrace> t = assembleRanks(anchor, rd.logs, rd.comms, algos, rd.stats.collectives);
  if (t && stats) *stats = rd.stats;
  return t;
}

#endif

}  // namespace ebb::workload
