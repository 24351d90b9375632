#pragma once

#include <cstdint>
#include <vector>

namespace ebb::sim {

// State of the input-queued virtual-channel router model (docs/emulator.md,
// "Switch models"), kept apart from the output-queued model's channels so that
// model pays nothing for it. Indices: a channel is a link direction (as in
// FabricEmulator), a VC slot is channel * vcs + vc.
namespace iq {

inline constexpr std::uint32_t kNone = 0xFFFFFFFF;

// A flit in an input VC buffer.
struct Flit {
  std::uint32_t packet = kNone;
  bool head = false;
  bool tail = false;
};

// An input VC at a switch: a ring of flits and the pipeline state of the
// packet at its front.
struct InputVc {
  enum State : std::uint8_t { kIdle, kRouting, kVcAlloc, kActive };
  std::uint32_t first = 0;     // ring index of the front flit
  std::uint32_t count = 0;     // flits buffered
  std::uint32_t incoming = 0;  // flits of the arriving packet still to come
  State state = kIdle;
  std::uint8_t outVc = 0;
  std::uint32_t out = kNone;    // the output channel, once routed
  std::int64_t readyCycle = 0;  // the current stage may act from this cycle
};

// An output VC as its sender sees it: the credits of the receiver's buffer,
// and the input VC (slot) whose packet holds it.
struct OutputVc {
  std::int32_t credits = 0;
  std::uint32_t owner = kNone;
};

// A flit or a credit on a wire, due at a cycle.
struct WireItem {
  enum Kind : std::uint8_t { kFlit, kCredit };
  Kind kind = kFlit;
  bool head = false;
  bool tail = false;
  std::uint8_t vc = 0;
  std::uint32_t channel = 0;
  std::uint32_t packet = kNone;
};

// A host's injection: the packet it is sending and on which VC.
struct Source {
  std::uint32_t packet = kNone;
  std::uint32_t flitsLeft = 0;
  std::uint8_t vc = 0;
  bool active = false;  // in the list of hosts with something to send
};

// What one switch needs per cycle: its input and output channels.
struct SwitchPorts {
  std::vector<std::uint32_t> inputs;   // channels arriving at the switch
  std::vector<std::uint32_t> outputs;  // channels leaving it
  std::uint32_t buffered = 0;          // flits in its input buffers
  std::uint32_t routing = 0;           // input VCs in the route stage
  std::uint32_t waitingVc = 0;         // input VCs waiting for an output VC
};

}  // namespace iq
}  // namespace ebb::sim
