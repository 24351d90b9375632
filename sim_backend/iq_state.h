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
// The owner of an output VC of a host's link: the host itself.
inline constexpr std::uint32_t kHostOwner = 0xFFFFFFFE;

// The model's fixed delays in cycles, worked out once from the config.
struct Delays {
  std::int64_t route = 0;   // a head at the front to its route (R)
  std::int64_t flit = 1;    // switch allocation to the next buffer (SW_a + X + L, at least 1)
  std::int64_t credit = 1;  // a flit leaving a buffer to its credit upstream (at least 1)
  std::int64_t inject = 1;  // a host's flit to the first buffer (I + L, L at least 1)
};

// A flit in an input VC buffer.
struct Flit {
  std::uint32_t packet = kNone;
  bool head = false;
  bool tail = false;
};

// An input VC at a switch: a ring of flits and the pipeline state of the
// packet at its front (kSink: faults left it no way on, the switch discards
// its flits as they come).
struct InputVc {
  enum State : std::uint8_t { kIdle, kRouting, kVcAlloc, kActive, kSink };
  std::uint32_t first = 0;  // ring index of the front flit
  std::uint32_t count = 0;  // flits buffered
  State state = kIdle;
  std::uint8_t outVc = 0;
  std::uint32_t out = kNone;     // the output channel, once routed
  std::uint32_t packet = kNone;  // the packet in the pipeline (state not kIdle)
  std::int64_t readyCycle = 0;   // the current stage may act from this cycle
};

// An output VC as its sender sees it: the credits of the receiver's buffer,
// and the input VC (slot) whose packet holds it.
struct OutputVc {
  std::int32_t credits = 0;
  std::uint32_t owner = kNone;
};

// A flit on a wire, due at a cycle (credits travel as bare slot numbers).
struct WireFlit {
  std::uint32_t slot = 0;  // the receiving input VC: channel << shift | vc
  std::uint32_t packet = kNone;
  bool head = false;
  bool tail = false;
};

// What the model needs of one channel (link direction) every cycle, together
// in one place so that a switch's allocation touches one cache line per port.
// The input side is the receiver's, the output side the sender's.
struct Port {
  std::uint32_t owned = 0;         // output: output VCs held by packets
  std::int64_t wakeAt = 0;         // output: may send from then (ps, LPI wake-up)
  std::uint32_t heldIn = kNone;    // input: slot holding it (packet mode)
  std::uint32_t heldOut = kNone;   // output: input channel holding it (packet mode)
  std::uint32_t best = kNone;      // output: scratch of the arbiters
  std::uint16_t inPos = 0;         // input: its place among its switch's inputs
  std::uint16_t outPos = 0;        // output: its place at the sender (its link's input's)
  std::uint32_t input = kNone;     // input: its index in the switches' input arrays
  std::uint32_t receiver = kNone;  // input: the receiving switch, kNone for a host
  std::uint32_t rrVa = 0;          // output: VC allocator pointer
  std::uint16_t rrOut = 0;         // output: switch arbiter pointer
  std::uint16_t rrAccept = 0;      // input: iSLIP accept pointer (an output's place)
  std::uint8_t rrIn = 0;           // input: VC arbiter pointer
  std::uint8_t sendable = 1;       // output: chCanSend, cached
  std::uint16_t blocked = 0;       // output: VCs with a flit waiting and no credit
  std::int64_t blockedSince = 0;   // output: cycle the first of them blocked
};

// A request to the switch allocator: an input VC (slot) for its output.
struct Request {
  std::uint32_t slot = 0;
  std::uint32_t out = 0;
  std::uint16_t inPos = 0;   // the input's place at the switch
  std::uint16_t outPos = 0;  // the output's
  bool granted = false;      // the output chose it
};

// A host's injection: the packet it is sending and on which VC.
struct Source {
  std::uint32_t packet = kNone;
  std::uint32_t flitsLeft = 0;
  std::uint8_t vc = 0;
  bool active = false;  // in the list of hosts with something to send
};

// The input VCs of one switch input by pipeline stage, a bit per VC (what
// StageMasks keeps per input, as one value).
struct InputMasks {
  std::uint16_t routing = 0;  // in the route stage
  std::uint16_t vcAlloc = 0;  // routed, waiting for an output VC
  std::uint16_t ready = 0;    // holding an output VC, with a flit to send
};

// What one switch needs per cycle. Its inputs are the entries first ..
// first + inputs - 1 of the switches' input arrays (channels and masks).
struct SwitchPorts {
  std::uint32_t first = 0;     // index of its first input
  std::uint32_t inputs = 0;    // how many inputs it has
  std::uint32_t buffered = 0;  // flits in its input buffers
};

// The round-robin successor of v among 0 .. n - 1 (every allocator pointer).
inline std::uint32_t roundRobinNext(std::uint32_t v, std::uint32_t n) {
  return v + 1 == n ? 0 : v + 1;
}

}  // namespace iq
}  // namespace ebb::sim
