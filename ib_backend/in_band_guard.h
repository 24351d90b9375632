#pragma once

#include "agent/in_band.h"
#include "agent/safety_guard.h"
#include "ib_backend/ib_backend.h"

namespace ebb::ib {

// Puts the safety guard in charge of in-band control of this fabric
// (docs/ib_agent.md, "Single-failure resilience"): the management port's
// switch, the allow-listed switches, the links found disabled and at which
// end; the backend then disables each link at the end the guard chose. A
// narrowed link still carries management, so with reduce-width gating only
// reach is proven. Call after initialize(); no-op if the backend found no
// switch to attach at.
void attachGuard(IbBackend& backend, agent::SafetyGuard& guard, agent::Resilience resilience);

}  // namespace ebb::ib
