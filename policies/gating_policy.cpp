#include "policies/gating_policy.h"

namespace ebb::policies {

const char* toString(LinkPowerState s) {
  switch (s) {
    case LinkPowerState::kOn:
      return "on";
    case LinkPowerState::kTurningOn:
      return "turning-on";
    case LinkPowerState::kTurningOff:
      return "turning-off";
    case LinkPowerState::kOff:
      return "off";
  }
  return "?";
}

const char* toString(Action a) {
  switch (a) {
    case Action::kHold:
      return "hold";
    case Action::kTurnOff:
      return "turn-off";
    case Action::kTurnOn:
      return "turn-on";
  }
  return "?";
}

const char* toString(Rule r) {
  switch (r) {
    case Rule::kBelowOff:
      return "u_up<U_off";
    case Rule::kAboveOn:
      return "u_up>U_on";
    case Rule::kInputsOff:
      return "ascending-inputs-off";
    case Rule::kPropagateUp:
      return "propagate-up";
    case Rule::kWithinBand:
      return "within-band";
    case Rule::kNothingToTurnOff:
      return "nothing-to-turn-off";
    case Rule::kNothingToTurnOn:
      return "nothing-to-turn-on";
    case Rule::kRoot:
      return "root";
  }
  return "?";
}

namespace {

int countOn(std::span<const UpLinkView> up) {
  int n = 0;
  for (const UpLinkView& l : up)
    n += isOnOrTurningOn(l.state) ? 1 : 0;
  return n;
}

int lowestOff(std::span<const UpLinkView> up) {
  for (std::size_t i = 0; i < up.size(); ++i) {
    if (!isOnOrTurningOn(up[i].state)) return static_cast<int>(i);
  }
  return -1;
}

int highestNonMtOn(std::span<const UpLinkView> up) {
  for (std::size_t i = up.size(); i-- > 0;) {
    if (up[i].state == LinkPowerState::kOn && !up[i].isMt) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

Decision propagateUp(const SwitchView& view) {
  Decision d;
  d.reason.linksOn = countOn(view.up);
  if (view.isRoot || view.up.empty()) {
    d.reason.rule = Rule::kRoot;
    return d;
  }
  d.reason.rule = Rule::kWithinBand;
  if (view.anyAscendingInputOn && d.reason.linksOn == 0) {
    d.upIndex = lowestOff(view.up);
    if (d.upIndex >= 0) {
      d.action = Action::kTurnOn;
      d.reason.rule = Rule::kPropagateUp;
    }
  }
  return d;
}

Decision GatingPolicy::decide(const SwitchView& view, double uUp) const {
  Decision d = propagateUp(view);
  if (d.action != Action::kHold || d.reason.rule == Rule::kRoot) return d;
  const int k = static_cast<int>(view.up.size());
  const int on = d.reason.linksOn;
  d.reason.measured = uUp;
  if (!view.isMtSwitch && !view.anyAscendingInputOn && on == 1) {
    d.upIndex = highestNonMtOn(view.up);
    if (d.upIndex >= 0) {
      d.action = Action::kTurnOff;
      d.reason.rule = Rule::kInputsOff;
      return d;
    }
  }
  if (uUp > t_.uOn) {
    d.reason.threshold = t_.uOn;
    d.reason.effectiveThreshold = t_.effectiveOn(on, k);
    d.upIndex = lowestOff(view.up);
    d.action = d.upIndex >= 0 ? Action::kTurnOn : Action::kHold;
    d.reason.rule = d.upIndex >= 0 ? Rule::kAboveOn : Rule::kNothingToTurnOn;
    return d;
  }
  const double off = t_.offThreshold(on, k);
  if (uUp < off) {
    d.reason.threshold = off;
    d.reason.effectiveThreshold = t_.effectiveOff(on, k);
    // The last up link of a non-MT switch stays while an ascending input is on
    // (kInputsOff handles the other case); an MT switch keeps its MT link, which
    // highestNonMtOn never returns.
    const bool mayLoseOne = on >= 2 || (!view.isMtSwitch && !view.anyAscendingInputOn);
    d.upIndex = mayLoseOne ? highestNonMtOn(view.up) : -1;
    d.action = d.upIndex >= 0 ? Action::kTurnOff : Action::kHold;
    d.reason.rule = d.upIndex >= 0 ? Rule::kBelowOff : Rule::kNothingToTurnOff;
    return d;
  }
  d.reason.rule = Rule::kWithinBand;
  d.reason.threshold = off;
  d.reason.effectiveThreshold = t_.effectiveOff(on, k);
  return d;
}

}  // namespace ebb::policies
