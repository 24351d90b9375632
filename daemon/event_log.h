#pragma once

#include <fstream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "agent/decision.h"
#include "common/status.h"
#include "common/time.h"
#include "daemon/osm_event_intake.h"
#include "fabric/ids.h"
#include "ib_backend/ib_backend.h"

namespace ebb::daemon {

// The daemon's JSON-lines log (agent.decision_log, docs/ib_agent.md): one
// object per line, flushed at once, for
//   - a decision: the record of `ebb replay`'s decisions.jsonl with
//     "switch_name" and "gating_action";
//   - "event":"port_set": a PortInfo Set the fabric accepted;
//   - "event":"osm_event": an event from OpenSM's plugin and the switches it
//     makes the daemon re-read;
//   - "event":"port_reread": what such a re-read found;
//   - "event":"topology_mismatch": a difference between the topology and the
//     cables found at start (agent.topology_mismatch: WARN);
//   - "event":"reenable_pending" / "reenable_delivered" / "reenable_confirmed_up";
//   - safety notices: "subnet_manager", "out_of_reach", "in_reach",
//     "reprobe_repair", "flap_hold_ended".
// Every string is JSON-escaped (common/json.h).
// How a re-homing's recovery ended (EventLog::recovery, ebb_recoveries_total).
enum class RecoveryOutcome { kComplete, kTimedOut, kSuperseded };

class EventLog {
 public:
  EventLog() = default;  // off: writes nothing
  explicit EventLog(std::ostream& out) : out_(&out) {}
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Appends to the file at `path`; E_IO naming it when it cannot be written.
  Status open(const std::string& path);
  bool enabled() const { return out_ != nullptr; }

  void decision(const agent::DecisionRecord& d, const std::string& switchName,
                std::string_view gatingAction);
  void portSet(TimePs now, const ib::PortSetEvent& e, const std::string& switchName);
  void osmEvent(TimePs now, const OsmEvent& ev, const std::vector<std::string>& rereadSwitches);
  void portReread(TimePs now, fabric::SwitchId sw, const std::string& switchName,
                  const std::string& cause, double sinceReportedMs,
                  const std::vector<ib::PortChange>& changes);
  // A re-homing's links all up again (`recovered`, with `links`), not by the
  // deadline (`recovery_incomplete`, `not_up`), or superseded by then
  // (`recovery_superseded`, `not_up`: turned off again, or a later re-homing).
  void recovery(TimePs now, const std::string& cause, RecoveryOutcome outcome, double afterMs,
                const std::vector<std::string>& links);
  void topologyMismatch(TimePs now, const ib::TopologyDifference& d);
  // A re-enable not delivered ("reenable_pending"), or delivered after being
  // pending ("reenable_delivered", "reenable_confirmed_up"): the link, the
  // Sets tried, how long it was pending and the last failure.
  void reenable(TimePs now, const ib::ReenableEvent& e, const std::string& link);
  // A safety notice: `event` ("subnet_manager", "out_of_reach", "in_reach",
  // "reprobe_repair", "flap_hold_ended") and what it says.
  void notice(TimePs now, const std::string& event, const std::string& detail);
  // A re-homing after port events: what caused it, the links turned on at once.
  void rehome(TimePs now, const std::string& cause, bool treeChanged,
              const std::vector<std::string>& restoredLinks,
              const std::vector<std::string>& cutOffHosts);

  // The lines themselves, without the newline.
  static std::string rehomeLine(TimePs now, const std::string& cause, bool treeChanged,
                                const std::vector<std::string>& restoredLinks,
                                const std::vector<std::string>& cutOffHosts);
  static std::string decisionLine(const agent::DecisionRecord& d, const std::string& switchName,
                                  std::string_view gatingAction);
  static std::string portSetLine(TimePs now, const ib::PortSetEvent& e,
                                 const std::string& switchName);
  static std::string osmEventLine(TimePs now, const OsmEvent& ev,
                                  const std::vector<std::string>& rereadSwitches);
  static std::string portRereadLine(TimePs now, fabric::SwitchId sw, const std::string& switchName,
                                    const std::string& cause, double sinceReportedMs,
                                    const std::vector<ib::PortChange>& changes);
  static std::string topologyMismatchLine(TimePs now, const ib::TopologyDifference& d);

 private:
  void write(const std::string& line);

  std::ofstream file_;
  std::ostream* out_ = nullptr;
};

}  // namespace ebb::daemon
