#include "ib_backend/in_band_guard.h"

namespace ebb::ib {

void attachGuard(IbBackend& backend, agent::SafetyGuard& guard, agent::Resilience resilience) {
  const std::optional<fabric::SwitchId> root = backend.attachSwitch();
  if (!root) return;
  const fabric::Topology& topo = backend.topology();
  agent::InBandControl control{*root, {}, resilience};
  if (backend.options().action == GatingAction::kReduceWidth) {
    control.resilience = agent::Resilience::kNone;
  }
  control.controllable.resize(topo.numSwitches(), 0);
  for (std::size_t i = 0; i < topo.numSwitches(); ++i) {
    control.controllable[i] = backend.allowed(fabric::SwitchId(static_cast<std::uint32_t>(i)));
  }
  guard.setInBand(std::move(control));
  for (fabric::PortId end : backend.foundDisabledEnds()) {
    guard.setGate(topo.sw(end.sw).ports[end.index].link, end.sw);
  }
  backend.setGateChooser([&guard](fabric::LinkId l) { return guard.gateEnd(l); });
}

}  // namespace ebb::ib
