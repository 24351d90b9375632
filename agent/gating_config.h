#pragma once

#include <string>

#include "common/status.h"
#include "configs/proto/replay.pb.h"  // generated
#include "policies/thresholds.h"

namespace ebb::agent {

// The gating section of a config as the agents use it: the one translation
// from `gating { policy u_off u_on }` to thresholds, shared by `ebb replay`,
// `ebb tune` and `ebb agent`. Defaults come from policies::Thresholds.
struct GatingChoice {
  bool gating = true;  // false: policy ALL_ON (no link is switched off)
  policies::Thresholds thresholds;
  std::string policyName;  // "dynamic [U_on=0.15]", "static [0.03, 0.15]"; empty for ALL_ON
};

// Not validated: callers check GatingChoice::thresholds.validate() when they
// gate, so that a sweep can still record a setting off the threshold map.
GatingChoice gatingFromConfig(const config::GatingSpec& g);

// The rules on the fields as written, for `ebb replay` and `ebb agent`:
// u_off belongs to the static policy (and the static policy needs it), an
// explicit u_on is in (0, 1]. E_INVALID naming the field.
Status checkGatingFields(const config::GatingSpec& g);

}  // namespace ebb::agent
