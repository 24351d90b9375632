#include "agent/gating_config.h"

#include <fmt/format.h>

namespace ebb::agent {

GatingChoice gatingFromConfig(const config::GatingSpec& g) {
  GatingChoice c;
  const double uOn = g.has_u_on() ? g.u_on() : policies::Thresholds{}.uOn;
  switch (g.policy()) {
    case config::GatingSpec::STATIC:
      c.thresholds = policies::Thresholds::makeStatic(g.u_off(), uOn);
      c.policyName = fmt::format("static [{}, {}]", g.u_off(), uOn);
      break;
    case config::GatingSpec::PROPORTIONAL: {
      const double h = g.has_hysteresis() ? g.hysteresis() : policies::Thresholds{}.hysteresis;
      c.thresholds = policies::Thresholds::makeProportional(uOn, h);
      c.policyName = fmt::format("proportional [U_on={}, h={}]", uOn, h);
      break;
    }
    case config::GatingSpec::ALL_ON:
      c.gating = false;
      c.thresholds = policies::Thresholds::makeDynamic(uOn);
      break;
    default:
      c.thresholds = policies::Thresholds::makeDynamic(uOn);
      c.policyName = fmt::format("dynamic [U_on={}]", uOn);
      break;
  }
  c.thresholds.waitOn = g.has_wait_on() ? g.wait_on() : 0.0;
  if (c.gating && c.thresholds.waitOn > 0) {
    c.policyName += fmt::format(" + xmit-wait>{}", c.thresholds.waitOn);
  }
  return c;
}

Status checkGatingFields(const config::GatingSpec& g) {
  const bool isStatic = g.policy() == config::GatingSpec::STATIC;
  if (g.has_u_off() && !isStatic) {
    return invalidArgument(fmt::format(
        "gating.u_off: applies to the STATIC policy only (policy is {}); the dynamic policy "
        "derives its off threshold from u_on",
        config::GatingSpec::Policy_Name(g.policy())));
  }
  if (isStatic && !g.has_u_off()) {
    return invalidArgument(
        "gating.u_off: the STATIC policy needs u_off (0 < U_off <= 1, U_on > 2*U_off)");
  }
  const bool proportional = g.policy() == config::GatingSpec::PROPORTIONAL;
  if (g.has_hysteresis() && !proportional) {
    return invalidArgument("gating.hysteresis: applies to the PROPORTIONAL policy only");
  }
  if (g.has_hysteresis() && !(g.hysteresis() > 0 && g.hysteresis() < 1)) {
    return invalidArgument(
        fmt::format("gating.hysteresis: {} breaks the rule 0 < h < 1", g.hysteresis()));
  }
  if (g.has_wait_on() && !(g.wait_on() >= 0 && g.wait_on() < 1)) {
    return invalidArgument(
        fmt::format("gating.wait_on: {} breaks the rule 0 <= wait_on < 1", g.wait_on()));
  }
  if (g.has_u_on() && !(g.u_on() > 0 && g.u_on() <= 1)) {
    return invalidArgument(fmt::format("gating.u_on: {} breaks the rule 0 < U_on <= 1", g.u_on()));
  }
  return Status::ok();
}

}  // namespace ebb::agent
