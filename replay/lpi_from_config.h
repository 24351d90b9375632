#pragma once

#include "common/status.h"
#include "configs/proto/ebb.pb.h"  // generated
#include "policies/lpi_params.h"

namespace ebb::replay {

// The config's low-power idle (lpi { ... }) into `lp`, which holds the link
// preset's wake-up times or the defaults: mode, link speed, timers, hold and
// adaptive hold. E_INVALID naming the field and the rule, among them a field
// that applies with an idle mode only while the mode is off, and a link's idle
// timeline beyond the time range.
Status lpiFromConfig(const config::LpiSpec& l, policies::LpiParams& lp);

}  // namespace ebb::replay
