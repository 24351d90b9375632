#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>

namespace ebb::daemon {

// Labels of ebb_decisions_total.
struct DecisionLabels {
  std::string source;  // "gating", "down-link-rule", "restore", ...
  bool turnOn = false;
  bool refused = false;
  std::string gatingAction;  // "disable_port" or "reduce_width"
  auto operator<=>(const DecisionLabels&) const = default;
};

// Labels of ebb_osm_events_total: the event, and the trap number for traps.
struct OsmEventLabels {
  std::string event;
  int trap = -1;  // -1: no trap label
  auto operator<=>(const OsmEventLabels&) const = default;
};

struct LinkCount {
  int on = 0;
  int off = 0;
};

// Everything `ebb agent` exports to Prometheus, as plain numbers: the daemon
// fills it from the backend, the transport and its own counters at each
// scrape; renderPrometheus() turns it into text.
struct DaemonMetrics {
  // Switch-to-switch links by the level of their upper switch.
  std::map<int, LinkCount> linksByLevel;
  double linkPowerRelative = 1.0;  // lanes on over lanes of all links at full width
  std::string gatingAction = "disable_port";
  std::uint64_t linksReducedWidth = 0;
  std::map<DecisionLabels, std::uint64_t> decisions;

  // The MAD transport.
  std::uint64_t madsSent = 0;
  std::uint64_t madsFailed = 0;
  std::uint64_t madsTimeouts = 0;
  std::uint64_t madsMalformed = 0;
  std::uint64_t madsOutstanding = 0;
  std::uint64_t madsQueued = 0;

  // The backend and the agents.
  std::uint64_t portSets = 0;
  std::uint64_t portSetsSuppressed = 0;
  double periodSeconds = 0;  // the last counter read of one switch
  std::uint64_t agents = 0;
  std::uint64_t agentsFailedSafe = 0;
  std::uint64_t agentsResumed = 0;  // failed-safe agents started again
  std::uint64_t smpReroutes = 0;
  std::uint64_t countersHeld = 0;
  std::uint64_t widthSetsReduce = 0;
  std::uint64_t widthSetsRestore = 0;
  // Faults and flapping.
  std::uint64_t rehomings = 0;             // minimal tree rebuilt after port events
  std::uint64_t linksRestored = 0;         // links turned on at once by those re-homings
  std::uint64_t recoveries = 0;            // re-homings whose links all came up again
  std::uint64_t recoveriesIncomplete = 0;  // ... not within agent.restore_timeout_ms
  // ... not all up by then, on purpose: turned off again, or a later re-homing took over.
  std::uint64_t recoveriesSuperseded = 0;
  double lastRecoverySeconds = 0;  // the last complete one, re-homing to all up
  std::uint64_t flapHolds = 0;     // turn-offs refused because the link flapped
  std::uint64_t linksHeldOn = 0;   // links held on by flap damping now
  // Safety of the management path (docs/ib_agent.md, *Safe by default*).
  bool subnetManagerMaster = false;      // a master SM answers: turn-offs may go
  std::uint64_t reenablesPending = 0;    // re-enables not delivered yet (retried)
  std::uint64_t reenablesDelivered = 0;  // ... delivered (or found up) after being pending
  std::uint64_t switchesOutOfReach = 0;  // switches a failure cut off the management port
  std::uint64_t reprobes = 0;            // rounds reading failed links again
  std::uint64_t reprobeRepairs = 0;      // links those rounds found up again

  // OpenSM's events (exported once any arrived).
  std::map<OsmEventLabels, std::uint64_t> osmEvents;
  std::uint64_t osmEventsMalformed = 0;
  std::uint64_t osmRereads = 0;        // switches re-read on an OpenSM event
  std::uint64_t osmRereadsFailed = 0;  // re-reads that failed
  std::uint64_t osmPortChanges = 0;    // port changes those re-reads found
};

// The Prometheus text exposition format 0.0.4 of `m`: HELP and TYPE lines,
// then the samples; label values escaped as the format requires.
std::string renderPrometheus(const DaemonMetrics& m);

}  // namespace ebb::daemon
