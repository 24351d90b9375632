#include "workload/otf2_communicators.h"

#include <fmt/format.h>

namespace ebb::workload::otf2 {

std::string Communicators::name(OTF2_CommRef comm) const {
  const auto it = comms.find(comm);
  if (it == comms.end()) return fmt::format("communicator {}", comm);
  const auto s = strings->find(it->second.name);
  return s == strings->end() || s->second.empty()
             ? fmt::format("communicator {}", comm)
             : fmt::format("communicator {} \"{}\"", comm, s->second);
}

const Communicator* Communicators::resolve(OTF2_CommRef comm, std::string& why) {
  if (const auto it = resolved_.find(comm); it != resolved_.end()) return &it->second;
  const auto def = comms.find(comm);
  if (def == comms.end()) {
    why = interComms.count(comm)
              ? fmt::format(
                    "communicator {} is an inter-communicator, which ebb does not replay "
                    "(its two groups exchange messages with no single rank numbering)",
                    comm)
              : fmt::format("communicator {} is not defined (no Comm definition)", comm);
    return nullptr;
  }
  Communicator c;
  c.name = name(comm);
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
    return &resolved_.emplace(comm, std::move(c)).first->second;
  }
  if (!world) {
    why = fmt::format("{}: its group {} is not a communicator's group (type {})", c.name,
                      def->second.group, static_cast<int>(g.type));
    return nullptr;
  }
  std::vector<std::uint32_t> worldRanks;  // MPI_COMM_WORLD rank -> trace rank
  for (const std::uint64_t loc : world->members) {
    const auto rank = rankOf->find(loc);
    if (rank == rankOf->end()) {
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
        why = fmt::format("{}: its group {} lists rank {}, beyond the {} ranks of MPI_COMM_WORLD",
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
  c.identity = c.peers.size() == rankCount;
  for (std::uint32_t i = 0; i < c.peers.size() && c.identity; ++i)
    c.identity = c.peers[i] == i;
  return &resolved_.emplace(comm, std::move(c)).first->second;
}

std::optional<std::uint32_t> peerRank(const Communicator& c, std::uint32_t rankCount,
                                      std::uint32_t self, const char* what, const char* role,
                                      std::uint32_t peer, std::string& why) {
  if (c.self) {
    why = peer == 0
              ? fmt::format("rank {} names itself as its peer ({} on {})", self, what, c.name)
              : fmt::format("{} rank {} is beyond {} (MPI_COMM_SELF: 1 rank)", role, peer, c.name);
    return std::nullopt;
  }
  if (!c.indexOf.count(self)) {
    why = fmt::format("{} on {}, of which rank {} is not a member ({} of the trace's {} ranks)",
                      what, c.name, self, c.members.size(), rankCount);
    return std::nullopt;
  }
  if (peer >= c.peers.size()) {
    why = fmt::format("{} rank {} is beyond the {} ranks of {} ({} on it)", role, peer,
                      c.peers.size(), c.name, what);
    return std::nullopt;
  }
  const std::uint32_t rank = c.peers[peer];
  if (!c.indexOf.count(rank)) {  // a group of MPI_COMM_WORLD ranks (GLOBAL_MEMBERS)
    why = fmt::format("{} rank {} is not a member of {} ({} on it)", role, peer, c.name, what);
    return std::nullopt;
  }
  if (rank == self) {
    why = c.identity
              ? fmt::format("rank {} names itself as its peer", self)
              : fmt::format("rank {} names itself as its peer (rank {} of {})", self, peer, c.name);
    return std::nullopt;
  }
  return rank;
}

}  // namespace ebb::workload::otf2
