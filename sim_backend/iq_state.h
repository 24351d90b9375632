#pragma once

#include <bit>
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
// No VC (a host's packet that has not claimed one).
inline constexpr std::uint8_t kNoVc = 0xFF;

// The model's fixed delays in cycles, worked out once from the config.
struct Delays {
  std::int64_t route = 0;   // a head at the front to its route (R)
  std::int64_t flit = 1;    // switch allocation to the next buffer (SW_a + X + L, at least 1)
  std::int64_t credit = 1;  // a flit leaving a buffer to its credit upstream (at least 1)
  std::int64_t inject = 1;  // a host's flit to the first buffer (I + L, L at least 1)
};

// A flit in an input VC buffer or on a wire, packed in one word (the rings
// and wheels are the model's largest arrays): its packet's index (packets are
// pooled, so indices stay far below 2^30) and whether it is the head, the tail.
class Flit {
 public:
  Flit() = default;
  Flit(std::uint32_t packet, bool head, bool tail)
      : bits_(packet << 2 | (head ? 2u : 0u) | (tail ? 1u : 0u)) {}
  std::uint32_t packet() const { return bits_ >> 2; }
  bool head() const { return (bits_ & 2u) != 0; }
  bool tail() const { return (bits_ & 1u) != 0; }

 private:
  std::uint32_t bits_ = 0;
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
  Flit flit;
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
  std::uint32_t idleGen = 0;       // output: the last time it went idle (kIqIdle)
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
  std::uint8_t vc = kNoVc;  // claimed by the packet (kNoVc: none free yet)
  bool headSent = false;    // the claim is final once the head left
  bool active = false;      // in the list of hosts with something to send
};

// The input VCs of one switch input by pipeline stage, a bit per VC (what
// StageMasks keeps per input, as one value).
struct InputMasks {
  std::uint16_t routing = 0;  // in the route stage
  std::uint16_t vcAlloc = 0;  // routed, waiting for an output VC
  std::uint16_t ready = 0;    // holding an output VC, with a flit to send
};

// A switch's inputs: the entries first .. first + inputs - 1 of the
// switches' input arrays (channels and masks).
struct SwitchPorts {
  std::uint32_t first = 0;   // index of its first input
  std::uint32_t inputs = 0;  // how many inputs it has
};

// Flits in each switch's input buffers, and a bit per switch that holds any:
// a cycle visits those switches only.
class BufferedFlits {
 public:
  void init(std::size_t switches) {
    count_.assign(switches, 0);
    busy_.assign((switches + 63) / 64, 0);
    total_ = 0;
  }
  std::uint32_t of(std::uint32_t sw) const { return count_[sw]; }
  std::uint64_t total() const { return total_; }
  void add(std::uint32_t sw) {
    if (count_[sw]++ == 0) busy_[sw >> 6] |= bit(sw);
    ++total_;
  }
  void remove(std::uint32_t sw, std::uint32_t n = 1) {
    count_[sw] -= n;
    total_ -= n;
    if (count_[sw] == 0) busy_[sw >> 6] &= ~bit(sw);
  }
  // Calls f(sw) for each switch holding flits, in ascending order, as a scan
  // of every switch would: f may change the counts, and a switch is visited
  // if it holds flits when the visit comes to it.
  template <class F>
  void forEach(F&& f) const {
    for (std::size_t w = 0; w < busy_.size(); ++w) {
      for (std::uint64_t left = ~std::uint64_t{0}, bits; (bits = busy_[w] & left) != 0;) {
        const int b = std::countr_zero(bits);
        left = b == 63 ? 0 : ~std::uint64_t{0} << (b + 1);
        f(static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(b)));
      }
    }
  }

 private:
  static std::uint64_t bit(std::uint32_t sw) { return std::uint64_t{1} << (sw & 63); }
  std::vector<std::uint32_t> count_;  // per switch
  std::vector<std::uint64_t> busy_;   // a bit per switch: count_ > 0
  std::uint64_t total_ = 0;
};

// The round-robin successor of v among 0 .. n - 1 (every allocator pointer).
inline std::uint32_t roundRobinNext(std::uint32_t v, std::uint32_t n) {
  return v + 1 == n ? 0 : v + 1;
}

}  // namespace iq
}  // namespace ebb::sim
