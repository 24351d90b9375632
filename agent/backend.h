#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "fabric/ids.h"
#include "fabric/topology.h"
#include "policies/link_power_state.h"

namespace ebb::agent {

using policies::LinkPowerState;

// One port of one switch as the backend sees it. A switch controls the
// transmit direction of each of its ports; it observes the receive direction.
struct PortDescription {
  std::uint16_t index = 0;  // port label (IB port number - 1)
  fabric::PortRole role = fabric::PortRole::kUnused;
  double bandwidthBytesPerPs = 0;  // of one direction
  LinkPowerState transmit = LinkPowerState::kOn;
  LinkPowerState receive = LinkPowerState::kOn;
  // The link is down without ebb (a failed cable or peer): it carries nothing
  // whatever the two states say, and the agent leaves it out of its decisions.
  // With per-direction faults: the port's transmit direction failed.
  bool failed = false;
};

// Cumulative counters of one port's transmit direction (PortCountersExtended).
struct PortCounters {
  std::uint16_t index = 0;
  std::uint64_t txBytes = 0;
  std::uint64_t txPackets = 0;
  // Cumulative time the port had data to send but no credit downstream
  // (InfiniBand's PortXmitWait; the emulator's credit wait). 0 where unknown.
  TimePs xmitWait = 0;
  // Packets wait to leave on this transmit direction while it is off. The
  // emulator's routing queues a packet on an off up link when no on link
  // leads to its destination any more (after a one-direction failure, in
  // flight); InfiniBand never queues on a disabled port: always false there.
  bool waitingWhileOff = false;
};

struct CounterSample {
  TimePs sampledAt = 0;
  // The backend could not read this period (e.g. a subnet re-sweep in
  // progress): the agent skips the period instead of deciding on old data.
  bool stale = false;
  std::vector<PortCounters> ports;  // cabled ports, ascending index
};

// What a backend can do; the agent adapts (whole-link gating on IB).
struct Capabilities {
  bool perDirectionGating = false;  // emulator: yes; InfiniBand: a port is one unit
};

// Upward events from a backend to the agents of a process. Completions of
// what an agent asked for arrive as onLinkStateChanged; what happened without
// ebb (a cable pulled, a port reset, a switch lost) as the other events.
class BackendCallback {
 public:
  virtual ~BackendCallback() = default;
  // A transmit direction reached a new state (e.g. turning-on completed).
  virtual void onLinkStateChanged(fabric::PortId port, LinkPowerState state) = 0;
  // The link at `port` went down without ebb asking (both of its switch
  // ends hear it): it carries nothing until onPortUp.
  virtual void onPortDown(fabric::PortId port) = 0;
  // The link at `port` came up without ebb asking (after onPortDown, or one
  // found down at start).
  virtual void onPortUp(fabric::PortId port) = 0;
  // Per-direction backends (the emulator): one direction of `link` failed
  // without ebb, or came back; its other direction carries as before. A
  // port's PortDescription::failed then says its transmit direction failed.
  virtual void onDirectionDown(fabric::LinkId link, fabric::Direction dir) = 0;
  virtual void onDirectionUp(fabric::LinkId link, fabric::Direction dir) = 0;
  // The backend lost contact with the fabric as a whole (e.g. the switch the
  // management port attaches at no longer answers); agents fail safe.
  virtual void onBackendError(const Status& error) = 0;
};

// The narrow downward interface an agent drives (docs/design.md §3): all calls
// complete asynchronously, on the Scheduler the backend runs on.
class Backend {
 public:
  template <class T>
  using Done = std::function<void(Result<T>)>;

  virtual ~Backend() = default;
  virtual Capabilities capabilities() const = 0;
  virtual void setCallback(BackendCallback* callback) = 0;
  // Ports of one switch with their current states (recover state, don't assume).
  virtual void discoverPorts(fabric::SwitchId sw, Done<std::vector<PortDescription>> done) = 0;
  // Cumulative transmit counters of every cabled port of one switch.
  virtual void requestCounters(fabric::SwitchId sw, Done<CounterSample> done) = 0;
  // Turns the transmit direction of `port` on or off; completes with the state
  // the backend actually applied (kTurningOn / kTurningOff / kOn / kOff).
  virtual void applyLinkState(fabric::PortId port, bool on, Done<LinkPowerState> done) = 0;
};

}  // namespace ebb::agent
