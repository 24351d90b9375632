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

#include "sim_backend/fabric_emulator.h"

namespace ebb::sim {

using fabric::Direction;
using fabric::HostId;
using fabric::LinkId;
using fabric::SwitchId;

namespace {
// The owner of an output VC of a host's link: the host itself.
constexpr std::uint32_t kHostOwner = 0xFFFFFFFE;

std::int64_t cyclesOf(TimePs ps, TimePs cyclePs) {
  return ps / cyclePs;
}
}  // namespace

void FabricEmulator::iqInit() {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  const std::size_t nCh = channels_.size();
  iqCap_ = static_cast<std::uint32_t>(cfg_.vcBufferBytes / cfg_.flitBytes);
  iqIn_.assign(nCh * vcs, {});
  iqFlits_.assign(nCh * vcs * iqCap_, {});
  iqOut_.assign(nCh * vcs, {});
  for (std::size_t ch = 0; ch < nCh; ++ch) {
    for (std::uint32_t v = 0; v < vcs; ++v)
      iqOut_[ch * vcs + v].credits = static_cast<std::int32_t>(iqCap_);
  }
  iqOwned_.assign(nCh, 0);
  iqSendable_.assign(nCh, 1);
  iqChFlits_.assign(nCh, 0);
  iqWakeAt_.assign(nCh, 0);
  iqInPos_.assign(nCh, 0);
  iqRrIn_.assign(nCh, 0);
  iqRrOut_.assign(nCh, 0);
  iqRrVa_.assign(nCh, 0);
  iqHeldIn_.assign(nCh, iq::kNone);
  iqHeldOut_.assign(nCh, iq::kNone);
  iqBest_.assign(nCh, iq::kNone);
  iqSwitches_.assign(topo_.numSwitches(), {});
  for (std::uint32_t sw = 0; sw < topo_.numSwitches(); ++sw) {
    iq::SwitchPorts& ports = iqSwitches_[sw];
    for (const fabric::Port& port : topo_.sw(SwitchId(sw)).ports) {
      if (!port.link.valid()) continue;
      const fabric::Link& l = topo_.link(port.link);
      const bool upper = l.upper.sw == SwitchId(sw);  // else the link's lower (child) end
      const Direction in = upper ? Direction::kUp : Direction::kDown;
      const Direction out = upper ? Direction::kDown : Direction::kUp;
      iqInPos_[index(port.link, in)] = static_cast<std::uint32_t>(ports.inputs.size());
      ports.inputs.push_back(index(port.link, in));
      ports.outputs.push_back(index(port.link, out));
    }
  }
  iqSources_.assign(topo_.numHosts(), {});
  // Long enough for the longest wire delay.
  const std::int64_t span = cfg_.swAllocCycles + cfg_.crossbarCycles + cfg_.creditCycles +
                            cyclesOf(cfg_.linkLatencyPs, cfg_.cyclePs) + 2;
  iqWheel_.assign(static_cast<std::size_t>(span), {});
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

void FabricEmulator::iqWire(std::int64_t cycle, const iq::WireItem& item) {
  iqWheel_[static_cast<std::size_t>(cycle) % iqWheel_.size()].push_back(item);
  ++iqOnWire_;
}

void FabricEmulator::iqTick() {
  iqArmed_ = false;
  iqCycle_ = sched_.now() / cfg_.cyclePs;
  std::vector<iq::WireItem>& due = iqWheel_[static_cast<std::size_t>(iqCycle_) % iqWheel_.size()];
  // Items may be added to other slots while these are handled, never to this one.
  for (std::size_t i = 0; i < due.size(); ++i)
    iqReceive(due[i]);
  iqOnWire_ -= due.size();
  due.clear();
  bool buffered = false;
  for (std::uint32_t sw = 0; sw < iqSwitches_.size(); ++sw) {
    if (iqSwitches_[sw].buffered == 0) continue;
    iqRoute(sw);
    iqAllocateVcs(sw);
    iqAllocateSwitch(sw);
    buffered = buffered || iqSwitches_[sw].buffered > 0;
  }
  // Injection only puts flits on the wire: the buffers counted above stand.
  iqInject();
  if (buffered || iqOnWire_ > 0 || !iqActiveHosts_.empty()) {
    iqArmed_ = true;
    post((iqCycle_ + 1) * cfg_.cyclePs, kIqTick, 0);
  }
}

void FabricEmulator::iqReceive(const iq::WireItem& item) {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  if (item.kind == iq::WireItem::kCredit) {
    ++iqOut_[item.channel * vcs + item.vc].credits;
    return;
  }
  Channel& c = channels_[item.channel];
  if (c.toHost) {
    // The host takes the flit at once; its ejection buffer's credit goes back
    // as a switch's would (BookSim2's ejection channels have credits too).
    iqWire(iqCycle_ + std::max<std::int64_t>(
                          1, cfg_.creditCycles + cyclesOf(cfg_.linkLatencyPs, cfg_.cyclePs)),
           {iq::WireItem::kCredit, false, false, item.vc, item.channel, iq::kNone});
    if (item.tail) deliver(item.packet);
    return;
  }
  const std::uint32_t slot = item.channel * vcs + item.vc;
  iq::InputVc& in = iqIn_[slot];
  iqFlits_[static_cast<std::size_t>(slot) * iqCap_ + (in.first + in.count) % iqCap_] = {
      item.packet, item.head, item.tail};
  ++in.count;
  ++iqChFlits_[item.channel];
  ++iqSwitches_[c.receiver.value()].buffered;
  if (in.count == 1 && in.state == iq::InputVc::kIdle) {
    in.state = iq::InputVc::kRouting;
    ++iqSwitches_[c.receiver.value()].routing;
    in.readyCycle = iqCycle_ + cyclesOf(cfg_.routingDelayPs, cfg_.cyclePs);
  }
}

// Hosts send one flit per cycle, each packet on a free VC of their link.
void FabricEmulator::iqInject() {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  const TimePs now = sched_.now();
  const std::int64_t link = std::max<std::int64_t>(1, cyclesOf(cfg_.linkLatencyPs, cfg_.cyclePs));
  std::size_t kept = 0;
  for (std::uint32_t host : iqActiveHosts_) {
    iq::Source& s = iqSources_[host];
    const std::uint32_t ch = index(topo_.host(HostId(host)).link, Direction::kUp);
    Channel& c = channels_[ch];
    if (s.packet == iq::kNone && c.head != kNone) {
      for (std::uint32_t k = 0; k < vcs; ++k) {
        const std::uint32_t v = (iqRrVa_[ch] + k) % vcs;
        if (iqOut_[ch * vcs + v].owner != iq::kNone) continue;
        s.packet = pop(ch);
        --queuedAtHosts_;
        s.flitsLeft = static_cast<std::uint32_t>(cfg_.flitsOf(packets_[s.packet].bytes));
        s.vc = static_cast<std::uint8_t>(v);
        iqOut_[ch * vcs + v].owner = kHostOwner;
        iqRrVa_[ch] = (v + 1) % vcs;
        iqTakeVc(ch);
        break;
      }
    }
    if (s.packet != iq::kNone) {
      iq::OutputVc& ov = iqOut_[ch * vcs + s.vc];
      if (ov.credits > 0 && iqSendable_[ch] != 0 && iqWakeAt_[ch] <= now) {
        Packet& pk = packets_[s.packet];
        const std::uint32_t total = static_cast<std::uint32_t>(cfg_.flitsOf(pk.bytes));
        const bool head = s.flitsLeft == total, tail = s.flitsLeft == 1;
        if (head) {  // counted per packet, as the output-queued model does
          pk.inCh = ch;
          pk.vc = s.vc;
          pk.epoch = c.epoch;
          c.counters.txBytes += static_cast<std::uint64_t>(pk.bytes);
          c.counters.busy += static_cast<TimePs>(total) * cfg_.cyclePs;
          c.counters.txPackets += 1;
        }
        --ov.credits;
        iqWire(iqCycle_ + cfg_.injectionCycles + link,
               {iq::WireItem::kFlit, head, tail, s.vc, ch, s.packet});
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

// Route stage: heads whose routing delay passed pick their output.
void FabricEmulator::iqRoute(std::uint32_t sw) {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  iq::SwitchPorts& ports = iqSwitches_[sw];
  if (ports.routing == 0) return;
  for (std::uint32_t ch : iqSwitches_[sw].inputs) {
    for (std::uint32_t v = 0; v < vcs; ++v) {
      iq::InputVc& in = iqIn_[ch * vcs + v];
      if (in.state != iq::InputVc::kRouting || in.readyCycle > iqCycle_) continue;
      const iq::Flit& f = iqFlits_[static_cast<std::size_t>(ch * vcs + v) * iqCap_ + in.first];
      in.out = route(SwitchId(sw), packets_[f.packet].dst);
      in.state = iq::InputVc::kVcAlloc;
      in.readyCycle = iqCycle_;
      --ports.routing;
      ++ports.waitingVc;
    }
  }
}

// VC allocation: each output VC no packet holds goes to one routed head that
// asks for its output, round robin over the switch's input VCs.
void FabricEmulator::iqAllocateVcs(std::uint32_t sw) {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  iq::SwitchPorts& ports = iqSwitches_[sw];
  if (ports.waitingVc == 0) return;
  const auto n = static_cast<std::uint32_t>(ports.inputs.size()) * vcs;
  iqRequests_.clear();
  for (std::uint32_t ch : ports.inputs) {
    for (std::uint32_t v = 0; v < vcs; ++v) {
      const iq::InputVc& in = iqIn_[ch * vcs + v];
      if (in.state == iq::InputVc::kVcAlloc && in.readyCycle <= iqCycle_)
        iqRequests_.push_back(ch * vcs + v);
    }
  }
  for (std::size_t r = 0; r < iqRequests_.size(); ++r) {
    const std::uint32_t out = iqIn_[iqRequests_[r]].out;
    if (iqBest_[out] != iq::kNone) continue;  // this output was handled
    iqBest_[out] = 0;
    for (std::uint32_t ov = 0; ov < vcs; ++ov) {
      iq::OutputVc& o = iqOut_[out * vcs + ov];
      if (o.owner != iq::kNone) continue;
      // The requester first at or after the pointer, in the switch's order.
      std::uint32_t pick = iq::kNone, best = n;
      for (std::size_t q = r; q < iqRequests_.size(); ++q) {
        const std::uint32_t slot = iqRequests_[q];
        const iq::InputVc& in = iqIn_[slot];
        if (in.out != out || in.state != iq::InputVc::kVcAlloc) continue;
        const std::uint32_t pos = iqInPos_[slot / vcs] * vcs + slot % vcs;
        const std::uint32_t d = (pos + n - iqRrVa_[out] % n) % n;
        if (d < best) {
          best = d;
          pick = slot;
        }
      }
      if (pick == iq::kNone) break;
      iq::InputVc& in = iqIn_[pick];
      in.state = iq::InputVc::kActive;
      --ports.waitingVc;
      in.outVc = static_cast<std::uint8_t>(ov);
      in.readyCycle = iqCycle_ + cfg_.vcAllocCycles;
      o.owner = pick;
      iqRrVa_[out] = (iqInPos_[pick / vcs] * vcs + pick % vcs + 1) % n;
      iqTakeVc(out);
    }
  }
  for (std::uint32_t slot : iqRequests_)
    iqBest_[iqIn_[slot].out] = iq::kNone;
}

// Switch allocation, separable and input first: each input port offers the
// front flit of one of its VCs (round robin among those that may go: active,
// credit downstream, link on and awake), each output takes one offer (round
// robin over the inputs). iSLIP moves an input's pointer only when its offer
// is taken.
void FabricEmulator::iqAllocateSwitch(std::uint32_t sw) {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  const TimePs now = sched_.now();
  const iq::SwitchPorts& ports = iqSwitches_[sw];
  const auto nIn = static_cast<std::uint32_t>(ports.inputs.size());
  const bool islip = cfg_.allocator == Allocator::kIslip;
  const auto mayGo = [&](std::uint32_t slot) {
    const iq::InputVc& in = iqIn_[slot];
    if (in.state != iq::InputVc::kActive || in.count == 0 || in.readyCycle > iqCycle_) return false;
    const std::uint32_t out = in.out;
    if (iqHeldOut_[out] != iq::kNone && iqHeldOut_[out] != slot / vcs) return false;
    return iqOut_[out * vcs + in.outVc].credits > 0 && iqSendable_[out] != 0 &&
           iqWakeAt_[out] <= now;
  };
  iqRequests_.clear();
  for (std::uint32_t ch : ports.inputs) {
    if (iqChFlits_[ch] == 0) continue;
    std::uint32_t offered = 0;
    const std::uint32_t held = iqHeldIn_[ch];
    for (std::uint32_t k = 0; k < vcs && offered < cfg_.speedup; ++k) {
      const std::uint32_t slot = held != iq::kNone ? held : ch * vcs + (iqRrIn_[ch] + k) % vcs;
      if (mayGo(slot)) {
        // With speedup, one offer per output.
        bool dup = false;
        for (std::size_t q = iqRequests_.size() - offered; q < iqRequests_.size(); ++q)
          dup = dup || iqIn_[iqRequests_[q]].out == iqIn_[slot].out;
        if (!dup) {
          iqRequests_.push_back(slot);
          ++offered;
          if (!islip) iqRrIn_[ch] = (slot % vcs + 1) % vcs;
        }
      }
      if (held != iq::kNone) break;
    }
  }
  // Output arbitration: the offer first at or after the output's pointer.
  for (std::uint32_t slot : iqRequests_) {
    const std::uint32_t out = iqIn_[slot].out;
    const std::uint32_t d = (iqInPos_[slot / vcs] + nIn - iqRrOut_[out] % nIn) % nIn;
    const std::uint32_t cur = iqBest_[out];
    if (cur == iq::kNone || d < (iqInPos_[cur / vcs] + nIn - iqRrOut_[out] % nIn) % nIn) {
      iqBest_[out] = slot;
    }
  }
  for (std::uint32_t slot : iqRequests_) {
    const std::uint32_t out = iqIn_[slot].out;
    if (iqBest_[out] != slot) continue;
    iqBest_[out] = iq::kNone;
    const std::uint32_t ch = slot / vcs;
    iqRrOut_[out] = (iqInPos_[ch] + 1) % nIn;
    if (islip) iqRrIn_[ch] = (slot % vcs + 1) % vcs;
    iqSend(sw, slot);  // each output's winner cleared its scratch entry
  }
}

// The front flit of input VC `slot` crosses the switch onto its output.
void FabricEmulator::iqSend(std::uint32_t sw, std::uint32_t slot) {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  const std::uint32_t inCh = slot / vcs;
  iq::InputVc& in = iqIn_[slot];
  const iq::Flit f = iqFlits_[static_cast<std::size_t>(slot) * iqCap_ + in.first];
  in.first = (in.first + 1) % iqCap_;
  --in.count;
  --iqChFlits_[inCh];
  --iqSwitches_[sw].buffered;
  const std::int64_t link = cyclesOf(cfg_.linkLatencyPs, cfg_.cyclePs);
  // The freed slot's credit goes back upstream.
  iqWire(iqCycle_ + std::max<std::int64_t>(1, cfg_.creditCycles + link),
         {iq::WireItem::kCredit, false, false, static_cast<std::uint8_t>(slot % vcs), inCh,
          iq::kNone});
  const std::uint32_t out = in.out;
  --iqOut_[out * vcs + in.outVc].credits;
  if (f.head) {  // counted per packet, as the output-queued model does
    Channel& c = channels_[out];
    Packet& pk = packets_[f.packet];
    pk.inCh = out;
    pk.vc = in.outVc;
    pk.epoch = c.epoch;
    c.counters.txBytes += static_cast<std::uint64_t>(pk.bytes);
    c.counters.busy += cfg_.flitsOf(pk.bytes) * cfg_.cyclePs;
    c.counters.txPackets += 1;
  }
  iqWire(iqCycle_ + std::max<std::int64_t>(1, cfg_.swAllocCycles + cfg_.crossbarCycles + link),
         {iq::WireItem::kFlit, f.head, f.tail, in.outVc, out, f.packet});
  if (cfg_.holdSwitchForPacket) {
    iqHeldIn_[inCh] = f.tail ? iq::kNone : slot;
    iqHeldOut_[out] = f.tail ? iq::kNone : inCh;
  }
  if (!f.tail) return;
  ++stats_.packetHops;
  iqReleaseVc(out, in.outVc);
  in.state = iq::InputVc::kIdle;
  in.out = iq::kNone;
  if (in.count > 0) {  // the next packet's head is at the front
    in.state = iq::InputVc::kRouting;
    ++iqSwitches_[sw].routing;
    in.readyCycle = iqCycle_ + 1 + cyclesOf(cfg_.routingDelayPs, cfg_.cyclePs);
  }
}

// A packet took an output VC of `out`: the transmitter wakes from low-power
// idle if this is its first.
void FabricEmulator::iqTakeVc(std::uint32_t out) {
  Channel& c = channels_[out];
  if (iqOwned_[out]++ > 0) return;
  c.busy = true;
  const TimePs now = sched_.now();
  iqWakeAt_[out] = now + c.lpi.packetReady(now);
}

// The tail passed: the output VC is free (BookSim2's wait_for_tail_credit = 0).
void FabricEmulator::iqReleaseVc(std::uint32_t out, std::uint8_t vc) {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  iqOut_[out * vcs + vc].owner = iq::kNone;
  Channel& c = channels_[out];
  if (--iqOwned_[out] > 0) return;
  c.busy = false;
  c.lpi.transmissionEnded(sched_.now());
  if (c.offPending) finishOff(out);
}

// An up direction went off: heads routed to it that hold no VC there yet
// route again (on another usable up link); what holds one drains.
void FabricEmulator::iqReroute(std::uint32_t ch) {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  const fabric::Link& l = topo_.link(LinkId(ch / 2));
  const SwitchId sender =
      ch % 2 == static_cast<std::uint32_t>(Direction::kUp) ? l.lower.sw : l.upper.sw;
  if (ch % 2 == static_cast<std::uint32_t>(Direction::kUp) && l.lowerIsHost) return;
  for (std::uint32_t in : iqSwitches_[sender.value()].inputs) {
    for (std::uint32_t v = 0; v < vcs; ++v) {
      iq::InputVc& ivc = iqIn_[in * vcs + v];
      if (ivc.state == iq::InputVc::kVcAlloc && ivc.out == ch) {
        ivc.state = iq::InputVc::kRouting;
        --iqSwitches_[sender.value()].waitingVc;
        ++iqSwitches_[sender.value()].routing;
        ivc.readyCycle = iqCycle_;
      }
    }
  }
}

void FabricEmulator::iqRefresh(std::uint32_t ch) {
  if (iqModel()) iqSendable_[ch] = static_cast<std::uint8_t>(chCanSend(ch) ? 1 : 0);
}

std::int64_t FabricEmulator::iqFreeCredit(std::uint32_t ch) const {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  std::int64_t free = 0;
  for (std::uint32_t v = 0; v < vcs; ++v)
    free += iqOut_[ch * vcs + v].credits;
  return free * cfg_.flitBytes;
}

std::uint32_t FabricEmulator::bufferedFlits(LinkId link, Direction dir) const {
  if (!iqModel()) return 0;
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  std::uint32_t n = 0;
  for (std::uint32_t v = 0; v < vcs; ++v)
    n += iqIn_[index(link, dir) * vcs + v].count;
  return n;
}

Status FabricEmulator::checkCredits() const {
  if (!iqModel()) return Status::ok();
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  std::vector<std::int64_t> held(iqOut_.size(), 0);  // per slot: credits, flits, items
  for (std::size_t slot = 0; slot < iqOut_.size(); ++slot)
    held[slot] = iqOut_[slot].credits + static_cast<std::int64_t>(iqIn_[slot].count);
  for (const auto& due : iqWheel_) {
    for (const iq::WireItem& w : due)
      ++held[w.channel * vcs + w.vc];
  }
  for (std::uint32_t ch = 0; ch < channels_.size(); ++ch) {
    for (std::uint32_t v = 0; v < vcs; ++v) {
      if (held[ch * vcs + v] != iqCap_) {
        return {ErrorCode::kInternal,
                fmt::format("credits of {} ({}) VC {}: {} flits and credits, buffer {}",
                            topo_.describeLink(LinkId(ch / 2)),
                            ch % 2 == static_cast<std::uint32_t>(Direction::kUp) ? "up" : "down", v,
                            held[ch * vcs + v], iqCap_)};
      }
    }
  }
  return Status::ok();
}

std::string FabricEmulator::iqDescribeWaiting() const {
  std::uint64_t flits = 0, switches = 0;
  for (const iq::SwitchPorts& s : iqSwitches_) {
    flits += s.buffered;
    switches += s.buffered > 0 ? 1u : 0u;
  }
  if (flits == 0) return {};
  return fmt::format("{} flits wait in the input buffers of {} switches", flits, switches);
}

}  // namespace ebb::sim
