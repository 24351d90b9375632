#include "workload/otf2_trace.h"

#include <fmt/format.h>

#ifdef EBB_HAVE_OTF2
#include <otf2/otf2.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
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

struct Collective {
  std::string op;  // expandCollective's names
  std::uint32_t root = 0;
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::string where;  // "rank R, event N", for errors
};

// What one location (rank) did, in order: ops, with collectives between them.
struct LocationLog {
  std::vector<MpiOp> ops;
  std::vector<std::pair<std::size_t, Collective> > collectives;  // (ops index, collective)
  std::optional<OTF2_TimeStamp> lastLeave;
  OTF2_TimeStamp enterTime = 0;
  bool inMpi = false;
  bool nonBlocking = false;
  std::map<std::uint64_t, std::size_t> pendingIrecv;    // request id -> op index
  std::map<std::uint64_t, std::uint64_t> pendingIsend;  // request id -> event ordinal
};

struct Reading {
  std::map<OTF2_StringRef, std::string> strings;
  std::map<OTF2_RegionRef, std::string> regions;
  std::map<OTF2_LocationRef, std::uint32_t> rankOf;  // filled from the definitions
  std::map<OTF2_LocationRef, OTF2_EvtReader*> evtReaders;
  std::vector<LocationLog> logs;
  double psPerTick = 1.0;
  bool clockResolutionZero = false;
  std::string error;
  Otf2Stats stats;

  LocationLog* log(OTF2_LocationRef loc) {
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

OTF2_CallbackCode onLocation(void* ud, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType,
                             uint64_t, OTF2_LocationGroupRef) {
  R(ud).rankOf[self] = 0;  // numbered once all are known
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
  LocationLog* l = r.log(loc);
  const std::string& name = r.regions[region];
  if (!l || l->inMpi || !isMpi(name)) return OTF2_CALLBACK_SUCCESS;
  // The time since the previous MPI call ended is the rank's own work.
  if (l->lastLeave && t > *l->lastLeave) {
    l->ops.push_back({MpiOpKind::kCompute, r.ps(t - *l->lastLeave), 0, 0, 0, 0});
  }
  l->inMpi = true;
  l->enterTime = t;
  l->nonBlocking = name == "MPI_Isend" || name == "MPI_Irecv";
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onLeave(OTF2_LocationRef loc, OTF2_TimeStamp t, void* ud, OTF2_AttributeList*,
                          OTF2_RegionRef region) {
  Reading& r = R(ud);
  LocationLog* l = r.log(loc);
  if (!l || !l->inMpi || !isMpi(r.regions[region])) return OTF2_CALLBACK_SUCCESS;
  if (l->nonBlocking && t > l->enterTime) {
    l->ops.push_back({MpiOpKind::kCompute, r.ps(t - l->enterTime), 0, 0, 0, 0});
  }
  l->inMpi = false;
  l->lastLeave = t;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode addSend(void* ud, OTF2_LocationRef loc, MpiOpKind kind, uint32_t receiver,
                          uint32_t tag, uint64_t length, std::uint32_t name) {
  Reading& r = R(ud);
  LocationLog* l = r.log(loc);
  if (!l) return OTF2_CALLBACK_SUCCESS;
  if (receiver >= r.logs.size()) {
    r.fail(loc,
           fmt::format("receiver rank {} is beyond the trace's {} ranks", receiver, r.logs.size()));
    return OTF2_CALLBACK_INTERRUPT;
  }
  if (receiver == r.rankOf[loc]) {
    r.fail(loc, fmt::format("rank {} names itself as its peer", receiver));
    return OTF2_CALLBACK_INTERRUPT;
  }
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
                         uint32_t receiver, OTF2_CommRef, uint32_t tag, uint64_t length) {
  return addSend(ud, loc, MpiOpKind::kSend, receiver, tag, length, 0);
}

OTF2_CallbackCode onIsend(OTF2_LocationRef loc, OTF2_TimeStamp, void* ud, OTF2_AttributeList*,
                          uint32_t receiver, OTF2_CommRef, uint32_t tag, uint64_t length,
                          uint64_t req) {
  Reading& r = R(ud);
  if (LocationLog* l = r.log(loc)) {
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
  return addSend(ud, loc, MpiOpKind::kIsend, receiver, tag, length, requestName(req));
}

OTF2_CallbackCode onIsendComplete(OTF2_LocationRef loc, OTF2_TimeStamp, void* ud,
                                  OTF2_AttributeList*, uint64_t req) {
  Reading& r = R(ud);
  if (LocationLog* l = r.log(loc)) {
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
  if (LocationLog* l = r.log(loc)) {
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
                         uint32_t sender, OTF2_CommRef, uint32_t tag, uint64_t length) {
  Reading& r = R(ud);
  LocationLog* l = r.log(loc);
  if (!l) return OTF2_CALLBACK_SUCCESS;
  if (sender >= r.logs.size()) {
    r.fail(loc,
           fmt::format("sender rank {} is beyond the trace's {} ranks", sender, r.logs.size()));
    return OTF2_CALLBACK_INTERRUPT;
  }
  if (sender == r.rankOf[loc]) {
    r.fail(loc, fmt::format("rank {} names itself as its peer", sender));
    return OTF2_CALLBACK_INTERRUPT;
  }
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
                          uint32_t sender, OTF2_CommRef, uint32_t tag, uint64_t length,
                          uint64_t req) {
  Reading& r = R(ud);
  LocationLog* l = r.log(loc);
  if (!l) return OTF2_CALLBACK_SUCCESS;
  const auto it = l->pendingIrecv.find(req);
  if (it == l->pendingIrecv.end()) {
    r.fail(loc, fmt::format("MPI_Irecv completes request {} that was never posted", req));
    return OTF2_CALLBACK_INTERRUPT;
  }
  if (sender >= r.logs.size()) {
    r.fail(loc,
           fmt::format("sender rank {} is beyond the trace's {} ranks", sender, r.logs.size()));
    return OTF2_CALLBACK_INTERRUPT;
  }
  if (sender == r.rankOf[loc]) {
    r.fail(loc, fmt::format("rank {} names itself as its peer", sender));
    return OTF2_CALLBACK_INTERRUPT;
  }
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
                                  OTF2_AttributeList*, OTF2_CollectiveOp op, OTF2_CommRef,
                                  uint32_t root, uint64_t sent, uint64_t received) {
  Reading& r = R(ud);
  LocationLog* l = r.log(loc);
  if (!l) return OTF2_CALLBACK_SUCCESS;
  static const std::map<OTF2_CollectiveOp, const char*> names = {
      {OTF2_COLLECTIVE_OP_BARRIER, "barrier"},   {OTF2_COLLECTIVE_OP_BCAST, "bcast"},
      {OTF2_COLLECTIVE_OP_GATHER, "gather"},     {OTF2_COLLECTIVE_OP_SCATTER, "scatter"},
      {OTF2_COLLECTIVE_OP_REDUCE, "reduce"},     {OTF2_COLLECTIVE_OP_ALLREDUCE, "allreduce"},
      {OTF2_COLLECTIVE_OP_ALLTOALL, "alltoall"}, {OTF2_COLLECTIVE_OP_ALLGATHER, "allgather"}};
  const auto it = names.find(op);
  if (it == names.end()) {
    // Communicator creation carries no data, but what follows it runs on the
    // new communicator, whose ranks ebb would take for MPI_COMM_WORLD's.
    const bool handle = op == OTF2_COLLECTIVE_OP_CREATE_HANDLE ||
                        op == OTF2_COLLECTIVE_OP_DESTROY_HANDLE ||
                        op == OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE ||
                        op == OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE;
    r.fail(loc, fmt::format("collective operation {} ({}) is not supported (barrier, bcast, "
                            "gather, scatter, reduce, allreduce, alltoall, allgather){}",
                            collectiveOpName(op), static_cast<int>(op),
                            handle ? ": ebb replays MPI_COMM_WORLD only, not communicators "
                                     "created or freed in the trace"
                                   : ""));
    return OTF2_CALLBACK_INTERRUPT;
  }
  // A rooted collective's root is a rank of the trace, never wrapped nor
  // guessed (the others record none: OTF2_UNDEFINED_UINT32).
  const std::string name = it->second;
  const bool rooted = name == "bcast" || name == "gather" || name == "scatter" || name == "reduce";
  if (rooted && root >= r.logs.size()) {
    r.fail(loc, fmt::format(
                    "{} root {} is not a rank of the trace (0..{})", name,
                    root == OTF2_UNDEFINED_UINT32 ? std::string("undefined") : std::to_string(root),
                    r.logs.size() - 1));
    return OTF2_CALLBACK_INTERRUPT;
  }
  if (sent > kMaxBytes || received > kMaxBytes) {
    r.fail(loc, fmt::format("{}: {}", name, tooLarge(std::max(sent, received))));
    return OTF2_CALLBACK_INTERRUPT;
  }
  l->collectives.push_back(
      {l->ops.size(), Collective{name, rooted ? root : 0, sent, received, r.where(loc)}});
  return OTF2_CALLBACK_SUCCESS;
}

// Merges the per-rank logs: point-to-point ops in order, each collective
// expanded for all ranks at once (they must agree on the operation).
Result<MpiTrace> assemble(const std::string& anchor, std::vector<LocationLog>& logs,
                          const CollectiveAlgos& algos, Otf2Stats& stats) {
  const auto P = static_cast<std::uint32_t>(logs.size());
  MpiTrace t;
  t.ranks.resize(P);
  const std::size_t count = logs[0].collectives.size();
  for (std::uint32_t r = 0; r < P; ++r) {
    if (logs[r].collectives.size() != count) {
      return Status(ErrorCode::kParse, fmt::format("{}: rank {} has {} collectives, rank 0 has {}",
                                                   anchor, r, logs[r].collectives.size(), count));
    }
    // An irecv that never completed (cancelled): drop it.
    for (const auto& [req, index] : logs[r].pendingIrecv)
      logs[r].ops[index] = {MpiOpKind::kCompute, 0, 0, 0, 0, 0};
  }
  std::vector<std::size_t> pos(P, 0);
  const auto copyUntil = [&](std::uint32_t r, std::size_t end) {
    for (; pos[r] < end; ++pos[r])
      t.ranks[r].push_back(logs[r].ops[pos[r]]);
  };
  for (std::size_t k = 0; k < count; ++k) {
    const Collective& c0 = logs[0].collectives[k].second;
    std::uint64_t bytes = 0;
    for (std::uint32_t r = 0; r < P; ++r) {
      const Collective& c = logs[r].collectives[k].second;
      if (c.op != c0.op) {
        return Status(ErrorCode::kParse,
                      fmt::format("{}: collective {} is {} on rank {} but {} on rank 0", anchor,
                                  k + 1, c.op, r, c0.op));
      }
      if (c.root != c0.root) {
        return Status(ErrorCode::kParse,
                      fmt::format("{}: {}: {} root is {} where rank 0 gives {} ({}); every rank "
                                  "must give the same",
                                  anchor, c.where, c.op, c.root, c0.root, c0.where));
      }
      copyUntil(r, logs[r].collectives[k].first);
      // Per-pair bytes from the recorded totals.
      const std::uint64_t sent = c.op == "alltoall" || c.op == "allgather"
                                     ? c.sent / std::max<std::uint32_t>(P, 1)
                                 : c.op == "bcast" || c.op == "scatter" ? c.received
                                                                        : c.sent;
      bytes = std::max(bytes, sent);
    }
    Status s = expandCollective(t.ranks, algos, c0.op == "allgather" ? "alltoall" : c0.op,
                                static_cast<std::int64_t>(bytes), -static_cast<std::int32_t>(k + 1),
                                c0.root);
    if (!s.isOk()) return Status(ErrorCode::kParse, fmt::format("{}: {}", anchor, s.message()));
  }
  for (std::uint32_t r = 0; r < P; ++r)
    copyUntil(r, logs[r].ops.size());
  if (Status s = checkSendsMatchReceives(t, anchor); !s.isOk()) return s;
  stats.collectives = count;
  t.countOps();
  return t;
}

// The library's own messages would go to stderr; ebb reports its errors itself.
OTF2_ErrorCode quiet(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char*,
                     va_list) {
  return code;
}

// The archive folder of an anchor ("x/traces.otf2" -> "x/traces").
std::filesystem::path archiveOf(const std::string& anchor) {
  std::filesystem::path p(anchor);
  return p.parent_path() / p.stem();
}

// Which location's event file the library cannot read, each read alone on a
// fresh reader: "<archive>/<location>.evt (after N events: <why>)", or empty.
std::string brokenEventFile(const std::string& anchor,
                            const std::map<OTF2_LocationRef, std::uint32_t>& locations) {
  for (const auto& [loc, rank] : locations) {
    OTF2_Reader* r = OTF2_Reader_Open(anchor.c_str());
    if (!r) return {};
    OTF2_Reader_SetSerialCollectiveCallbacks(r);
    OTF2_Reader_SelectLocation(r, loc);
    OTF2_Reader_OpenEvtFiles(r);
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(r, loc);
    uint64_t n = 0;
    const OTF2_ErrorCode st =
        er ? OTF2_Reader_ReadAllLocalEvents(r, er, &n) : OTF2_ERROR_INVALID_ARGUMENT;
    OTF2_Reader_CloseEvtFiles(r);
    OTF2_Reader_Close(r);
    if (st != OTF2_SUCCESS) {
      return fmt::format("{} (rank {}, after {} events: {})",
                         (archiveOf(anchor) / fmt::format("{}.evt", loc)).string(), rank, n,
                         OTF2_Error_GetDescription(st));
    }
  }
  return {};
}

}  // namespace

Result<MpiTrace> readOtf2Trace(const std::string& anchor, const CollectiveAlgos& algos,
                               Otf2Stats* stats) {
  OTF2_Error_RegisterCallback(quiet, nullptr);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(anchor, ec)) {
    return Status(ErrorCode::kIo, fmt::format("cannot open trace {}", anchor));
  }
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
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(dcb, onLocation);
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(dcb, onClock);
  OTF2_Reader_RegisterGlobalDefCallbacks(reader, gdr, dcb, &rd);
  uint64_t defs = 0;
  const OTF2_ErrorCode defStatus = OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &defs);
  OTF2_GlobalDefReaderCallbacks_Delete(dcb);
  OTF2_Reader_CloseGlobalDefReader(reader, gdr);
  if (defStatus != OTF2_SUCCESS || rd.rankOf.empty()) {
    return Status(ErrorCode::kParse, fmt::format("{}: unreadable definitions ({})", anchor,
                                                 OTF2_Error_GetDescription(defStatus)));
  }
  if (rd.clockResolutionZero) {
    return Status(ErrorCode::kParse,
                  fmt::format("{}: clock resolution 0 in the global definitions: timestamps "
                              "cannot be converted to time (ticks per second must be > 0)",
                              anchor));
  }
  std::uint32_t rank = 0;
  for (auto& [loc, rk] : rd.rankOf) {
    rk = rank++;
    OTF2_Reader_SelectLocation(reader, loc);
  }
  rd.logs.resize(rd.rankOf.size());
  const bool defFiles = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS;
  OTF2_Reader_OpenEvtFiles(reader);
  for (const auto& [loc, rk] : rd.rankOf) {
    if (defFiles) {
      if (OTF2_DefReader* dr = OTF2_Reader_GetDefReader(reader, loc)) {
        uint64_t n = 0;
        const OTF2_ErrorCode st = OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &n);
        OTF2_Reader_CloseDefReader(reader, dr);
        if (st != OTF2_SUCCESS) {
          return Status(ErrorCode::kParse,
                        fmt::format("{}: unreadable local definitions (rank {}, after {} "
                                    "records: {})",
                                    (archiveOf(anchor) / fmt::format("{}.def", loc)).string(), rk,
                                    n, OTF2_Error_GetDescription(st)));
        }
      }
    }
    rd.evtReaders[loc] = OTF2_Reader_GetEvtReader(reader, loc);
  }
  if (defFiles) OTF2_Reader_CloseDefFiles(reader);
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
  OTF2_Reader_RegisterGlobalEvtCallbacks(reader, ger, ecb, &rd);
  uint64_t events = 0;
  const OTF2_ErrorCode evtStatus = OTF2_Reader_ReadAllGlobalEvents(reader, ger, &events);
  OTF2_GlobalEvtReaderCallbacks_Delete(ecb);
  OTF2_Reader_CloseGlobalEvtReader(reader, ger);
  OTF2_Reader_CloseEvtFiles(reader);
  if (!rd.error.empty()) {
    return Status(ErrorCode::kParse, fmt::format("{}: {}", anchor, rd.error));
  }
  if (evtStatus != OTF2_SUCCESS && evtStatus != OTF2_ERROR_INTERRUPTED_BY_CALLBACK) {
    // Name the file that is broken, not the anchor that lists it.
    const std::string broken = brokenEventFile(anchor, rd.rankOf);
    return Status(ErrorCode::kParse, broken.empty()
                                         ? fmt::format("{}: unreadable events ({})", anchor,
                                                       OTF2_Error_GetDescription(evtStatus))
                                         : fmt::format("{}: unreadable events", broken));
  }
  Result<MpiTrace> t = assemble(anchor, rd.logs, algos, rd.stats);
  if (t && stats) *stats = rd.stats;
  return t;
}

#endif

}  // namespace ebb::workload
