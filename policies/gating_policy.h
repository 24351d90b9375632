#pragma once

#include <cstdint>
#include <span>

#include "policies/link_power_state.h"
#include "policies/thresholds.h"

namespace ebb::policies {

struct UpLinkView {
  LinkPowerState state = LinkPowerState::kOn;
  bool isMt = false;  // the switch's minimal-tree up link
};

// What one switch knows of itself when it decides (no topology, no time).
struct SwitchView {
  std::span<const UpLinkView> up;  // cabled up links, ascending port number
  bool isRoot = false;             // no up links at all
  bool isMtSwitch = false;
  bool anyAscendingInputOn = true;  // any child or host link toward it is on
};

enum class Action : std::uint8_t { kHold, kTurnOff, kTurnOn };
const char* toString(Action a);

// Why: recorded with every decision (DESIGN.md observability).
enum class Rule : std::uint8_t {
  kBelowOff,          // u_up < U_off(i): turn one up link off
  kAboveOn,           // u_up > U_on: turn one up link on
  kInputsOff,         // a non-MT switch with no ascending input drops its last up link
  kPropagateUp,       // an ascending input is on but no up link is: turn one on
  kWithinBand,        // U_off(i) <= u_up <= U_on: hold
  kNothingToTurnOff,  // below U_off, but every remaining up link must stay on
  kNothingToTurnOn,   // above U_on, but every up link is already on
  kRoot,              // a root has no up links
};
const char* toString(Rule r);

struct Reason {
  Rule rule = Rule::kWithinBand;
  double measured = 0;            // u_up over the last period
  double threshold = 0;           // the threshold compared with (on u_up)
  double effectiveThreshold = 0;  // the same relative to full throughput
  int linksOn = 0;                // up links on or turning on, before the action
};

struct Decision {
  Action action = Action::kHold;
  int upIndex = -1;  // index into SwitchView::up
  Reason reason;
};

// Minimal-tree-preserving up-link gating. One change per switch per call:
// off = the highest-numbered non-MT up link that is on; on = the lowest-numbered
// up link that is off or turning off (traffic consolidates toward the MT).
class GatingPolicy {
 public:
  explicit GatingPolicy(Thresholds t) : t_(t) {}
  const Thresholds& thresholds() const { return t_; }

  // uUp: average utilization of the usable up links, ascending direction, over
  // the last check period (0..1).
  Decision decide(const SwitchView& view, double uUp) const;

 private:
  Thresholds t_;
};

// Upward propagation (checked whenever an ascending input turns on, not only
// once a period): a non-root switch with an ascending input on and no up link
// on or turning on must turn its lowest off up link on.
Decision propagateUp(const SwitchView& view);

// Down-link rule: a switch's down links are all on iff it is an MT switch or
// any of its input links (ascending or descending) is on.
constexpr bool downLinksOn(bool isMtSwitch, bool anyInputOn) {
  return isMtSwitch || anyInputOn;
}

}  // namespace ebb::policies
