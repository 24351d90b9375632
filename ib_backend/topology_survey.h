#pragma once
// Topology versus fabric (docs/ib_agent.md, *Topology versus fabric*): what
// discovery saw at every port of every switch it reached, and the comparison
// of those cables with the configured topology — missing, extra and moved
// cables, and per configured link what ebb may take it for.
#include <cstdint>
#include <string>
#include <vector>

#include "fabric/topology.h"

namespace ebb::ib {

// What one switch port showed at start.
struct PortSighting {
  enum class Kind : std::uint8_t {
    kNotRead,   // the switch was out of reach (or the port was not asked)
    kDisabled,  // PortPhysicalState Disabled: a cable may be there, switched off
    kNoPeer,    // not LinkUp and not Disabled (Polling, Sleep, ...): nothing trained
    kPeer,      // LinkUp, and NodeInfo through it named the far end
    kSilent,    // LinkUp, but nothing answered NodeInfo through it
  };
  Kind kind = Kind::kNotRead;
  std::string state;  // the physical state as read ("Polling"), for the listing
  // kPeer: the far end, from NodeInfo by directed route through the port.
  std::uint64_t peerGuid = 0;
  bool peerIsSwitch = false;
  std::uint8_t peerPort = 0;  // NodeInfo.LocalPortNum: the port the SMP entered by
};

// What discovery makes of one configured link.
enum class LinkFinding : std::uint8_t {
  kUp,          // the cable is there, both ends as configured
  kDisabled,    // an end reads Disabled (an earlier run, an operator): there, down
  kHostDown,    // a host cable whose switch port has no peer (a host may be off)
  kDown,        // a switch cable whose ends both exist and read down: a failed cable
  kMissing,     // an end the switch does not have (the topology names a port it lacks)
  kMoved,       // an end is cabled elsewhere
  kUnverified,  // an end could not be read or did not answer: state unknown
};
const char* linkFindingName(LinkFinding f);
// The findings ebb never sends a Set for: the link is not (known to be) there.
inline bool isAbsent(LinkFinding f) {
  return f == LinkFinding::kMissing || f == LinkFinding::kMoved || f == LinkFinding::kUnverified;
}

struct TopologyDifference {
  enum class Kind : std::uint8_t { kMissing, kExtra, kMoved };
  Kind kind = Kind::kMissing;
  std::string text;  // one line, naming switches (name and GUID) and port numbers
};
const char* differenceKindName(TopologyDifference::Kind k);  // "missing", "extra", "moved"

struct TopologySurvey {
  std::vector<LinkFinding> links;               // by LinkId
  std::vector<TopologyDifference> differences;  // missing, then moved, then extra
  std::vector<std::string> unverified;          // one line per kUnverified link
  bool matches() const { return differences.empty(); }
  // "missing: ...\nextra: ..." (no final newline), each line `indent`ed.
  std::string listing(const std::string& indent = "") const;
};

// Compares the configured topology with the sightings: `seen[s]` holds the
// ports of switch s by IB port number - 1 (empty when s was not reached).
TopologySurvey compareWithFabric(const fabric::Topology& topo,
                                 const std::vector<std::vector<PortSighting>>& seen);

}  // namespace ebb::ib
