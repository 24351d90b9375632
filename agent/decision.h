#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/time.h"
#include "fabric/ids.h"
#include "policies/gating_policy.h"

namespace ebb::agent {

// One gating action with its reason (docs/design.md §10, observability): what changed,
// what was measured and which threshold fired. `refused` is non-empty when the
// safety guard or fail-safe logic overrode the policy.
struct DecisionRecord {
  TimePs time = 0;
  fabric::PortId port;
  bool up = true;  // an up port (else a down port)
  bool turnOn = false;
  policies::Rule rule = policies::Rule::kWithinBand;
  // "gating", "down-link-rule", "propagate-up", "fail-safe", "fault-recovery",
  // "packets-waiting"
  std::string source;
  double measured = 0;
  double threshold = 0;
  double effectiveThreshold = 0;
  int linksOn = 0;
  std::string refused;
  std::string note;  // context of a fault recovery (what failed); in the JSON line when set
};

using DecisionSink = std::function<void(const DecisionRecord&)>;

// One JSON object (no newline): the decisions.jsonl line of `ebb replay` and
// `ebb agent`. `switchName` is added as "switch_name" when not empty.
std::string toJsonLine(const DecisionRecord& d, const std::string& switchName = {});

}  // namespace ebb::agent
