#include "sim_backend/fabric_emulator.h"

#include <fmt/format.h>

#include <algorithm>

namespace ebb::sim {

using fabric::Direction;
using fabric::HostId;
using fabric::LinkId;
using fabric::SwitchId;
using policies::LinkPowerState;

FabricEmulator::FabricEmulator(const fabric::Topology& topo, const EmulatorConfig& cfg,
                               agent::VirtualScheduler& scheduler)
    : topo_(topo),
      cfg_(cfg),
      sched_(scheduler),
      rng_(cfg.seed),
      downRoutes_(topo),
      upRouting_(makeUpRouting(cfg.upRouting)),
      reach_(topo, downRoutes_),
      gatedReach_(topo, downRoutes_),
      switchFault_(topo.numSwitches(), 0) {
  if (Status s = cfg_.validate(); !s.isOk()) throw Error(s);
  channels_.resize(topo.numLinks() * 2);
  for (LinkId::rep_type l = 0; l < topo.numLinks(); ++l) {
    const fabric::Link& link = topo.link(LinkId(l));
    for (Direction d : {Direction::kUp, Direction::kDown}) {
      Channel& ch = channels_[index(LinkId(l), d)];
      ch.toHost = d == Direction::kDown && link.lowerIsHost;
      ch.receiver = d == Direction::kUp ? link.upper.sw : link.lower.sw;
      ch.credits.assign(ch.toHost ? 1 : static_cast<std::size_t>(cfg.vcs), cfg.vcBufferBytes);
      ch.gate = policies::GatedLink(cfg.turnOnPs, cfg.turnOffPs, LinkPowerState::kOn, 0);
      ch.lpi = policies::LpiLink(cfg.lpi, 0);
    }
  }
  if (iqModel()) iqInit();
  // Up routing must know where a way down exists on a tree where not every
  // switch reaches every leaf (a root cabled to some pods only, a missing
  // cable): else a packet could climb to a switch with no way down.
  recomputeReach();
  const auto& leaves = topo.switchesAtLevel(topo.depth() - 1);
  for (SwitchId::rep_type sw = 0; sw < topo.numSwitches() && !irregularReach_; ++sw) {
    for (SwitchId leaf : leaves) {
      if (!reach_.reaches(SwitchId(sw), leaf)) {
        irregularReach_ = true;
        break;
      }
    }
  }
}

// The scheduler may outlive the emulator: its pending task must not run.
FabricEmulator::~FabricEmulator() {
  if (armed_.valid()) sched_.cancel(armed_);
}

std::uint32_t FabricEmulator::allocPacket() {
  if (freePackets_.empty()) {
    packets_.push_back({});
    return static_cast<std::uint32_t>(packets_.size() - 1);
  }
  const std::uint32_t p = freePackets_.back();
  freePackets_.pop_back();
  return p;
}

void FabricEmulator::push(std::uint32_t ch, std::uint32_t p) {
  Channel& c = channels_[ch];
  packets_[p].next = kNone;
  if (c.tail == kNone) {
    c.head = p;
  } else {
    packets_[c.tail].next = p;
  }
  c.tail = p;
  ++c.queued;
}

std::uint32_t FabricEmulator::pop(std::uint32_t ch) {
  Channel& c = channels_[ch];
  const std::uint32_t p = c.head;
  c.head = packets_[p].next;
  if (c.head == kNone) c.tail = kNone;
  --c.queued;
  return p;
}

void FabricEmulator::sendMessage(HostId src, HostId dst, std::int64_t bytes, std::uint32_t tag) {
  std::uint32_t m;
  if (freeMessages_.empty()) {
    messages_.push_back({});
    m = static_cast<std::uint32_t>(messages_.size() - 1);
  } else {
    m = freeMessages_.back();
    freeMessages_.pop_back();
  }
  const std::int64_t packets =
      std::max<std::int64_t>(1, (bytes + cfg_.packetBytes - 1) / cfg_.packetBytes);
  messages_[m] = {{tag, src, dst, bytes, sched_.now(), -1}, static_cast<std::uint32_t>(packets)};
  ++stats_.messagesSent;
  stats_.flitsSent += static_cast<std::uint64_t>(cfg_.messageFlits(bytes));
  if (sendCb_) sendCb_(src, dst, bytes);
  const std::uint32_t ch = index(topo_.host(src).link, Direction::kUp);
  std::int64_t left = std::max<std::int64_t>(bytes, 1);
  for (std::int64_t i = 0; i < packets; ++i) {
    const std::uint32_t p = allocPacket();
    const auto size = static_cast<std::uint32_t>(std::min(left, cfg_.packetBytes));
    left -= size;
    packets_[p] = {m, kNone, kNone, size, dst, 0};
    ++packetsLive_;
    if (channels_[ch].failed) {  // the host's only link is down
      post(sched_.now(), kDrop, p);
      continue;
    }
    push(ch, p);
    ++queuedAtHosts_;
  }
  if (iqModel()) {
    iqActivate(src);
    return;
  }
  tryStart(ch);
}

bool FabricEmulator::chUsable(std::uint32_t ch) {
  Channel& c = channels_[ch];
  return c.enabled && !c.failed && c.gate.state(sched_.now()) == LinkPowerState::kOn;
}

bool FabricEmulator::usable(LinkId link, Direction dir) {
  return chUsable(index(link, dir));
}

LinkPowerState FabricEmulator::directionState(LinkId link, Direction dir) {
  Channel& c = channels_[index(link, dir)];
  if (c.offPending) return LinkPowerState::kTurningOff;
  return c.gate.state(sched_.now());
}

// A direction that is draining before it turns off (offPending) still sends
// what it holds, once its gate is on.
bool FabricEmulator::chCanSend(std::uint32_t ch) {
  Channel& c = channels_[ch];
  return (c.enabled || c.offPending) && !c.failed &&
         c.gate.state(sched_.now()) == LinkPowerState::kOn;
}

void FabricEmulator::tryStart(std::uint32_t ch) {
  if (iqModel()) {  // the cycle tick moves flits: make sure it runs
    iqArm();
    return;
  }
  Channel& c = channels_[ch];
  if (c.busy || c.head == kNone || !chCanSend(ch)) return;
  const std::uint32_t p = c.head;
  Packet& pk = packets_[p];
  int vc = -1;
  for (std::size_t v = 0; v < c.credits.size(); ++v) {
    if (c.toHost || c.credits[v] >= pk.bytes) {
      vc = static_cast<int>(v);
      break;
    }
  }
  const TimePs now = sched_.now();
  if (vc < 0) {
    c.lpi.pin(now);  // data is waiting: the transmitter is not idle
    if (!c.waiting) {
      c.waiting = true;
      c.waitSince = now;
    }
    return;
  }
  if (c.waiting) {
    c.counters.creditWait += now - c.waitSince;
    c.waiting = false;
  }
  pop(ch);
  if (pk.inCh == kNone) --queuedAtHosts_;
  if (!c.toHost) c.credits[static_cast<std::size_t>(vc)] -= pk.bytes;
  const TimePs start = now + c.lpi.packetReady(now);
  const TimePs ser = cfg_.serializationPs(pk.bytes);
  c.busy = true;
  c.txPacket = p;
  c.txInCh = pk.inCh;
  c.txVc = pk.vc;
  c.txBytes = pk.bytes;
  c.counters.txBytes += cfg_.wireBytes(pk.bytes);
  c.counters.txPackets += 1;
  c.counters.busy += ser;
  ++stats_.packetHops;
  pk.vc = static_cast<std::uint8_t>(vc);
  pk.inCh = ch;
  pk.epoch = c.epoch;
  post(start + ser, kTxDone, ch, c.epoch);
  if (c.toHost) {
    post(start + ser + cfg_.linkLatencyPs, kDeliver, p);
  } else {
    const TimePs headArrives = start + cfg_.serializationPs(1) + cfg_.linkLatencyPs;
    post(headArrives + cfg_.routingDelayPs, kArrive, p, ch);
  }
}

void FabricEmulator::post(TimePs when, EventKind kind, std::uint32_t a, std::uint32_t b) {
  events_.push({std::max(when, sched_.now()), a, b, kind});
  if (!draining_) arm();
}

// Keeps exactly one scheduler task, at the time of the earliest network event.
void FabricEmulator::arm() {
  const TimePs next = events_.minTime();
  if (next >= armedAt_) return;
  if (armed_.valid()) sched_.cancel(armed_);
  armedAt_ = next;
  armed_ = sched_.at(next, agent::Phase::kNetwork, [this] { wake(); });
}

// Runs every network event due now, including those the events themselves (or
// callbacks into agents) schedule for now.
void FabricEmulator::wake() {
  armed_ = agent::TaskId();
  armedAt_ = EventQueue::kNever;
  const TimePs now = sched_.now();
  draining_ = true;
  while (!events_.empty() && events_.minTime() <= now) {
    ++stats_.events;
    dispatch(events_.pop());
  }
  draining_ = false;
  arm();
}

void FabricEmulator::dispatch(const NetEvent& e) {
  switch (e.kind) {
    case kTxDone:
      if (e.b == channels_[e.a].epoch) txDone(e.a);
      break;
    case kArrive:
      arrive(e.a, e.b);
      break;
    case kDeliver:
      deliver(e.a);
      break;
    case kCredit:
      // b packs the VC (top 8 bits) and the bytes freed (24 bits).
      channels_[e.a].credits[e.b >> 24] += e.b & 0xFFFFFF;
      tryStart(e.a);
      break;
    case kTurnedOn:
      if (e.b == channels_[e.a].epoch) turnedOn(e.a);
      break;
    case kTurnedOff:
      if (e.b == channels_[e.a].epoch &&
          channels_[e.a].gate.state(sched_.now()) == LinkPowerState::kOff && transitionCb_) {
        transitionCb_(LinkId(e.a / 2), static_cast<Direction>(e.a % 2), LinkPowerState::kOff);
      }
      break;
    case kDrop:
      lose(e.a);
      break;
    case kRecovered:
      if (e.b == channels_[e.a].epoch) recovered(e.a);
      break;
    case kIqTick:
      iqTick();
      break;
    case kIqIdle:
      iqIdle(e.a, e.b);
      break;
  }
}

void FabricEmulator::turnedOn(std::uint32_t ch) {
  iqRefresh(ch);
  Channel& c = channels_[ch];
  if (!chCanSend(ch)) return;
  c.lpi.resume(sched_.now());
  iqResumed(ch);
  // Turned off while turning on: it only drains what it holds, then goes off.
  if (c.offPending) {
    tryStart(ch);
    if (!c.busy && c.head == kNone) finishOff(ch);
    return;
  }
  if (usabilityCb_) usabilityCb_(LinkId(ch / 2), static_cast<Direction>(ch % 2), true);
  if (transitionCb_)
    transitionCb_(LinkId(ch / 2), static_cast<Direction>(ch % 2), LinkPowerState::kOn);
  tryStart(ch);
}

void FabricEmulator::txDone(std::uint32_t ch) {
  Channel& c = channels_[ch];
  const TimePs now = sched_.now();
  c.busy = false;
  c.lpi.transmissionEnded(now);
  // The packet's tail left the sender's input buffer: its credit goes back
  // upstream after one link latency.
  if (c.txInCh != kNone) {
    const std::uint32_t in = c.txInCh;
    const std::uint32_t vcBytes = (static_cast<std::uint32_t>(c.txVc) << 24) | c.txBytes;
    post(now + cfg_.linkLatencyPs, kCredit, in, vcBytes);
  }
  tryStart(ch);
  if (c.offPending && !c.busy && c.head == kNone) finishOff(ch);
}

void FabricEmulator::arrive(std::uint32_t p, std::uint32_t ch) {
  if (lostOnWire(p, ch)) return;
  const SwitchId sw = channels_[ch].receiver;
  const std::uint32_t out = routeHop(sw, ch, p);
  if (out == kNone || channels_[out].failed) {  // no way on: a switch drops it
    discard(p);
    return;
  }
  push(out, p);
  tryStart(out);
}

void FabricEmulator::deliver(std::uint32_t p) {
  // The input-queued model takes lost packets out of the network when the
  // failure happens (iqCut): what arrives was not lost.
  if (!iqModel() && lostOnWire(p, packets_[p].inCh)) return;
  const Packet& pk = packets_[p];
  if (pk.truncated) {
    lose(p);
    return;
  }
  Message& m = messages_[pk.msg];
  ++stats_.packetsDelivered;
  stats_.bytesDelivered += pk.bytes;
  stats_.flitsDelivered += static_cast<std::uint64_t>(cfg_.flitsOf(pk.bytes));
  --packetsLive_;
  const std::uint32_t msg = pk.msg;
  freePackets_.push_back(p);
  if (--m.remaining == 0 && m.lost) {
    freeMessages_.push_back(msg);  // reported by onDrop already
  } else if (m.remaining == 0) {
    m.info.delivered = sched_.now();
    ++stats_.messagesDelivered;
    // A copy: the callback may send (reusing this record or growing messages_).
    const Delivery info = m.info;
    freeMessages_.push_back(msg);
    if (deliveryCb_) deliveryCb_(info);
  }
}

TimePs FabricEmulator::setDirection(LinkId link, Direction dir, bool on) {
  const TimePs done = changeDirection(link, dir, on);
  iqRefresh(index(link, dir));
  return done;
}

TimePs FabricEmulator::changeDirection(LinkId link, Direction dir, bool on) {
  const std::uint32_t ch = index(link, dir);
  Channel& c = channels_[ch];
  const TimePs now = sched_.now();
  if (c.failed) {  // remembered for the repair; the direction stays unpowered
    c.enabled = on;
    return now;
  }
  if (!on) {
    if (!c.enabled)
      return c.offPending ? now + cfg_.turnOffPs : std::max(now, c.gate.transitionEnd());
    const bool wasUsable = chCanSend(ch);
    c.enabled = false;
    gatedReachDirty_ = true;
    if (wasUsable && usabilityCb_) usabilityCb_(link, dir, false);
    rerouteQueued(ch);
    // Lossless: what is being sent, or queued with nowhere else to go, goes
    // out first (after the direction finishes turning on, if it was); the
    // direction turns off once it holds nothing.
    if (c.busy || c.head != kNone) {
      c.offPending = true;
      return now + cfg_.turnOffPs;
    }
    applyOff(ch);
    return std::max(now, c.gate.transitionEnd());
  }
  gatedReachDirty_ = gatedReachDirty_ || !c.enabled;
  c.enabled = true;
  c.offPending = false;
  const TimePs ready = c.gate.request(true, now);
  if (ready <= now) {
    c.lpi.resume(now);
    iqResumed(ch);
    if (usabilityCb_) usabilityCb_(link, dir, true);
    tryStart(ch);
    return now;
  }
  post(ready, kTurnedOn, ch, c.epoch);
  return ready;
}

void FabricEmulator::initDirection(LinkId link, Direction dir, bool on) {
  Channel& c = channels_[index(link, dir)];
  const TimePs now = sched_.now();
  c.enabled = on;
  gatedReachDirty_ = true;
  c.gate = policies::GatedLink(cfg_.turnOnPs, cfg_.turnOffPs,
                               on ? LinkPowerState::kOn : LinkPowerState::kOff, now);
  c.lpi = policies::LpiLink(cfg_.lpi, now);
  if (!on) c.lpi.suspend(now);
  iqRefresh(index(link, dir));
}

void FabricEmulator::finishOff(std::uint32_t ch) {
  channels_[ch].offPending = false;
  applyOff(ch);
}

void FabricEmulator::applyOff(std::uint32_t ch) {
  Channel& c = channels_[ch];
  const TimePs now = sched_.now();
  c.lpi.suspend(now);
  post(c.gate.request(false, now), kTurnedOff, ch, c.epoch);
  iqRefresh(ch);
  // Input-queued: heads that chose it while it drained and hold no VC on it
  // yet choose again (routeHop), as the output-queued model's next arrivals do.
  if (iqModel() && routeAroundGated_) iqReroute(ch, false);
}

// Packets queued for an up link that went off ascend through another one.
// After a failure (`forFault`) what cannot is dropped, and so is what was
// queued on a failed down or host link (there is no other way down).
void FabricEmulator::rerouteQueued(std::uint32_t ch, bool forFault) {
  Channel& c = channels_[ch];
  const fabric::Link& l = topo_.link(LinkId(ch / 2));
  if (iqModel()) {  // switches queue in their input buffers; hosts queue here
    iqReroute(ch, forFault);
    while (forFault && c.head != kNone)
      discard(pop(ch));
    return;
  }
  if (c.head == kNone) return;
  const bool up = ch % 2 == static_cast<std::uint32_t>(Direction::kUp);
  // A host has one link; a down link has another way only beside parallel
  // cables or in an irregular tree, and under gating it drains.
  const bool otherWay = up ? !l.lowerIsHost : !c.toHost && forFault && downRoutes_.anyAlternates();
  if (!otherWay) {
    if (!forFault) return;
    while (c.head != kNone)
      discard(pop(ch));
    return;
  }
  std::vector<std::uint32_t> moved;
  while (c.head != kNone)
    moved.push_back(pop(ch));
  const SwitchId sender = up ? l.lower.sw : l.upper.sw;
  for (std::uint32_t p : moved) {
    const std::uint32_t out = route(sender, packets_[p].dst);
    if (out == kNone || channels_[out].failed) {  // faults left it no way on
      discard(p);
      continue;
    }
    if (forFault) {
      ++stats_.packetsRerouted;
      Message& m = messages_[packets_[p].msg];
      if (!m.rerouted) ++stats_.messagesRerouted;
      m.rerouted = true;
    }
    push(out, p);
    tryStart(out);
  }
}

std::string FabricEmulator::describeWaiting(std::size_t maxLines) {
  std::string out;
  std::size_t lines = 0, more = 0;
  for (std::uint32_t ch = 0; ch < channels_.size(); ++ch) {
    Channel& c = channels_[ch];
    // Input-queued: only hosts queue here, and a backlog behind the packet a
    // host is sending is what a slow drain leaves (docs/emulator.md).
    if (c.head == kNone || (c.busy && !iqModel())) continue;
    if (lines == maxLines) {
      ++more;
      continue;
    }
    const LinkPowerState st = c.gate.state(sched_.now());
    const char* why = c.busy                      ? "behind the packet being sent"
                      : c.offPending              ? "draining, then off"
                      : !c.enabled                ? "direction off"
                      : st != LinkPowerState::kOn ? "direction turning on"
                      : c.waiting                 ? "no credits downstream"
                                                  : "idle";
    out += fmt::format("{}{} packets wait on {} ({}): {}", out.empty() ? "" : "; ", c.queued,
                       topo_.describeLink(LinkId(ch / 2)),
                       ch % 2 == static_cast<std::uint32_t>(Direction::kUp) ? "up" : "down", why);
    ++lines;
  }
  if (more > 0) out += fmt::format("; and {} more directions", more);
  if (iqModel()) {
    const std::string inBuffers = iqDescribeWaiting(maxLines);
    if (!inBuffers.empty()) out += (out.empty() ? "" : "; ") + inBuffers;
  }
  if (!out.empty()) return out;
  // Nothing queued or buffered: what is left is on the links, being sent,
  // or in an output-queued switch's route stage.
  return packetsLive_ > 0 ? fmt::format(
                                "{} packets in flight on links or in a route stage, "
                                "none queued",
                                packetsLive_)
                          : "no packet waits in the network";
}

policies::LpiCounters FabricEmulator::lpiCounters(LinkId link, Direction dir) const {
  return channels_[index(link, dir)].lpi.counters();
}

policies::DirectionTimes FabricEmulator::directionTimes(LinkId link, Direction dir) {
  Channel& c = channels_[index(link, dir)];
  const TimePs now = sched_.now();
  policies::DirectionTimes t;
  policies::LpiLink lpi = c.lpi;
  lpi.finish(now);
  t.lpi = lpi.times();
  const auto& g = c.gate.times(now);
  const auto at = [&](LinkPowerState s) {
    const auto i = static_cast<std::size_t>(s);
    return g[i] + c.gateBefore[i];  // the gate is replaced at each failure
  };
  t.turningOn = at(LinkPowerState::kTurningOn);
  t.turningOff = at(LinkPowerState::kTurningOff);
  t.off = at(LinkPowerState::kOff);  // includes the time failed
  return t;
}

bool FabricEmulator::waitingWhileOff(LinkId link, Direction dir) const {
  const std::uint32_t ch = index(link, dir);
  const Channel& c = channels_[ch];
  if (c.enabled || c.offPending || c.failed) return false;
  return iqModel() ? iqPorts_[ch].owned > 0 : c.head != kNone;
}

TimePs FabricEmulator::creditWaitNow(LinkId link, Direction dir) const {
  const Channel& c = channels_[index(link, dir)];
  if (iqModel()) {
    const iq::Port& p = iqPorts_[index(link, dir)];
    return c.counters.creditWait +
           (p.blocked != 0 ? sched_.now() - p.blockedSince * cfg_.cyclePs : 0);
  }
  return c.counters.creditWait + (c.waiting ? sched_.now() - c.waitSince : 0);
}

}  // namespace ebb::sim
