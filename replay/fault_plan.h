#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "configs/proto/replay.pb.h"  // generated
#include "fabric/ids.h"

namespace ebb::replay {

// The faults of a run (docs/faults.md), checked but not yet bound to a
// topology: the config names parts by switch name or by level and index, and
// the runner resolves them against the fabric it builds (FaultInjector).
enum class FaultAction : std::uint8_t { kFail, kRepair, kRestartAgent };
enum class FaultScope : std::uint8_t { kLink, kUpDirection, kDownDirection, kSwitch };

// Which part an event names.
struct FaultTargetDef {
  std::string switchName;      // empty: by level and index
  int level = -1;              // with no switch name
  std::uint32_t index = 0;     // within the level, ascending switch id
  std::uint16_t port = 0;      // IB port number (1-based); 0: none
  bool minimalTreeUp = false;  // the switch's minimal-tree up link at the event's time
};

struct FaultEventDef {
  TimePs at = 0;
  FaultAction action = FaultAction::kFail;
  FaultScope scope = FaultScope::kLink;
  FaultTargetDef target;
  std::string where;  // "faults.event[3]", for errors
};

// A seeded failure process (RandomFaultsSpec); mtbfPs == 0: none.
struct RandomFaultsDef {
  TimePs mtbfPs = 0;
  TimePs repairPs = 0;  // mean; 0: never repaired
  double mtShare = 0.5;
  double switchShare = 0;
  double directionShare = 0;
  TimePs startPs = 0;
  TimePs endPs = 0;  // 0: the workload's horizon
  std::uint32_t maxFailed = 1;
  std::uint64_t seed = 1;
  std::uint64_t maxArrivals = 100'000;  // the cost guard (faults.random.max_arrivals)
  bool enabled() const { return mtbfPs > 0; }
  // When arrivals stop: endPs, or the workload's horizon.
  TimePs endAt(TimePs horizon) const { return endPs > 0 ? endPs : horizon; }
};

struct FaultsDef {
  std::vector<FaultEventDef> events;  // ascending time (stable for equal times)
  RandomFaultsDef random;
  TimePs detectionPs = 1'000'000;
  TimePs retransmitTimeoutPs = 100'000'000;
  TimePs recoverySlackPs = 0;
  // detection + T_on + one check period + slack (setRecoveryBound).
  TimePs recoveryBoundPs = 0;
  // Replay: a pair disconnected beyond the recovery bound ends the run with
  // E_INTERNAL. Campaign: it is counted (FaultOutcome::violations) and the run goes on.
  bool violationsAreErrors = true;
  bool any() const { return !events.empty() || random.enabled(); }
};

// E_INVALID naming the field ("faults.event[2].port: ...") for anything that
// can be checked without the topology.
Result<FaultsDef> faultsFromConfig(const config::FaultsSpec& spec, TimePs cyclePs,
                                   std::uint64_t seed);

// Sets f.recoveryBoundPs, the time a pair may stay disconnected after a
// fault: detection + T_on + one check period + recovery_slack. E_INVALID
// naming the fields when it is beyond a quarter of the time range (about 26
// days), so that an event's time plus the bound always fits.
Status setRecoveryBound(FaultsDef& f, TimePs turnOnPs, TimePs checkPeriodPs);

// What happened to one fault event in a run (report.json `faults.events`).
struct FaultRecord {
  TimePs at = 0;
  std::string action;  // "fail", "repair", "restart-agent"
  std::string part;    // "link S1_0_0[3] - S0_0_1[1]", "switch S0_0_0", ...
  bool random = false;
  bool skipped = false;  // nothing to do (said in `part`): never detected
  fabric::LinkId
      link;  // the link it took or gave back (invalid: a switch, a restart); not reported
  // When the agents heard of it (port down/up), -1 if never (repaired first,
  // or a restart).
  TimePs detectedAt = -1;
  // After this event (and before the next one), some connectable pair had
  // no path: a failure took it, or a repair made a pair connectable that the
  // links on could not connect yet. recoveredAt: when every connectable pair
  // had a path again (-1 if never, or not disconnected); when further events
  // came before that, the bound ran from the last of them.
  bool disconnected = false;
  TimePs recoveredAt = -1;
  // From this event to the next one.
  std::uint64_t packetsRerouted = 0;
  std::uint64_t packetsDropped = 0;
  std::uint64_t messagesDropped = 0;
};

// The faults section of a run.
struct FaultOutcome {
  std::vector<FaultRecord> events;
  // Host-pair periods beyond the recovery bound: at each check period, the
  // connectable pairs without a path whose disconnection began longer ago
  // than the bound.
  std::uint64_t violations = 0;
  std::string firstViolation;  // time, pair and links of the first one
  // Ordered host pairs the surviving cables could not connect, at the worst moment.
  std::uint64_t physicallyCutPairs = 0;
  std::vector<std::string> cutOffHosts;  // every host cut off at some point, in host order
  TimePs recoveryBoundPs = 0;
  TimePs maxRecoveryPs = 0;
  std::uint64_t lostMessages = 0;           // dropped and never delivered
  std::uint64_t retransmittedMessages = 0;  // closed loop: sent again
  std::uint64_t packetsRerouted = 0;
  std::uint64_t packetsDropped = 0;
  std::uint64_t agentRestarts = 0;
  std::uint64_t eventsNotReached = 0;  // scheduled after the run ended: never happened
};

}  // namespace ebb::replay
