#pragma once

#include <cstdint>
#include <vector>

#include "agent/backend.h"
#include "sim_backend/fabric_emulator.h"

namespace ebb::sim {

// What one applyLinkState() gates: the port's transmit direction (the
// emulator's model, docs/design.md) or its whole link (InfiniBand).
enum class GatingUnit : std::uint8_t { kDirection, kLink };

// The agents' view of the emulator: each switch sees its own ports, counters
// and transmit directions. Completions arrive on the scheduler (Phase::kBackend)
// like a real backend's would. A failed link is reported at both switch ends
// (onPortDown) `faultDetectionPs` after it went down, unless it came back up
// before; onPortUp follows when it is up again (docs/emulator.md, "Faults").
// With per-direction gating, a link with one direction down is reported as
// such (onDirectionDown, onDirectionUp): its other direction still carries.
//
// With GatingUnit::kLink the backend gates like InfiniBand (docs/emulator.md,
// "In-band mode"): a port set off or on at either end takes both directions
// of its link along, with the emulator's T_off/T_on for each, and both ends
// hear onLinkStateChanged (the other end's port follows its link).
class SimBackend final : public agent::Backend {
 public:
  explicit SimBackend(FabricEmulator& emu, GatingUnit unit = GatingUnit::kDirection);

  agent::Capabilities capabilities() const override { return {unit_ == GatingUnit::kDirection}; }
  void setCallback(agent::BackendCallback* callback) override { callback_ = callback; }
  void discoverPorts(fabric::SwitchId sw, Done<std::vector<agent::PortDescription>> done) override;
  void requestCounters(fabric::SwitchId sw, Done<agent::CounterSample> done) override;
  void applyLinkState(fabric::PortId port, bool on, Done<agent::LinkPowerState> done) override;

 private:
  // The link direction a switch port transmits on, and the one it receives on.
  fabric::Direction txDir(fabric::PortId p) const;
  void linkFault(fabric::LinkId link, bool up);
  // Tells the agents how the link's down directions differ from what they
  // heard last: only the new downs (`downs`) or only the new ups.
  void report(fabric::LinkId link, bool downs);
  // Calls onPortDown or onPortUp at the switch ends of `link`.
  void reportPorts(fabric::LinkId link, bool up);
  template <class T>
  void complete(Done<T> done, Result<T> r);

  FabricEmulator& emu_;
  GatingUnit unit_;
  agent::BackendCallback* callback_ = nullptr;
  struct LinkReport {
    std::uint8_t down = 0;  // the down directions the agents heard of, a bit each
  };
  std::vector<LinkReport> reports_;  // per link
};

}  // namespace ebb::sim
