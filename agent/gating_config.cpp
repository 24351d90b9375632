#include "agent/gating_config.h"

#include <fmt/format.h>

namespace ebb::agent {

GatingChoice gatingFromConfig(const config::GatingSpec& g) {
  GatingChoice c;
  const double uOn = g.u_on() == 0 ? policies::Thresholds{}.uOn : g.u_on();
  switch (g.policy()) {
    case config::GatingSpec::STATIC:
      c.thresholds = policies::Thresholds::makeStatic(g.u_off(), uOn);
      c.policyName = fmt::format("static [{}, {}]", g.u_off(), uOn);
      break;
    case config::GatingSpec::ALL_ON:
      c.gating = false;
      c.thresholds = policies::Thresholds::makeDynamic(uOn);
      break;
    default:
      c.thresholds = policies::Thresholds::makeDynamic(uOn);
      c.policyName = fmt::format("dynamic [U_on={}]", uOn);
      break;
  }
  return c;
}

}  // namespace ebb::agent
