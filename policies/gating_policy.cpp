#include "policies/gating_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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
    case Rule::kLoadNeedsMore:
      return "load-needs-more";
    case Rule::kLoadNeedsFewer:
      return "load-needs-fewer";
    case Rule::kCongested:
      return "xmit-wait>W_on";
    case Rule::kPacketsWaiting:
      return "packets-waiting";
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
    case Rule::kLoadNeedsMore:
      return "U_on";
    case Rule::kLoadNeedsFewer:
      return "h*U_on";
    case Rule::kCongested:
      return "W_on";
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
    case Rule::kCongested:
      out += fmt::format(", waited {:.4g} of the period > W_on={:.4g}", r.measured, r.threshold);
      break;
    case Rule::kLoadNeedsMore:
    case Rule::kLoadNeedsFewer:
      out += fmt::format(", u_up={:.4g}: {} link(s) at {}={:.4g}", r.measured,
                         static_cast<int>(d.upIndices.size()), thresholdName(r.rule), r.threshold);
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

// Proportional (docs/mechanisms.md §2.7). The ascending load in link
// capacities, T = u_up x usable links, needs n_on = ceil(T / U_on) links:
// with fewer on, the lowest off ones are turned on up to n_on at once. With
// more on than n_off = ceil(T / (h U_on)), the highest usable non-MT ones go
// down to n_off (never the MT link, never the last usable one). Since
// h < 1, n_off >= n_on: under a constant T a turn-on is never followed by a
// turn-off, nor a turn-off by a turn-on.
// Congested (wait above W_on): sized for the busy share u_up + wait, at
// least one link more than on, and none off.
Decision proportional(const SwitchView& view, double uUp, const Thresholds& t, const Counts& c,
                      double wait, Decision d) {
  const bool congested = t.waitOn > 0 && wait > t.waitOn;
  const int k = d.reason.upLinks;
  const auto linksFor = [&](double load, double u) {
    const double n = std::ceil(load / u - 1e-9);
    return std::clamp(static_cast<int>(std::min<double>(n, k)), 1, k);
  };
  const double load = uUp * static_cast<double>(c.usable);
  const auto need = [&](double u) { return linksFor(load, u); };
  // Waiting for credit, the links had data for at least the share of the
  // period they sent or waited, whatever got through: size for that busy
  // share (as in saturation, the links multiply each period it persists),
  // and at least one link more.
  const double busy = std::min(1.0, uUp + wait) * static_cast<double>(c.usable);
  const int nOn =
      std::max(need(t.uOn), congested ? std::max(std::min(c.on + 1, k), linksFor(busy, t.uOn)) : 0);
  if (nOn > c.on) {
    d.reason.rule = congested && need(t.uOn) <= c.on ? Rule::kCongested : Rule::kLoadNeedsMore;
    d.reason.threshold = t.uOn;
    if (d.reason.rule == Rule::kCongested) {
      d.reason.measured = wait;
      d.reason.threshold = t.waitOn;
    }
    d.reason.effectiveThreshold = t.effectiveOn(c.on, k);
    for (std::size_t i = 0; i < view.up.size() && c.on + std::ssize(d.upIndices) < nOn; ++i) {
      if (!isOnOrTurningOn(view.up[i].state)) d.upIndices.push_back(static_cast<int>(i));
    }
    d.action = Action::kTurnOn;
    d.upIndex = d.upIndices.front();
    return d;
  }
  const int nOff = congested ? c.on : need(t.hysteresis * t.uOn);
  d.reason.threshold = t.offThreshold(c.on, k);
  d.reason.effectiveThreshold = t.effectiveOff(c.on, k);
  if (nOff < c.on) {
    int usable = c.usable;
    for (std::size_t i = view.up.size(); i-- > 0 && c.on - std::ssize(d.upIndices) > nOff;) {
      if (view.up[i].state == LinkPowerState::kOn && !view.up[i].isMt && usable >= 2) {
        d.upIndices.push_back(static_cast<int>(i));
        --usable;
      }
    }
    d.reason.threshold = t.hysteresis * t.uOn;
    d.reason.rule = d.upIndices.empty() ? Rule::kNothingToTurnOff : Rule::kLoadNeedsFewer;
    d.action = d.upIndices.empty() ? Action::kHold : Action::kTurnOff;
    d.upIndex = d.upIndices.empty() ? -1 : d.upIndices.front();
    return d;
  }
  d.reason.rule = Rule::kWithinBand;
  return d;
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
      d.upIndices.push_back(d.upIndex);
    }
  }
  return d;
}

Result<GatingPolicy> GatingPolicy::create(const Thresholds& t) {
  if (Status s = t.validate(); !s.isOk()) return s;
  return GatingPolicy(t);
}

Decision GatingPolicy::decide(const SwitchView& view, double uUp, double wait) const {
  Decision d = decideOne(view, uUp, wait);
  if (d.action != Action::kHold && d.upIndices.empty()) d.upIndices.push_back(d.upIndex);
  return d;
}

Decision GatingPolicy::decideOne(const SwitchView& view, double uUp, double wait) const {
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
  if (t_.kind == GatingKind::kProportional) return proportional(view, uUp, t_, c, wait, d);
  if (t_.waitOn > 0 && wait > t_.waitOn) {
    d.reason.rule = Rule::kCongested;
    d.reason.measured = wait;
    d.reason.threshold = t_.waitOn;
    d.upIndex = lowestOff(view.up);
    d.action = d.upIndex >= 0 ? Action::kTurnOn : Action::kHold;
    if (d.upIndex < 0) d.reason.rule = Rule::kNothingToTurnOn;
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
