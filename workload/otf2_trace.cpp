#include "workload/otf2_trace.h"

#include <fmt/format.h>

#ifdef EBB_HAVE_OTF2
#include <otf2/otf2.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <queue>
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
  OTF2_CommRef comm = 0;
  std::uint32_t root = 0;  // a rank of the communicator, as the event gives it
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

// A Group definition (communicators' groups only are used).
struct GroupDef {
  OTF2_GroupType type = OTF2_GROUP_TYPE_UNKNOWN;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
  OTF2_GroupFlag flags = OTF2_GROUP_FLAG_NONE;
  std::vector<std::uint64_t> members;
};

struct CommDef {
  OTF2_StringRef name = OTF2_UNDEFINED_STRING;
  OTF2_GroupRef group = OTF2_UNDEFINED_GROUP;
};

// A communicator in the trace's ranks. Events give their peers and roots as
// ranks of the communicator: peers[i] is the trace rank of rank i. members are
// the ranks taking part in its collectives, in communicator order (the same
// as peers but for groups flagged GLOBAL_MEMBERS, whose events give
// MPI_COMM_WORLD ranks).
struct Communicator {
  std::string name;   // "communicator 1 \"Comm 1\"", for errors
  bool self = false;  // MPI_COMM_SELF: every rank alone
  std::vector<std::uint32_t> peers;
  std::vector<std::uint32_t> members;
  std::map<std::uint32_t, std::uint32_t> indexOf;  // trace rank -> index in members
  bool identity = false;                           // peers are the trace's ranks 0..P-1
};

struct Reading {
  std::map<OTF2_StringRef, std::string> strings;
  std::map<OTF2_RegionRef, std::string> regions;
  std::map<OTF2_LocationRef, std::uint32_t> rankOf;    // filled from the definitions
  std::map<OTF2_LocationRef, std::uint64_t> eventsOf;  // as the definitions give them
  std::map<OTF2_GroupRef, GroupDef> groups;
  std::map<OTF2_CommRef, CommDef> comms;
  std::set<OTF2_CommRef> interComms;
  std::map<OTF2_CommRef, Communicator> resolved;  // filled as events use them
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

  std::string commName(OTF2_CommRef comm) const {
    const auto it = comms.find(comm);
    if (it == comms.end()) return fmt::format("communicator {}", comm);
    const auto name = strings.find(it->second.name);
    return name == strings.end() || name->second.empty()
               ? fmt::format("communicator {}", comm)
               : fmt::format("communicator {} \"{}\"", comm, name->second);
  }

  // The communicator `comm` in the trace's ranks, or nullptr with `why` set
  // to the definitions' fault.
  const Communicator* communicator(OTF2_CommRef comm, std::string& why) {
    if (const auto it = resolved.find(comm); it != resolved.end()) return &it->second;
    const auto def = comms.find(comm);
    if (def == comms.end()) {
      why = interComms.count(comm)
                ? fmt::format("communicator {} is an inter-communicator, which ebb does not replay",
                              comm)
                : fmt::format("communicator {} is not defined (no Comm definition)", comm);
      return nullptr;
    }
    Communicator c;
    c.name = commName(comm);
    const auto group = groups.find(def->second.group);
    if (group == groups.end()) {
      why = def->second.group == OTF2_UNDEFINED_GROUP
                ? fmt::format("{} has no group", c.name)
                : fmt::format("{} has group {}, which is not defined", c.name, def->second.group);
      return nullptr;
    }
    const GroupDef& g = group->second;
    // The locations of the paradigm's MPI_COMM_WORLD, in rank order.
    const GroupDef* world = nullptr;
    OTF2_GroupRef worldRef = def->second.group;
    if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS) world = &g;
    if (g.type == OTF2_GROUP_TYPE_COMM_GROUP) {
      for (const auto& [ref, other] : groups) {
        if (other.type == OTF2_GROUP_TYPE_COMM_LOCATIONS && other.paradigm == g.paradigm) {
          world = &other;
          worldRef = ref;
          break;
        }
      }
      if (!world) {
        why = fmt::format(
            "{}: its group {} lists ranks of a COMM_LOCATIONS group, and none is "
            "defined for its paradigm",
            c.name, def->second.group);
        return nullptr;
      }
    }
    if (g.type == OTF2_GROUP_TYPE_COMM_SELF) {
      c.self = true;
    } else if (!world) {
      why = fmt::format("{}: its group {} is not a communicator's group (type {})", c.name,
                        def->second.group, static_cast<int>(g.type));
      return nullptr;
    } else {
      std::vector<std::uint32_t> worldRanks;  // MPI_COMM_WORLD rank -> trace rank
      for (const std::uint64_t loc : world->members) {
        const auto rank = rankOf.find(loc);
        if (rank == rankOf.end()) {
          why = fmt::format(
              "{}: the COMM_LOCATIONS group {} (MPI_COMM_WORLD's locations) lists "
              "location {}, which is not defined",
              c.name, worldRef, loc);
          return nullptr;
        }
        worldRanks.push_back(rank->second);
      }
      if (world == &g) {
        c.members = worldRanks;
      } else {
        for (const std::uint64_t i : g.members) {
          if (i >= worldRanks.size()) {
            why =
                fmt::format("{}: its group {} lists rank {}, beyond the {} ranks of MPI_COMM_WORLD",
                            c.name, def->second.group, i, worldRanks.size());
            return nullptr;
          }
          c.members.push_back(worldRanks[i]);
        }
      }
      c.peers = (g.flags & OTF2_GROUP_FLAG_GLOBAL_MEMBERS) ? worldRanks : c.members;
      for (std::uint32_t i = 0; i < c.members.size(); ++i) {
        if (!c.indexOf.emplace(c.members[i], i).second) {
          why = fmt::format("{}: its group lists rank {} twice", c.name, c.members[i]);
          return nullptr;
        }
      }
      c.identity = c.peers.size() == logs.size();
      for (std::uint32_t i = 0; i < c.peers.size() && c.identity; ++i)
        c.identity = c.peers[i] == i;
    }
    return &resolved.emplace(comm, std::move(c)).first->second;
  }

  // The trace rank of `peer` ("receiver"/"sender"), a rank of `comm` as the
  // event `what` of `loc` gives it; nullopt once failed.
  std::optional<std::uint32_t> peerOf(OTF2_LocationRef loc, const char* what, OTF2_CommRef comm,
                                      const char* role, std::uint32_t peer) {
    std::string why;
    const Communicator* c = communicator(comm, why);
    if (!c) {
      fail(loc, fmt::format("{}: {}", what, why));
      return std::nullopt;
    }
    const std::uint32_t self = rankOf[loc];
    if (c->self) {
      if (peer == 0) {
        fail(loc, fmt::format("rank {} names itself as its peer ({} on {})", self, what, c->name));
      } else {
        fail(loc,
             fmt::format("{} rank {} is beyond {} (MPI_COMM_SELF: 1 rank)", role, peer, c->name));
      }
      return std::nullopt;
    }
    if (!c->indexOf.count(self)) {
      fail(loc, fmt::format("{} on {}, of which rank {} is not a member ({} of the trace's {} "
                            "ranks)",
                            what, c->name, self, c->members.size(), logs.size()));
      return std::nullopt;
    }
    if (peer >= c->peers.size()) {
      fail(loc, fmt::format("{} rank {} is beyond the {} ranks of {} ({} on it)", role, peer,
                            c->peers.size(), c->name, what));
      return std::nullopt;
    }
    const std::uint32_t rank = c->peers[peer];
    if (!c->indexOf.count(rank)) {  // a group of MPI_COMM_WORLD ranks (GLOBAL_MEMBERS)
      fail(loc,
           fmt::format("{} rank {} is not a member of {} ({} on it)", role, peer, c->name, what));
      return std::nullopt;
    }
    if (rank == self) {
      fail(loc, c->identity ? fmt::format("rank {} names itself as its peer", self)
                            : fmt::format("rank {} names itself as its peer (rank {} of {})", self,
                                          peer, c->name));
      return std::nullopt;
    }
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

OTF2_CallbackCode onLocation(void* ud, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType,
                             uint64_t events, OTF2_LocationGroupRef) {
  R(ud).rankOf[self] = 0;  // numbered once all are known
  R(ud).eventsOf[self] = events;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onGroup(void* ud, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type,
                          OTF2_Paradigm paradigm, OTF2_GroupFlag flags, uint32_t count,
                          const uint64_t* members) {
  GroupDef& g = R(ud).groups[self];
  g.type = type;
  g.paradigm = paradigm;
  g.flags = flags;
  g.members.assign(members, members + count);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onComm(void* ud, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group,
                         OTF2_CommRef, OTF2_CommFlag) {
  R(ud).comms[self] = {name, group};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onInterComm(void* ud, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef,
                              OTF2_GroupRef, OTF2_CommRef, OTF2_CommFlag) {
  R(ud).interComms.insert(self);
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

OTF2_CallbackCode addSend(void* ud, OTF2_LocationRef loc, MpiOpKind kind, uint32_t peer,
                          OTF2_CommRef comm, uint32_t tag, uint64_t length, std::uint32_t name) {
  Reading& r = R(ud);
  LocationLog* l = r.log(loc);
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
  return addSend(ud, loc, MpiOpKind::kIsend, receiver, comm, tag, length, requestName(req));
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
                         uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t length) {
  Reading& r = R(ud);
  LocationLog* l = r.log(loc);
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
  LocationLog* l = r.log(loc);
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
  LocationLog* l = r.log(loc);
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
    r.fail(loc, fmt::format(
                    "collective operation {} ({}) is not supported (barrier, bcast, "
                    "gather, scatter, reduce, allreduce, alltoall, allgather){}",
                    collectiveOpName(op), static_cast<int>(op),
                    window ? ": ebb does not replay one-sided communication (MPI windows)" : ""));
    return OTF2_CALLBACK_INTERRUPT;
  }
  const std::string name = it->second;
  std::string why;
  const Communicator* c = r.communicator(comm, why);
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

// Merges the per-rank logs: point-to-point ops in order, each collective
// expanded over its communicator's members at once. The members' k-th
// collectives on a communicator are one operation, so they must agree on it;
// a rank's collectives run in its order, whatever their communicators.
Result<MpiTrace> assemble(const std::string& anchor, Reading& rd, const CollectiveAlgos& algos) {
  std::vector<LocationLog>& logs = rd.logs;
  const auto P = static_cast<std::uint32_t>(logs.size());
  MpiTrace t;
  t.ranks.resize(P);
  for (std::uint32_t r = 0; r < P; ++r) {
    // An irecv that never completed (cancelled): drop it.
    for (const auto& [req, index] : logs[r].pendingIrecv)
      logs[r].ops[index] = {MpiOpKind::kCompute, 0, 0, 0, 0, 0};
  }
  // One instance per (communicator, k): the k-th collective of every member.
  struct Instance {
    const Communicator* comm = nullptr;
    std::vector<std::size_t> of;  // per member: its index in the member's log
    std::size_t arrived = 0;      // members whose next collective this is
  };
  std::vector<Instance> instances;
  std::map<OTF2_CommRef, std::size_t> base;                     // the communicator's first instance
  std::vector<std::map<OTF2_CommRef, std::size_t> > counts(P);  // per rank and communicator
  for (std::uint32_t r = 0; r < P; ++r) {
    for (const auto& [index, col] : logs[r].collectives)
      ++counts[r][col.comm];
  }
  for (const auto& [ref, c] : rd.resolved) {
    if (c.self || c.members.empty()) continue;
    const auto countOf = [&, ref = ref](std::uint32_t m) {
      const auto it = counts[m].find(ref);
      return it == counts[m].end() ? std::size_t{0} : it->second;
    };
    const std::size_t count = countOf(c.members[0]);
    for (const std::uint32_t m : c.members) {
      if (countOf(m) != count) {
        return Status(ErrorCode::kParse,
                      fmt::format("{}: {}: rank {} has {} collectives on it, rank {} has {}; "
                                  "every member must call the same",
                                  anchor, c.name, m, countOf(m), c.members[0], count));
      }
    }
    base[ref] = instances.size();
    for (std::size_t k = 0; k < count; ++k)
      instances.push_back({&c, std::vector<std::size_t>(c.members.size()), 0});
  }
  // Each rank's collectives as instances, in its order.
  std::vector<std::vector<std::size_t> > sequence(P);
  for (std::uint32_t r = 0; r < P; ++r) {
    std::map<OTF2_CommRef, std::size_t> seen;
    for (std::size_t j = 0; j < logs[r].collectives.size(); ++j) {
      const OTF2_CommRef ref = logs[r].collectives[j].second.comm;
      const std::size_t id = base.at(ref) + seen[ref]++;
      instances[id].of[instances[id].comm->indexOf.at(r)] = j;
      sequence[r].push_back(id);
    }
  }
  std::vector<std::size_t> pos(P, 0), next(P, 0);
  const auto copyUntil = [&](std::uint32_t r, std::size_t end) {
    for (; pos[r] < end; ++pos[r])
      t.ranks[r].push_back(logs[r].ops[pos[r]]);
  };
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<> > ready;
  const auto arrive = [&](std::uint32_t r) {
    if (next[r] == sequence[r].size()) return;
    Instance& in = instances[sequence[r][next[r]]];
    if (++in.arrived == in.comm->members.size()) ready.push(sequence[r][next[r]]);
  };
  for (std::uint32_t r = 0; r < P; ++r)
    arrive(r);
  std::size_t done = 0;
  while (!ready.empty()) {
    // The lowest ready instance first: one communicator's instances keep
    // their order, and MPI_COMM_WORLD's tags are the collective's number.
    const std::size_t id = ready.top();
    ready.pop();
    const Instance& in = instances[id];
    const Communicator& c = *in.comm;
    const auto size = static_cast<std::uint32_t>(c.members.size());
    const std::uint32_t r0 = c.members[0];
    const Collective& c0 = logs[r0].collectives[in.of[0]].second;
    std::uint64_t bytes = 0;
    for (std::uint32_t i = 0; i < size; ++i) {
      const std::uint32_t r = c.members[i];
      const auto& [index, col] = logs[r].collectives[in.of[i]];
      if (col.op != c0.op) {
        return Status(ErrorCode::kParse,
                      fmt::format("{}: {}: collective {} on {} is {} on rank {} but {} on rank {} "
                                  "({})",
                                  anchor, col.where, id - base.at(col.comm) + 1, c.name, col.op, r,
                                  c0.op, r0, c0.where));
      }
      if (col.root != c0.root) {
        return Status(
            ErrorCode::kParse,
            fmt::format("{}: {}: {} root on {} is {} where rank {} gives {} ({}); every "
                        "member must give the same",
                        anchor, col.where, col.op, c.name, col.root, r0, c0.root, c0.where));
      }
      copyUntil(r, index);
      // Per-pair bytes from the recorded totals.
      const std::uint64_t sent = col.op == "alltoall" || col.op == "allgather"
                                     ? col.sent / std::max<std::uint32_t>(size, 1)
                                 : col.op == "bcast" || col.op == "scatter" ? col.received
                                                                            : col.sent;
      bytes = std::max(bytes, sent);
    }
    if (size > 1) {
      Status s =
          expandCollectiveOver(t.ranks, c.members, algos, c0.op == "allgather" ? "alltoall" : c0.op,
                               static_cast<std::int64_t>(bytes), -static_cast<std::int32_t>(id + 1),
                               c.indexOf.at(c.peers[c0.root]));
      if (!s.isOk()) {
        return Status(ErrorCode::kParse, fmt::format("{}: {}: {} on {}: {}", anchor, c0.where,
                                                     c0.op, c.name, s.message()));
      }
    }
    ++done;
    for (const std::uint32_t r : c.members) {
      ++next[r];
      arrive(r);
    }
  }
  if (done < instances.size()) {
    // Members reach their collectives on different communicators in orders
    // that wait for each other: MPI would deadlock too.
    for (std::uint32_t r = 0; r < P; ++r) {
      if (next[r] == sequence[r].size()) continue;
      const Instance& in = instances[sequence[r][next[r]]];
      const Collective& col = logs[r].collectives[in.of[in.comm->indexOf.at(r)]].second;
      for (std::uint32_t i = 0; i < in.comm->members.size(); ++i) {
        const std::uint32_t m = in.comm->members[i];
        if (next[m] < sequence[m].size() && sequence[m][next[m]] == sequence[r][next[r]]) continue;
        std::string other = fmt::format("rank {} has no collective left", m);
        if (next[m] < sequence[m].size()) {
          const Instance& at = instances[sequence[m][next[m]]];
          const Collective& oc = logs[m].collectives[at.of[at.comm->indexOf.at(m)]].second;
          other =
              fmt::format("rank {} first calls {} on {} ({})", m, oc.op, at.comm->name, oc.where);
        }
        return Status(ErrorCode::kParse,
                      fmt::format("{}: {}: {} on {} never runs: {}; the ranks call their "
                                  "collectives on different communicators in orders that wait "
                                  "for each other",
                                  anchor, col.where, col.op, in.comm->name, other));
      }
    }
    return Status(ErrorCode::kParse, fmt::format("{}: collectives that never run", anchor));
  }
  for (std::uint32_t r = 0; r < P; ++r)
    copyUntil(r, logs[r].ops.size());
  if (Status s = checkSendsMatchReceives(t, anchor); !s.isOk()) return s;
  rd.stats.collectives = instances.size();
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
// fresh reader: "<archive>/<location>.evt (rank R, after N events: <why>):
// unreadable events" or "... is missing ...", or empty.
std::string brokenEventFile(const std::string& anchor,
                            const std::map<OTF2_LocationRef, std::uint32_t>& locations,
                            const std::map<OTF2_LocationRef, std::uint64_t>& events) {
  for (const auto& [loc, rank] : locations) {
    const std::filesystem::path file = archiveOf(anchor) / fmt::format("{}.evt", loc);
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
      const auto n = events.find(loc);
      if (n == events.end() || n->second == 0) continue;  // no events: no file
      return fmt::format("{} (rank {}) is missing, and the definitions give location {} {} events",
                         file.string(), rank, loc, n->second);
    }
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
      return fmt::format("{} (rank {}, after {} events: {}): unreadable events", file.string(),
                         rank, n, OTF2_Error_GetDescription(st));
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
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(dcb, onGroup);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(dcb, onComm);
  OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(dcb, onInterComm);
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
  // A location that recorded no events has no event file (the library
  // writes none): a rank without operations, not a file to read.
  std::set<OTF2_LocationRef> idle;
  std::uint32_t rank = 0;
  for (auto& [loc, rk] : rd.rankOf) {
    rk = rank++;
    if (rd.eventsOf[loc] == 0 &&
        !std::filesystem::exists(archiveOf(anchor) / fmt::format("{}.evt", loc), ec)) {
      idle.insert(loc);
      continue;
    }
    OTF2_Reader_SelectLocation(reader, loc);
  }
  rd.logs.resize(rd.rankOf.size());
  const bool defFiles = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS;
  OTF2_Reader_OpenEvtFiles(reader);
  for (const auto& [loc, rk] : rd.rankOf) {
    if (idle.count(loc)) continue;
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
  const OTF2_ErrorCode evtStatus = idle.size() == rd.rankOf.size()
                                       ? OTF2_SUCCESS
                                       : OTF2_Reader_ReadAllGlobalEvents(reader, ger, &events);
  OTF2_GlobalEvtReaderCallbacks_Delete(ecb);
  OTF2_Reader_CloseGlobalEvtReader(reader, ger);
  OTF2_Reader_CloseEvtFiles(reader);
  if (!rd.error.empty()) {
    return Status(ErrorCode::kParse, fmt::format("{}: {}", anchor, rd.error));
  }
  if (evtStatus != OTF2_SUCCESS && evtStatus != OTF2_ERROR_INTERRUPTED_BY_CALLBACK) {
    // Name the file that is broken, not the anchor that lists it.
    const std::string broken = brokenEventFile(anchor, rd.rankOf, rd.eventsOf);
    return Status(ErrorCode::kParse, broken.empty()
                                         ? fmt::format("{}: unreadable events ({})", anchor,
                                                       OTF2_Error_GetDescription(evtStatus))
                                         : broken);
  }
  Result<MpiTrace> t = assemble(anchor, rd, algos);
  if (t && stats) *stats = rd.stats;
  return t;
}

#endif

}  // namespace ebb::workload
