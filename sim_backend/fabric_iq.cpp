// The input-queued virtual-channel router model of FabricEmulator
// (docs/emulator.md, "Switch models"). Flit level and cycle driven: while
// anything moves, one kIqTick per cycle runs, in this order, the wire items due
// (flits into input buffers, credits back to senders), host injection, and at
// every switch holding flits the route stage, VC allocation and switch
// allocation. A head flit that reaches the front of an input VC at cycle t is
// routed at t + R, may win an output VC then and the switch VC_a cycles later,
// and reaches the next buffer SW_a + X + L cycles after that: per hop
// R + VC_a + SW_a + X + L cycles at zero load (R routing, X crossbar, L link).
// Body flits follow one per cycle and may cross in the cycle they arrive;
// a host's flits spend I cycles in its NIC before the link (so a head leaves
// its source I + L cycles after its packet reached the front of the queue,
// and the host's credit loop is as long as a switch's). Credits count flits; a VC buffer smaller
// than a packet makes the router wormhole: a blocked packet holds a VC on
// every hop it spans.
#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "sim_backend/fabric_emulator.h"

namespace ebb::sim {

using fabric::Direction;
using fabric::HostId;
using fabric::LinkId;
using fabric::SwitchId;

using iq::kHostOwner;

namespace {
std::int64_t cyclesOf(TimePs ps, TimePs cyclePs) {
  return ps / cyclePs;
}
}  // namespace

void FabricEmulator::iqInit() {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  const std::size_t nCh = channels_.size();
  while ((1u << iqShift_) < vcs)
    ++iqShift_;
  const std::size_t nSlots = nCh << iqShift_;
  iqCap_ = static_cast<std::uint32_t>(cfg_.vcBufferBytes / cfg_.flitBytes);
  const std::int64_t link = cyclesOf(cfg_.linkLatencyPs, cfg_.cyclePs);
  iqDelay_.route = cyclesOf(cfg_.routingDelayPs, cfg_.cyclePs);
  iqDelay_.flit = std::max<std::int64_t>(1, cfg_.swAllocCycles + cfg_.crossbarCycles + link);
  iqDelay_.credit = std::max<std::int64_t>(1, cfg_.creditCycles + link);
  iqDelay_.inject = cfg_.injectionCycles + std::max<std::int64_t>(1, link);
  iqIn_.assign(nSlots, {});
  iqFlits_.assign(nSlots * iqCap_, {});
  iqOut_.assign(nSlots, {});
  iqVaGrantPtr_.assign(nSlots, 0);
  iqVaAcceptPtr_.assign(nSlots, 0);
  for (std::size_t slot = 0; slot < nSlots; ++slot)
    iqOut_[slot].credits = static_cast<std::int32_t>(iqCap_);
  iqPorts_.assign(nCh, {});
  for (std::size_t ch = 0; ch < nCh; ++ch) {
    if (!channels_[ch].toHost) iqPorts_[ch].receiver = channels_[ch].receiver.value();
  }
  iqSwitches_.assign(topo_.numSwitches(), {});
  iqInputs_.clear();
  for (std::uint32_t sw = 0; sw < topo_.numSwitches(); ++sw) {
    iq::SwitchPorts& ports = iqSwitches_[sw];
    ports.first = static_cast<std::uint32_t>(iqInputs_.size());
    for (const fabric::Port& port : topo_.sw(SwitchId(sw)).ports) {
      if (!port.link.valid()) continue;
      const fabric::Link& l = topo_.link(port.link);
      const bool upper = l.upper.sw == SwitchId(sw);  // else the link's lower (child) end
      const std::uint32_t in = index(port.link, upper ? Direction::kUp : Direction::kDown);
      iqPorts_[in].inPos = static_cast<std::uint16_t>(ports.inputs++);
      iqPorts_[in].input = static_cast<std::uint32_t>(iqInputs_.size());
      iqInputs_.push_back(in);
    }
  }
  iqBuffered_.init(iqSwitches_.size());
  std::vector<std::uint32_t> inputs;
  for (const iq::SwitchPorts& s : iqSwitches_)
    inputs.push_back(s.inputs);
  iqStages_.init(inputs);
  for (std::uint32_t ch = 0; ch < nCh; ++ch)  // an output's place: that of its link's input
    iqPorts_[ch].outPos = iqPorts_[ch ^ 1u].inPos;
  const std::uint32_t most = inputs.empty() ? 0 : *std::max_element(inputs.begin(), inputs.end());
  iqSaRequests_.assign(static_cast<std::size_t>(most) * vcs, {});
  iqSources_.assign(topo_.numHosts(), {});
  // Long enough for the longest wire delay, a power of two to index by a mask.
  const std::int64_t span = cfg_.swAllocCycles + cfg_.crossbarCycles + cfg_.creditCycles +
                            cfg_.injectionCycles + cyclesOf(cfg_.linkLatencyPs, cfg_.cyclePs) + 2;
  std::size_t size = 1;
  while (static_cast<std::int64_t>(size) < span)
    size *= 2;
  iqFlitWheel_.assign(size, {});
  iqCreditWheel_.assign(size, {});
  iqWheelMask_ = size - 1;
}

void FabricEmulator::iqActivate(HostId host) {
  iq::Source& s = iqSources_[host.value()];
  if (!s.active) {
    s.active = true;
    iqActiveHosts_.push_back(host.value());
  }
  iqArm();
}

// The next tick, at the first cycle boundary not before now.
void FabricEmulator::iqArm() {
  if (iqArmed_) return;
  iqArmed_ = true;
  const TimePs now = sched_.now();
  const std::int64_t cycle = (now + cfg_.cyclePs - 1) / cfg_.cyclePs;
  post(cycle * cfg_.cyclePs, kIqTick, 0);
}

// iqArmed_ stays set while the tick runs: a send it causes (a delivery's
// callback) joins this cycle's injection instead of posting a second tick.
void FabricEmulator::iqTick() {
  iqCycle_ = sched_.now() / cfg_.cyclePs;
  const std::size_t now = static_cast<std::size_t>(iqCycle_) & iqWheelMask_;
  // Items may be added to other slots while these are handled, never to these.
  std::vector<std::uint32_t>& credits = iqCreditWheel_[now];
  iq::OutputVc* const outVcs = iqOut_.data();
  for (std::uint32_t slot : credits) {
    iq::OutputVc& o = outVcs[slot];
    // The first credit back unblocks the input VC whose packet holds this VC.
    if (o.credits++ == 0) {
      iqUnblock(slot);
      if (o.owner < kHostOwner && iqIn_[o.owner].count > 0)
        iqStages_.set(iqInputOf(o.owner), Stages::kReady, iqBit(o.owner));
    }
  }
  std::vector<iq::WireFlit>& flits = iqFlitWheel_[now];
  for (const iq::WireFlit& f : flits)
    iqReceive(f);
  iqOnWire_ -= credits.size() + flits.size();
  credits.clear();
  flits.clear();
  iqBuffered_.forEach([&](std::uint32_t sw) {
    // Each stage only where some input VC is in it (the previous stage may
    // have just moved one there).
    if (iqStages_.any(sw, Stages::kRouting)) iqRoute(sw);
    if (iqStages_.any(sw, Stages::kVcAlloc)) iqAllocateVcs(sw);
    if (iqStages_.any(sw, Stages::kReady)) iqAllocateSwitch(sw);
  });
  // Injection only puts flits on the wire: the buffers counted above stand.
  const bool buffered = iqBuffered_.total() > 0;
  iqInject();
  if (buffered || iqOnWire_ > 0 || !iqActiveHosts_.empty()) {
    post((iqCycle_ + 1) * cfg_.cyclePs, kIqTick, 0);
  } else {
    iqArmed_ = false;
  }
}

void FabricEmulator::iqReceive(const iq::WireFlit& f) {
  const std::uint32_t ch = f.slot >> iqShift_;
  const iq::Port& port = iqPorts_[ch];
  if (port.receiver == iq::kNone) {
    // The host takes the flit at once; its ejection buffer's credit goes back
    // as a switch's would (BookSim2's ejection channels have credits too).
    iqCredit(iqCycle_ + iqDelay_.credit, f.slot);
    if (f.flit.tail()) deliver(f.flit.packet());
    return;
  }
  const std::uint32_t input = port.input;
  iqBuffered_.add(port.receiver);
  iq::InputVc& in = iqIn_[f.slot];
  std::uint32_t at = in.first + in.count;
  if (at >= iqCap_) at -= iqCap_;
  iqFlits_[static_cast<std::size_t>(f.slot) * iqCap_ + at] = f.flit;
  const std::uint32_t count = ++in.count;
  if (in.state == iq::InputVc::kActive) {
    const std::uint32_t outSlot = iqSlot(in.out, in.outVc);
    if (iqOut_[outSlot].credits > 0) {
      iqStages_.set(input, Stages::kReady, iqBit(f.slot));
    } else {
      iqBlock(outSlot);
    }
  } else if (count == 1 && in.state == iq::InputVc::kIdle) {
    in.state = iq::InputVc::kRouting;
    in.packet = f.flit.packet();
    iqStages_.set(input, Stages::kRouting, iqBit(f.slot));
    in.readyCycle = iqCycle_ + iqDelay_.route;
  }
}

// Hosts send one flit per cycle, each packet on a VC of their link chosen as
// BookSim2's injection does: the first free VC from the one after the last
// used that has room for the head. A host whose free VCs are all full claims
// one anyway (its link stays busy, as a transmitter with a packet to send
// is) and moves the claim to the first VC with room until the head leaves.
void FabricEmulator::iqInject() {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  const TimePs now = sched_.now();
  std::size_t kept = 0;
  for (std::uint32_t host : iqActiveHosts_) {
    iq::Source& s = iqSources_[host];
    const std::uint32_t ch = index(topo_.host(HostId(host)).link, Direction::kUp);
    Channel& c = channels_[ch];
    iq::Port& port = iqPorts_[ch];
    if (s.packet == iq::kNone && c.head != kNone) {
      s.packet = pop(ch);
      --queuedAtHosts_;
      s.flitsLeft = static_cast<std::uint32_t>(cfg_.flitsOf(packets_[s.packet].bytes));
      s.vc = iq::kNoVc;
      s.headSent = false;
      iqTakeVc(ch);
    }
    if (s.packet != iq::kNone && !s.headSent) iqPickInjectionVc(ch, s);
    if (s.packet != iq::kNone && s.vc != iq::kNoVc) {
      iq::OutputVc& ov = iqOut_[iqSlot(ch, s.vc)];
      if (ov.credits == 0) iqBlock(iqSlot(ch, s.vc));
      if (ov.credits > 0 && port.sendable != 0 && port.wakeAt <= now) {
        Packet& pk = packets_[s.packet];
        const std::uint32_t total = static_cast<std::uint32_t>(cfg_.flitsOf(pk.bytes));
        const bool head = s.flitsLeft == total, tail = s.flitsLeft == 1;
        if (head) {  // counted per packet, as the output-queued model does
          s.headSent = true;
          port.rrVa = iq::roundRobinNext(s.vc, vcs);
          pk.inCh = ch;
          pk.vc = s.vc;
          pk.epoch = c.epoch;
          c.counters.txBytes += cfg_.wireBytes(pk.bytes);
          c.counters.busy += static_cast<TimePs>(total) * cfg_.cyclePs;
          c.counters.txPackets += 1;
        }
        --ov.credits;
        iqWire(iqCycle_ + iqDelay_.inject, {iqSlot(ch, s.vc), {s.packet, head, tail}});
        if (tail) {
          ++stats_.packetHops;
          s.packet = iq::kNone;
          iqReleaseVc(ch, s.vc);
        } else {
          --s.flitsLeft;
        }
      }
    }
    if (s.packet != iq::kNone || c.head != kNone) {
      iqActiveHosts_[kept++] = host;
    } else {
      s.active = false;
    }
  }
  iqActiveHosts_.resize(kept);
}

// The VC a host's next head goes on (iqInject): the first from the pointer
// that is free (or already this packet's) and has a credit, else the first
// free one; the packet's claim moves there.
void FabricEmulator::iqPickInjectionVc(std::uint32_t ch, iq::Source& s) {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  if (s.vc != iq::kNoVc && iqOut_[iqSlot(ch, s.vc)].credits > 0) return;
  std::uint32_t pick = iq::kNoVc;
  for (std::uint32_t k = 0, v = iqPorts_[ch].rrVa; k < vcs; ++k, v = iq::roundRobinNext(v, vcs)) {
    const iq::OutputVc& o = iqOut_[iqSlot(ch, v)];
    if (o.owner != iq::kNone && v != s.vc) continue;
    if (o.credits > 0) {
      pick = v;
      break;
    }
    if (pick == iq::kNoVc) pick = v;
  }
  if (pick == iq::kNoVc || pick == s.vc) return;
  if (s.vc != iq::kNoVc) {
    iqOut_[iqSlot(ch, s.vc)].owner = iq::kNone;
    iqUnblock(iqSlot(ch, s.vc));
  }
  s.vc = static_cast<std::uint8_t>(pick);
  iqOut_[iqSlot(ch, pick)].owner = kHostOwner;
}

// Route stage: heads whose routing delay passed pick their output.
void FabricEmulator::iqRoute(std::uint32_t sw) {
  iqStages_.forEach(sw, Stages::kRouting, [&](std::uint32_t i) {
    for (std::uint32_t m = iqStages_.get(i, Stages::kRouting); m != 0; m &= m - 1) {
      const std::uint32_t slot =
          iqSlot(iqInputs_[i], static_cast<std::uint32_t>(std::countr_zero(m)));
      iq::InputVc& in = iqIn_[slot];
      if (in.state == iq::InputVc::kSink) {
        iqSink(sw, slot);
        continue;
      }
      if (in.readyCycle > iqCycle_) continue;
      const std::uint32_t out = routeHop(SwitchId(sw), slot >> iqShift_, in.packet);
      if (out == iq::kNone || channels_[out].failed) {  // faults or in-band gating left no way on
        in.state = iq::InputVc::kSink;
        iqSink(sw, slot);
        continue;
      }
      in.out = out;
      in.state = iq::InputVc::kVcAlloc;
      iqStages_.clear(i, Stages::kRouting, iqBit(slot));
      iqStages_.set(i, Stages::kVcAlloc, iqBit(slot));
      in.readyCycle = iqCycle_;
    }
  });
}

// The front flit of input VC `slot` crosses the switch onto its output.
void FabricEmulator::iqSend(std::uint32_t sw, std::uint32_t slot) {
  const std::uint32_t inCh = slot >> iqShift_;
  iq::InputVc& in = iqIn_[slot];
  const iq::Flit f = iqFlits_[static_cast<std::size_t>(slot) * iqCap_ + in.first];
  in.first = iq::roundRobinNext(in.first, iqCap_);
  const std::uint32_t left = --in.count;
  iqBuffered_.remove(sw);
  // The freed slot's credit goes back upstream.
  iqCredit(iqCycle_ + iqDelay_.credit, slot);
  const std::uint32_t out = in.out;
  const std::uint8_t outVc = in.outVc;
  const std::uint32_t outSlot = iqSlot(out, outVc);
  iq::OutputVc& o = iqOut_[outSlot];
  // No flit left, no credit left, or the packet leaves: nothing to offer for now.
  const bool noCredit = --o.credits == 0;
  const bool tail = f.tail();
  if (noCredit || left == 0 || tail) {
    iqStages_.clear(iqPorts_[inCh].input, Stages::kReady, iqBit(slot));
    if (noCredit && left > 0 && !tail) iqBlock(outSlot);
  }
  if (f.head()) {  // counted per packet, as the output-queued model does
    Channel& c = channels_[out];
    Packet& pk = packets_[f.packet()];
    pk.inCh = out;
    pk.vc = outVc;
    pk.epoch = c.epoch;
    c.counters.txBytes += cfg_.wireBytes(pk.bytes);
    c.counters.busy += cfg_.flitsOf(pk.bytes) * cfg_.cyclePs;
    c.counters.txPackets += 1;
  }
  iqWire(iqCycle_ + iqDelay_.flit, {outSlot, f});
  if (cfg_.holdSwitchForPacket) {
    iqPorts_[inCh].heldIn = tail ? iq::kNone : slot;
    iqPorts_[out].heldOut = tail ? iq::kNone : inCh;
  }
  if (!tail) return;
  ++stats_.packetHops;
  iqReleaseVc(out, outVc);
  iqNextPacket(slot);
}

// The packet at the front of `slot` is done with it: the next one's head, if
// buffered, starts its route stage next cycle.
void FabricEmulator::iqNextPacket(std::uint32_t slot) {
  iq::InputVc& in = iqIn_[slot];
  in.state = iq::InputVc::kIdle;
  in.out = iq::kNone;
  in.packet = iq::kNone;
  if (in.count > 0) {
    in.state = iq::InputVc::kRouting;
    in.packet = iqFlits_[static_cast<std::size_t>(slot) * iqCap_ + in.first].packet();
    iqStages_.set(iqInputOf(slot), Stages::kRouting, iqBit(slot));
    in.readyCycle = iqCycle_ + 1 + iqDelay_.route;
  }
}

// Credit wait, the model's PortXmitWait: a direction waits while any of its
// output VCs has a flit to send and no credit (counted once however many).
void FabricEmulator::iqBlock(std::uint32_t outSlot) {
  iq::Port& p = iqPorts_[outSlot >> iqShift_];
  const std::uint16_t bit = iqBit(outSlot);
  if ((p.blocked & bit) != 0) return;
  if (p.blocked == 0) p.blockedSince = iqCycle_;
  p.blocked = static_cast<std::uint16_t>(p.blocked | bit);
}

void FabricEmulator::iqUnblock(std::uint32_t outSlot) {
  const std::uint32_t ch = outSlot >> iqShift_;
  iq::Port& p = iqPorts_[ch];
  const std::uint16_t bit = iqBit(outSlot);
  if ((p.blocked & bit) == 0) return;
  p.blocked = static_cast<std::uint16_t>(p.blocked & ~bit);
  if (p.blocked == 0)
    channels_[ch].counters.creditWait += (iqCycle_ - p.blockedSince) * cfg_.cyclePs;
}

// A packet took an output VC of `out`: the transmitter wakes from low-power
// idle if this is its first.
void FabricEmulator::iqTakeVc(std::uint32_t out) {
  Channel& c = channels_[out];
  iq::Port& port = iqPorts_[out];
  if (port.owned++ > 0) {
    c.lpi.packetJoined();
    return;
  }
  c.busy = true;
  const TimePs now = sched_.now();
  // Off or turning on: the packet is ready when the direction is (iqResumed).
  if (c.lpi.suspended()) {
    port.wakeAt = now;
    return;
  }
  // Within the bubble after the last packet (iqReleaseVc): back to back.
  if (c.lpi.busy()) c.lpi.transmissionEnded(now);
  port.wakeAt = now + c.lpi.packetReady(now);
}

void FabricEmulator::iqResumed(std::uint32_t out) {
  if (!iqModel() || iqPorts_[out].owned == 0) return;
  const TimePs now = sched_.now();
  iqPorts_[out].wakeAt = now + channels_[out].lpi.packetReady(now);
}

// The tail passed: the output VC is free (BookSim2's wait_for_tail_credit = 0).
// Low-power idle starts only after the pipeline's bubble: a packet already in
// the switch (or queued at the host) behind the last one needs 1 + R + VA
// cycles to claim the output, and goes out back to back as the output-queued
// model's next packet does, even with a zero hold.
void FabricEmulator::iqReleaseVc(std::uint32_t out, std::uint8_t vc) {
  if (vc != iq::kNoVc) iqOut_[iqSlot(out, vc)].owner = iq::kNone;
  Channel& c = channels_[out];
  iq::Port& port = iqPorts_[out];
  if (--port.owned > 0) return;
  c.busy = false;
  const TimePs now = sched_.now();
  if (c.offPending || cfg_.lpi.mode == policies::LpiMode::kOff) {
    c.lpi.transmissionEnded(now);
  } else {
    const std::int64_t bubble = 1 + iqDelay_.route + cfg_.vcAllocCycles;
    post(now + bubble * cfg_.cyclePs, kIqIdle, out, ++port.idleGen);
  }
  if (c.offPending) finishOff(out);
}

void FabricEmulator::iqIdle(std::uint32_t out, std::uint32_t gen) {
  Channel& c = channels_[out];
  if (gen != iqPorts_[out].idleGen || iqPorts_[out].owned > 0) return;
  if (c.lpi.busy() && !c.lpi.suspended()) c.lpi.transmissionEnded(sched_.now());
}

// A direction went off or failed: heads routed to it that hold no VC there
// yet route again (up: on another usable up link); what holds one drains,
// or after a failure was lost (iqCut). After a failure the heads routed
// again count as rerouted, as the output-queued model's queued packets do.
void FabricEmulator::iqReroute(std::uint32_t ch, bool forFault) {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  const fabric::Link& l = topo_.link(LinkId(ch / 2));
  const bool up = ch % 2 == static_cast<std::uint32_t>(Direction::kUp);
  if (up && l.lowerIsHost) return;
  const SwitchId sender = up ? l.lower.sw : l.upper.sw;
  const iq::SwitchPorts& ports = iqSwitches_[sender.value()];
  for (std::uint32_t i = ports.first; i < ports.first + ports.inputs; ++i) {
    for (std::uint32_t v = 0; v < vcs; ++v) {
      const std::uint32_t slot = iqSlot(iqInputs_[i], v);
      iq::InputVc& ivc = iqIn_[slot];
      if (ivc.state == iq::InputVc::kVcAlloc && ivc.out == ch) {
        // A down path has another way only beside parallel cables or in an
        // irregular tree; else it sinks.
        if (forFault && (up || downRoutes_.anyAlternates())) {
          ++stats_.packetsRerouted;
          Message& m = messages_[packets_[ivc.packet].msg];
          if (!m.rerouted) ++stats_.messagesRerouted;
          m.rerouted = true;
        }
        ivc.state = iq::InputVc::kRouting;
        iqStages_.clear(i, Stages::kVcAlloc, iqBit(slot));
        iqStages_.set(i, Stages::kRouting, iqBit(slot));
        ivc.readyCycle = iqCycle_;
      }
    }
  }
}

void FabricEmulator::iqRefresh(std::uint32_t ch) {
  if (iqModel()) iqPorts_[ch].sendable = static_cast<std::uint8_t>(chCanSend(ch) ? 1 : 0);
}

std::uint32_t FabricEmulator::iqOwned(std::uint32_t ch) const {
  return iqPorts_[ch].owned;
}

std::uint32_t FabricEmulator::heldOutputVcs(LinkId link, Direction dir) const {
  return iqModel() ? iqOwned(index(link, dir)) : 0;
}

std::int64_t FabricEmulator::iqFreeCredit(std::uint32_t ch) const {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  std::int64_t free = 0;
  for (std::uint32_t v = 0; v < vcs; ++v)
    free += iqOut_[iqSlot(ch, v)].credits;
  return free * cfg_.flitBytes;
}

std::uint32_t FabricEmulator::bufferedFlits(LinkId link, Direction dir) const {
  if (!iqModel()) return 0;
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  std::uint32_t n = 0;
  for (std::uint32_t v = 0; v < vcs; ++v)
    n += iqIn_[iqSlot(index(link, dir), v)].count;
  return n;
}

}  // namespace ebb::sim
