#pragma once

#include <cstdint>

#include "common/status.h"
#include "common/time.h"
#include "policies/lpi_params.h"

namespace ebb::sim {

enum class UpRouting : std::uint8_t {
  kAdaptive,  // the usable up link with the most free credits, then the shortest queue
  kRandom,    // a uniformly random usable up link
  // Destination-based, deterministic (D-mod-K, as OpenSM's fat-tree routing
  // spreads destinations over up ports): up port (dst / u^c) mod u at a
  // switch with u up ports c levels above the leaves, or the next usable one.
  kDestination,
};

// How a switch moves packets from its inputs to its outputs (docs/emulator.md,
// "Switch models").
enum class SwitchModel : std::uint8_t {
  // Packet-level virtual cut-through into one FIFO per output (fast; the
  // model every result before issue #14 used).
  kOutputQueued,
  // Flit-level input-queued virtual-channel router: per-input-VC buffers and
  // flit credits, route / VC-allocation / switch-allocation / crossbar
  // stages, one flit per input and per output per cycle; VC buffers smaller
  // than a packet make it wormhole.
  kInputQueued,
};

// Switch allocation of the input-queued model, one iteration. kIslip:
// request, grant, accept, pointers moving past accepted matches only
// (BookSim2's default). kRoundRobin: separable input first, each input
// offering one VC. VC allocation is round robin per output VC either way.
enum class Allocator : std::uint8_t { kIslip, kRoundRobin };

// Parameters of the packet-level emulator. The paper's units map onto time
// and bytes: a link carries one flit per cycle, so bandwidth = flitBytes per
// cyclePs. Defaults: the alonso-ramp setup (16-flit packets, 3 VCs, each VC
// buffer holding one whole packet, virtual cut-through).
struct EmulatorConfig {
  TimePs cyclePs = 1000;            // one cycle = 1 ns
  std::int64_t flitBytes = 4;       // bytes per flit (link: 1 flit/cycle)
  std::int64_t packetBytes = 64;    // MTU: messages are split into packets of at most this
  std::int64_t vcs = 3;             // virtual channels per link direction
  std::int64_t vcBufferBytes = 64;  // input buffer per VC (>= packetBytes: cut-through)
  TimePs linkLatencyPs = 1000;      // propagation per link (1 cycle); credits return as fast
  TimePs routingDelayPs = 1000;     // per switch hop, head arrival to output arbitration
  UpRouting upRouting = UpRouting::kAdaptive;
  SwitchModel switchModel = SwitchModel::kOutputQueued;
  // Input-queued model only, in cycles (routingDelayPs is the route stage).
  // Defaults: BookSim2's iq router.
  std::int64_t vcAllocCycles = 1;    // VC allocation
  std::int64_t swAllocCycles = 1;    // switch allocation
  std::int64_t crossbarCycles = 1;   // switch traversal
  std::int64_t creditCycles = 1;     // a credit's processing before it goes upstream
  std::int64_t injectionCycles = 1;  // a host NIC: cycles before its flits enter the link
  std::int64_t speedup = 1;          // flits an input port may send per cycle
  Allocator allocator = Allocator::kIslip;
  bool holdSwitchForPacket = false;  // crossbar granularity: a packet, not a flit
  std::uint64_t seed = 1;
  TimePs turnOnPs = 1'000'000;   // T_on = 1000 cycles
  TimePs turnOffPs = 1'000'000;  // T_off = 1000 cycles
  policies::LpiParams lpi;       // mode off by default
  // How long after a link fails the switches at its ends report it down to
  // their agents (SimBackend: onPortDown). A PHY declares a link down only
  // after loss of signal persists (so noise does not flap it), on the scale
  // of link training: 1 µs, the default T_on (docs/emulator.md, "Faults").
  TimePs faultDetectionPs = 1'000'000;

  TimePs serializationPs(std::int64_t bytes) const {
    return (bytes + flitBytes - 1) / flitBytes * cyclePs;
  }
  std::int64_t flitsOf(std::int64_t bytes) const { return (bytes + flitBytes - 1) / flitBytes; }
  // A packet's bytes on the wire: its flits, whole.
  std::uint64_t wireBytes(std::int64_t bytes) const {
    return static_cast<std::uint64_t>(flitsOf(bytes) * flitBytes);
  }
  // The flits a message of `bytes` occupies on a link: its packets' flits (a
  // packet's last flit is whole however few bytes it carries; an empty
  // message is one packet of one flit). Synthetic rates and offered and
  // accepted loads count these: what a link carries.
  std::int64_t messageFlits(std::int64_t bytes) const {
    if (bytes <= 0) return 1;
    const std::int64_t rest = bytes % packetBytes;
    return bytes / packetBytes * flitsOf(packetBytes) + (rest > 0 ? flitsOf(rest) : 0);
  }
  double bandwidthBytesPerPs() const {
    return static_cast<double>(flitBytes) / static_cast<double>(cyclePs);
  }
  // Input-queued model: the largest VC buffer and link latency it builds.
  static constexpr std::int64_t kMaxIqBufferFlits = 4096;
  static constexpr std::int64_t kMaxIqLinkCycles = 100'000;

  // E_INVALID naming the field: positive sizes and times, buffers that hold a packet.
  Status validate() const;
};

}  // namespace ebb::sim
