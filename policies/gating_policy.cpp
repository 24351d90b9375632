#include "policies/gating_policy.h"

#include <fmt/format.h>

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
    case Rule::kAnInputOn:
      return "an-input-on";
    case Rule::kEveryInputOff:
      return "every-input-off";
  }
  return "?";
}

const char* thresholdName(Rule r) {
  switch (r) {
    case Rule::kBelowOff:
    case Rule::kWithinBand:
    case Rule::kNothingToTurnOff:
      return "U_off(i)";
    case Rule::kAboveOn:
    case Rule::kNothingToTurnOn:
      return "U_on";
    default:
      return "";
  }
}

std::string describe(const Decision& d) {
  const Reason& r = d.reason;
  std::string out = toString(d.action);
  if (d.upIndex >= 0) out += fmt::format(" up[{}]", d.upIndex);
  out += fmt::format(": {}", toString(r.rule));
  switch (r.rule) {
    case Rule::kBelowOff:
    case Rule::kNothingToTurnOff:
      out += fmt::format(", u_up={:.4g} < U_off({})={:.4g}", r.measured, r.linksOn, r.threshold);
      break;
    case Rule::kAboveOn:
    case Rule::kNothingToTurnOn:
      out += fmt::format(", u_up={:.4g} > U_on={:.4g}", r.measured, r.threshold);
      break;
    case Rule::kWithinBand:
      out += fmt::format(", U_off({})={:.4g} <= u_up={:.4g} <= U_on", r.linksOn, r.threshold,
                         r.measured);
      break;
    default:
      break;
  }
  out += fmt::format(" (effective {:.4g}; {} of {} up links on)", r.effectiveThreshold, r.linksOn,
                     r.upLinks);
  return out;
}

namespace {

struct Counts {
  int on = 0;      // on or turning on
  int usable = 0;  // on
};

Counts count(std::span<const UpLinkView> up) {
  Counts c;
  for (const UpLinkView& l : up) {
    c.on += isOnOrTurningOn(l.state) ? 1 : 0;
    c.usable += isUsable(l.state) ? 1 : 0;
  }
  return c;
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

Status validateView(const SwitchView& view) {
  const auto bad = [](const std::string& rule) {
    return Status(ErrorCode::kInvalidArgument, "switch view breaks the rule " + rule);
  };
  int mt = 0;
  for (const UpLinkView& l : view.up)
    mt += l.isMt ? 1 : 0;
  if (view.isRoot && !view.up.empty()) {
    return bad(fmt::format("a root has no up links (has {})", view.up.size()));
  }
  if (!view.isRoot && view.up.empty()) return bad("a non-root switch has at least one up link");
  if (!view.isRoot && view.isMtSwitch && mt != 1) {
    return bad(fmt::format("an MT switch has exactly one MT up link (has {})", mt));
  }
  if (!view.isMtSwitch && mt != 0) {
    return bad(fmt::format("a non-MT switch has no MT up link (has {})", mt));
  }
  return Status::ok();
}

Decision propagateUp(const SwitchView& view) {
  Decision d;
  d.reason.upLinks = static_cast<int>(view.up.size());
  d.reason.linksOn = count(view.up).on;
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

Result<GatingPolicy> GatingPolicy::create(const Thresholds& t) {
  if (Status s = t.validate(); !s.isOk()) return s;
  return GatingPolicy(t);
}

Decision GatingPolicy::decide(const SwitchView& view, double uUp) const {
  Decision d = propagateUp(view);
  d.reason.measured = uUp;
  if (d.action != Action::kHold || d.reason.rule == Rule::kRoot) return d;
  const int k = d.reason.upLinks;
  const Counts c = count(view.up);
  // A non-MT switch with no ascending input on receives no ascending traffic
  // (whatever the last period measured): it sheds its up links, one per
  // period, down to none, and never turns one on.
  const bool mustKeepOne = view.isMtSwitch || view.anyAscendingInputOn;
  if (!mustKeepOne) {
    d.upIndex = highestNonMtOn(view.up);
    d.action = d.upIndex >= 0 ? Action::kTurnOff : Action::kHold;
    d.reason.rule = d.upIndex >= 0 ? Rule::kInputsOff : Rule::kNothingToTurnOff;
    return d;
  }
  if (uUp > t_.uOn) {
    d.reason.threshold = t_.uOn;
    d.reason.effectiveThreshold = t_.effectiveOn(c.on, k);
    d.upIndex = lowestOff(view.up);
    d.action = d.upIndex >= 0 ? Action::kTurnOn : Action::kHold;
    d.reason.rule = d.upIndex >= 0 ? Rule::kAboveOn : Rule::kNothingToTurnOn;
    return d;
  }
  const double off = t_.offThreshold(c.on, k);
  d.reason.threshold = off;
  d.reason.effectiveThreshold = t_.effectiveOff(c.on, k);
  if (uUp < off) {
    // The last usable up link stays; highestNonMtOn never returns the MT link
    // and only returns a usable link.
    d.upIndex = c.usable >= 2 ? highestNonMtOn(view.up) : -1;
    d.action = d.upIndex >= 0 ? Action::kTurnOff : Action::kHold;
    d.reason.rule = d.upIndex >= 0 ? Rule::kBelowOff : Rule::kNothingToTurnOff;
    return d;
  }
  d.reason.rule = Rule::kWithinBand;
  return d;
}

}  // namespace ebb::policies
