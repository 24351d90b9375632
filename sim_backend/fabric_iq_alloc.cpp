// Allocation stages of the input-queued router model (sim_backend/fabric_iq.cpp
// describes the pipeline): VC allocation and switch allocation, per switch and
// cycle, over the input VCs the stage masks say are in each stage.
#include <algorithm>
#include <array>
#include <bit>

#include "sim_backend/fabric_emulator.h"

namespace ebb::sim {

// VC allocation, over the routed heads whose stage delay passed. ISLIP, as
// BookSim2's stock VC allocator (one iteration over input VCs x output VCs):
// every head asks each free VC of its output; each output VC grants the
// asking input VC first at or after its grant pointer; each input VC accepts
// the granting output VC first at or after its accept pointer; pointers move
// past an accepted match only. ROUND_ROBIN: each free output VC goes to a
// different asking head, round robin over the switch's input VCs per output.
void FabricEmulator::iqAllocateVcs(std::uint32_t sw) {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  const iq::SwitchPorts& ports = iqSwitches_[sw];
  const std::uint32_t n = ports.inputs * vcs;
  const bool islip = cfg_.allocator == Allocator::kIslip;
  // A slot's place in the switch's order of input VCs; an output VC's in its
  // order of output VCs.
  const auto place = [&](std::uint32_t slot) {
    return iqPorts_[slot >> iqShift_].inPos * vcs + iqVc(slot);
  };
  const auto outPlace = [&](std::uint32_t out, std::uint32_t ov) {
    return iqPorts_[out].outPos * vcs + ov;
  };
  const auto distance = [n](std::uint32_t pos, std::uint32_t ptr) {
    return pos >= ptr ? pos - ptr : pos + n - ptr;
  };
  iqRequests_.clear();
  iqStages_.forEach(sw, Stages::kVcAlloc, [&](std::uint32_t i) {
    for (std::uint32_t m = iqStages_.get(i, Stages::kVcAlloc); m != 0; m &= m - 1) {
      const std::uint32_t slot =
          iqSlot(iqInputs_[i], static_cast<std::uint32_t>(std::countr_zero(m)));
      if (iqIn_[slot].readyCycle <= iqCycle_) iqRequests_.push_back(slot);
    }
  });
  // The asking head first at or after `ptr`, among those for `out` (from r on).
  const auto firstAsking = [&](std::size_t r, std::uint32_t out, std::uint32_t ptr) {
    std::uint32_t pick = iq::kNone, best = n;
    for (std::size_t q = r; q < iqRequests_.size(); ++q) {
      const std::uint32_t slot = iqRequests_[q];
      const iq::InputVc& in = iqIn_[slot];
      if (in.out != out || in.state != iq::InputVc::kVcAlloc) continue;
      const std::uint32_t d = distance(place(slot), ptr);
      if (d < best) {
        best = d;
        pick = slot;
      }
    }
    return pick;
  };
  for (std::size_t r = 0; r < iqRequests_.size(); ++r) {
    const std::uint32_t out = iqIn_[iqRequests_[r]].out;
    iq::Port& op = iqPorts_[out];
    if (op.best != iq::kNone) continue;  // this output was handled
    op.best = 0;
    if (!islip) {
      for (std::uint32_t ov = 0; ov < vcs; ++ov) {
        if (iqOut_[iqSlot(out, ov)].owner != iq::kNone) continue;
        const std::uint32_t pick = firstAsking(r, out, op.rrVa);
        if (pick == iq::kNone) break;
        op.rrVa = iq::roundRobinNext(place(pick), n);
        iqGrantVc(pick, ov);
      }
      continue;
    }
    // The head accepts, of the VCs granting it, the first at or after its
    // accept pointer; both pointers move past the match.
    const auto accept = [&](std::uint32_t head, std::uint32_t granted) {
      std::uint32_t take = iq::kNone, best = n;
      for (; granted != 0; granted &= granted - 1) {
        const auto ov = static_cast<std::uint32_t>(std::countr_zero(granted));
        const std::uint32_t d = distance(outPlace(out, ov), iqVaAcceptPtr_[head]);
        if (d < best) {
          best = d;
          take = ov;
        }
      }
      iqVaGrantPtr_[iqSlot(out, take)] = iq::roundRobinNext(place(head), n);
      iqVaAcceptPtr_[head] = iq::roundRobinNext(outPlace(out, take), n);
      iqGrantVc(head, take);
    };
    std::uint32_t free = 0;  // the output's VCs no packet holds, a bit each
    for (std::uint32_t ov = 0; ov < vcs; ++ov) {
      if (iqOut_[iqSlot(out, ov)].owner == iq::kNone) free |= 1u << ov;
    }
    if (free == 0) continue;
    // One head asking (the usual case): every free VC grants it.
    std::uint32_t asking = 0, only = iq::kNone;
    for (std::size_t q = r; q < iqRequests_.size() && asking < 2; ++q) {
      if (iqIn_[iqRequests_[q]].out != out) continue;
      ++asking;
      only = iqRequests_[q];
    }
    if (asking == 1) {
      accept(only, free);
      continue;
    }
    // Grants, one per free output VC, then each granted head accepts one.
    std::array<std::uint32_t, 16> grantee{};  // vcs <= 16 (EmulatorConfig::validate)
    for (std::uint32_t m = free; m != 0; m &= m - 1) {
      const auto ov = static_cast<std::uint32_t>(std::countr_zero(m));
      grantee[ov] = firstAsking(r, out, iqVaGrantPtr_[iqSlot(out, ov)]);
    }
    for (std::uint32_t m = free; m != 0; m &= m - 1) {
      const std::uint32_t head = grantee[static_cast<std::size_t>(std::countr_zero(m))];
      if (iqIn_[head].state != iq::InputVc::kVcAlloc) continue;  // matched already
      std::uint32_t granted = 0;
      for (std::uint32_t g = m; g != 0; g &= g - 1) {
        const auto ov = static_cast<std::uint32_t>(std::countr_zero(g));
        if (grantee[ov] == head) granted |= 1u << ov;
      }
      accept(head, granted);
    }
  }
  for (std::uint32_t slot : iqRequests_)
    iqPorts_[iqIn_[slot].out].best = iq::kNone;
}

// Output VC `ov` of its output goes to the head at the front of `slot`.
void FabricEmulator::iqGrantVc(std::uint32_t slot, std::uint32_t ov) {
  iq::InputVc& in = iqIn_[slot];
  const std::uint32_t out = in.out;
  iq::OutputVc& o = iqOut_[iqSlot(out, ov)];
  in.state = iq::InputVc::kActive;
  const std::uint32_t input = iqInputOf(slot);
  iqStages_.clear(input, Stages::kVcAlloc, iqBit(slot));
  if (o.credits > 0) iqStages_.set(input, Stages::kReady, iqBit(slot));  // head at the front
  in.outVc = static_cast<std::uint8_t>(ov);
  in.readyCycle = iqCycle_ + cfg_.vcAllocCycles;
  o.owner = slot;
  iqTakeVc(out);
}

// Switch allocation (docs/emulator.md, "Switch models"). An input VC may go if
// it holds an output VC, has a flit and a credit downstream, and its output is
// on, awake and not held by another input. ISLIP, as BookSim2's: every input
// asks each output one of its VCs may go to, with the VC first at or after the
// input's VC pointer; each output grants the asking input first at or after
// its grant pointer; each input accepts the granting output first at or after
// its accept pointer (up to `speedup` outputs); pointers move past an accepted
// match only. ROUND_ROBIN, separable input first: each input offers its VCs
// round robin (up to `speedup`, one per output) and every grant is taken.
void FabricEmulator::iqAllocateSwitch(std::uint32_t sw) {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  const TimePs now = sched_.now();
  const std::int64_t cycle = iqCycle_;
  const std::uint32_t shift = iqShift_;
  const std::uint32_t nIn = iqSwitches_[sw].inputs;
  const bool islip = cfg_.allocator == Allocator::kIslip;
  // One input with one ready VC (the usual case at light load): it asks
  // alone, so it wins if it may go, and the pointers move as for any match.
  if (const std::uint32_t i = iqStages_.onlyInput(sw, Stages::kReady); i != Stages::kNoInput) {
    const std::uint32_t ready = iqStages_.get(i, Stages::kReady);
    const std::uint32_t ch = iqInputs_[i];
    iq::Port& ip = iqPorts_[ch];
    if ((ready & (ready - 1)) == 0 && ip.heldIn == iq::kNone) {
      const auto v = static_cast<std::uint32_t>(std::countr_zero(ready));
      const std::uint32_t slot = iqSlot(ch, v);
      const iq::InputVc& in = iqIn_[slot];
      if (in.readyCycle > cycle) return;
      iq::Port& op = iqPorts_[in.out];
      if (op.heldOut != iq::kNone && op.heldOut != ch) return;
      if (op.sendable == 0 || op.wakeAt > now) return;
      op.rrOut = static_cast<std::uint16_t>(iq::roundRobinNext(ip.inPos, nIn));
      ip.rrIn = static_cast<std::uint8_t>(iq::roundRobinNext(v, vcs));  // both allocators
      if (islip) ip.rrAccept = static_cast<std::uint16_t>(iq::roundRobinNext(op.outPos, nIn));
      iqSend(sw, slot);
      return;
    }
  }
  const auto speedup = static_cast<std::uint32_t>(cfg_.speedup);
  // Plain pointers: the stores below (some of one byte) must not make the
  // compiler reload the vectors' data pointers.
  iq::Port* const port = iqPorts_.data();
  const iq::InputVc* const vc = iqIn_.data();
  iq::Request* const req = iqSaRequests_.data();
  std::uint32_t n = 0;
  // Some output was asked twice, or an input got more than `speedup` asks in:
  // the grants and accepts must be worked out. Otherwise every request wins.
  bool contended = false;
  // Round-robin distance of a port position from a pointer.
  const auto distance = [nIn](std::uint32_t pos, std::uint32_t ptr) {
    return pos >= ptr ? pos - ptr : pos + nIn - ptr;
  };
  // A request of input `ch` (at `inPos`) from `slot`, if it may go; the grant
  // (each output: the request first at or after its pointer) as it comes.
  const auto ask = [&](std::uint32_t ch, std::uint32_t inPos, std::uint32_t slot,
                       std::uint32_t first) {
    const iq::InputVc& in = vc[slot];
    if (in.readyCycle > cycle) return false;
    iq::Port& op = port[in.out];
    if (op.heldOut != iq::kNone && op.heldOut != ch) return false;
    if (op.sendable == 0 || op.wakeAt > now) return false;
    for (std::uint32_t q = first; q < n; ++q) {  // one request per output
      if (req[q].out == in.out) return false;
    }
    req[n] = {slot, in.out, static_cast<std::uint16_t>(inPos), op.outPos, false};
    if (op.best == iq::kNone) {
      op.best = n;
    } else {
      contended = true;
      if (distance(inPos, op.rrOut) < distance(req[op.best].inPos, op.rrOut)) op.best = n;
    }
    ++n;
    return true;
  };
  iqStages_.forEach(sw, Stages::kReady, [&](std::uint32_t i) {
    const std::uint32_t ready = iqStages_.get(i, Stages::kReady);
    const std::uint32_t ch = iqInputs_[i];
    iq::Port& ip = port[ch];
    const std::uint32_t first = n;
    if (ip.heldIn != iq::kNone) {
      if ((ready & iqBit(ip.heldIn)) == 0) return;
      if (ask(ch, ip.inPos, ip.heldIn, first) && !islip)
        ip.rrIn = static_cast<std::uint8_t>(iq::roundRobinNext(iqVc(ip.heldIn), vcs));
      return;
    }
    if ((ready & (ready - 1)) == 0) {  // one VC ready: the usual case
      const auto v = static_cast<std::uint32_t>(std::countr_zero(ready));
      if (ask(ch, ip.inPos, ch << shift | v, first) && !islip)
        ip.rrIn = static_cast<std::uint8_t>(iq::roundRobinNext(v, vcs));
      return;
    }
    // The ready VCs from the pointer on, then those before it.
    const std::uint32_t ptr = ip.rrIn;
    const std::uint32_t from = ready & (~0u << ptr);
    for (std::uint32_t pass = 0, m = from; pass < 2; ++pass, m = ready & ~from) {
      for (; m != 0; m &= m - 1) {
        const auto v = static_cast<std::uint32_t>(std::countr_zero(m));
        if (!ask(ch, ip.inPos, ch << shift | v, first)) continue;
        if (islip) continue;
        ip.rrIn = static_cast<std::uint8_t>(iq::roundRobinNext(v, vcs));
        if (n - first == speedup) return;
      }
    }
    if (n - first > speedup) contended = true;  // iSLIP: the input accepts some
  });
  std::uint32_t won = n;
  if (contended) {
    // Accept: an input's requests are together; each keeps its grants (up to
    // `speedup`, iSLIP: those first at or after its accept pointer).
    for (std::uint32_t q = 0; q < n; ++q) {  // the grants, and the marks cleared
      iq::Port& op = port[req[q].out];
      req[q].granted = op.best == q;
      if (req[q].granted) op.best = iq::kNone;
    }
    won = 0;
    for (std::uint32_t first = 0, end = 0; first < n; first = end) {
      const std::uint32_t ch = req[first].slot >> shift;
      end = first + 1;
      while (end < n && req[end].slot >> shift == ch)
        ++end;
      const std::uint32_t taken = won;
      for (std::uint32_t q = first; q < end; ++q) {
        if (req[q].granted) req[won++] = req[q];
      }
      if (!islip || won - taken <= speedup) continue;
      const std::uint32_t ptr = port[ch].rrAccept;
      std::sort(req + taken, req + won, [&](const iq::Request& a, const iq::Request& b) {
        return distance(a.outPos, ptr) < distance(b.outPos, ptr);
      });
      won = taken + speedup;
    }
  }
  for (std::uint32_t q = 0; q < won; ++q) {
    const iq::Request r = req[q];
    iq::Port& ip = port[r.slot >> shift];
    iq::Port& op = port[r.out];
    op.best = iq::kNone;  // uncontended: every request is its output's grant
    op.rrOut = static_cast<std::uint16_t>(iq::roundRobinNext(r.inPos, nIn));
    if (islip) {
      ip.rrAccept = static_cast<std::uint16_t>(iq::roundRobinNext(r.outPos, nIn));
      ip.rrIn = static_cast<std::uint8_t>(iq::roundRobinNext(iqVc(r.slot), vcs));
    }
    iqSend(sw, r.slot);
  }
}

}  // namespace ebb::sim
