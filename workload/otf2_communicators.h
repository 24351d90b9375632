#pragma once

// OTF2 communicators in a trace's ranks: the Comm and Group definitions of an
// archive, and the translation of an event's communicator-relative ranks
// (peers, roots) to the ranks ebb replays. Only built with OTF2.

#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_GeneralDefinitions.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ebb::workload::otf2 {

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

// The archive's communicator definitions, resolved into trace ranks as
// events use them.
class Communicators {
 public:
  // The definitions, as the global definition reader delivers them.
  std::map<OTF2_GroupRef, GroupDef> groups;
  std::map<OTF2_CommRef, CommDef> comms;
  std::set<OTF2_CommRef> interComms;

  // The trace's strings (for names), the rank of each location and how many
  // ranks there are. Set before the first name() or resolve().
  const std::map<OTF2_StringRef, std::string>* strings = nullptr;
  const std::map<OTF2_LocationRef, std::uint32_t>* rankOf = nullptr;
  std::uint32_t rankCount = 0;

  // "communicator 1 \"Comm 1\"" (or without the name when it has none).
  std::string name(OTF2_CommRef comm) const;

  // The communicator `comm` in the trace's ranks, or nullptr with `why` set
  // to the definitions' fault.
  const Communicator* resolve(OTF2_CommRef comm, std::string& why);

  // The communicators resolved so far (those the events used).
  const std::map<OTF2_CommRef, Communicator>& resolved() const { return resolved_; }

 private:
  std::map<OTF2_CommRef, Communicator> resolved_;
};

// The trace rank of `peer`, a rank of `c` that the event `what` of rank
// `self` gives as its `role` ("receiver", "sender"); nullopt with `why` set
// when it is not one (beyond the communicator, not a member, or `self`).
std::optional<std::uint32_t> peerRank(const Communicator& c, std::uint32_t rankCount,
                                      std::uint32_t self, const char* what, const char* role,
                                      std::uint32_t peer, std::string& why);

}  // namespace ebb::workload::otf2
