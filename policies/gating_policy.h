#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

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

// Why: recorded with every decision (docs/design.md §10, observability).
enum class Rule : std::uint8_t {
  kBelowOff,          // u_up < U_off(i): turn one up link off
  kAboveOn,           // u_up > U_on: turn one up link on
  kInputsOff,         // a non-MT switch with no ascending input on sheds an up link
  kPropagateUp,       // an ascending input is on but no up link is: turn one on
  kWithinBand,        // U_off(i) <= u_up <= U_on: hold
  kNothingToTurnOff,  // below U_off (or shedding), but no up link may go
  kNothingToTurnOn,   // above U_on, but every up link is already on
  kRoot,              // a root has no up links
  kAnInputOn,         // down-link rule: an input link is on, so are the down links
  kEveryInputOff,     // down-link rule: every input link is off, so are the down links
  kLoadNeedsMore,     // proportional: the load needs more up links at U_on: turn them on
  kLoadNeedsFewer,    // proportional: the load fits fewer at h * U_on: turn the rest off
  kCongested,         // the up links waited for credit more than W_on: one more on
  kPacketsWaiting,    // packets wait on a direction that is off: turn it on
};
const char* toString(Rule r);

// The threshold a rule compares u_up with: "U_off(i)" for kBelowOff and
// kWithinBand, "U_on" for kAboveOn and kNothingToTurnOn, "" for the rules that
// do not look at u_up.
const char* thresholdName(Rule r);

struct Reason {
  Rule rule = Rule::kWithinBand;
  double measured = 0;            // u_up over the last period
  double threshold = 0;           // the threshold compared with (on u_up)
  double effectiveThreshold = 0;  // the same relative to full throughput
  int linksOn = 0;                // up links on or turning on, before the action
  int upLinks = 0;                // k: cabled up links of the switch
};

struct Decision {
  Action action = Action::kHold;
  int upIndex = -1;  // index into SwitchView::up (the first, when several)
  // Every up link the action applies to, in order (the proportional policy
  // changes several at once; the others one); empty on hold.
  std::vector<int> upIndices;
  Reason reason;
};

// For logs: "turn-off up[2]: u_up<U_off, u_up=0.01 < U_off(3)=0.03 (effective
// 0.0225; 3 of 4 up links on)".
std::string describe(const Decision& d);

// Minimal-tree-preserving up-link gating. One change per switch per call:
// off = the highest-numbered non-MT up link that is on (usable); on = the
// lowest-numbered up link that is off or turning off (traffic consolidates
// toward the MT). Counting: i = links on or turning on (a turn-on is committed;
// a link turning off may be turned back on). Never chosen to go off: the MT up
// link, a link still turning on, and a switch's last usable up link while
// traffic may still ascend through it (an MT switch, or any ascending input on).
// A non-MT switch with no ascending input on sheds its up links, one per call,
// and never turns one on. The proportional kind changes several at once (see
// Thresholds).
class GatingPolicy {
 public:
  explicit GatingPolicy(Thresholds t) : t_(t) {}
  // The policy, or E_INVALID if the thresholds break their validity rule.
  static Result<GatingPolicy> create(const Thresholds& t);
  const Thresholds& thresholds() const { return t_; }

  // uUp: average utilization of the usable up links, ascending direction, over
  // the last check period (0..1); wait: the share of that period they waited
  // for credit (0..1; 0 when the backend cannot tell).
  Decision decide(const SwitchView& view, double uUp, double wait = 0.0) const;

 private:
  Decision decideOne(const SwitchView& view, double uUp, double wait) const;
  Thresholds t_;
};

// The view is consistent: a root has no up links and a non-root at least one;
// an MT switch that is not a root has exactly one MT up link, a non-MT switch
// none. E_INVALID names the rule broken. Not checked by decide() (hot path).
Status validateView(const SwitchView& view);

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
