// Link, direction and switch failures of the emulator (docs/emulator.md,
// "Faults"): the FabricEmulator members that cut a direction, evacuate what
// it held, account lost packets, and bring a repaired direction back.
#include "sim_backend/fabric_emulator.h"

namespace ebb::sim {

using fabric::Direction;
using fabric::LinkId;
using fabric::SwitchId;
using policies::LinkPowerState;

void FabricEmulator::failLink(LinkId link) {
  channels_[index(link, Direction::kUp)].fault = true;
  channels_[index(link, Direction::kDown)].fault = true;
  applyFaults({link});
}

void FabricEmulator::repairLink(LinkId link) {
  channels_[index(link, Direction::kUp)].fault = false;
  channels_[index(link, Direction::kDown)].fault = false;
  applyFaults({link});
}

void FabricEmulator::failDirection(LinkId link, Direction dir) {
  channels_[index(link, dir)].fault = true;
  applyFaults({link});
}

void FabricEmulator::repairDirection(LinkId link, Direction dir) {
  channels_[index(link, dir)].fault = false;
  applyFaults({link});
}

namespace {
std::vector<LinkId> linksOf(const fabric::Switch& s) {
  std::vector<LinkId> links;
  for (const fabric::Port& p : s.ports) {
    if (p.role != fabric::PortRole::kUnused) links.push_back(p.link);
  }
  return links;
}
}  // namespace

void FabricEmulator::failSwitch(SwitchId sw) {
  switchFault_[sw.value()] = 1;
  applyFaults(linksOf(topo_.sw(sw)));
}

void FabricEmulator::repairSwitch(SwitchId sw) {
  switchFault_[sw.value()] = 0;
  applyFaults(linksOf(topo_.sw(sw)));
}

std::uint8_t FabricEmulator::directionsDown(LinkId link) const {
  std::uint8_t down = 0;
  for (Direction d : {Direction::kUp, Direction::kDown}) {
    const Channel& c = channels_[index(link, d)];
    if (c.failed || c.recovering)
      down = static_cast<std::uint8_t>(down | 1u << static_cast<unsigned>(d));
  }
  return down;
}

TimePs FabricEmulator::failedTime(LinkId link, Direction dir) {
  const Channel& c = channels_[index(link, dir)];
  return c.failedTotal + (c.failed ? sched_.now() - c.failedSince : 0);
}

bool FabricEmulator::shouldFail(std::uint32_t ch) const {
  const fabric::Link& l = topo_.link(LinkId(ch / 2));
  return channels_[ch].fault || switchFault_[l.upper.sw.value()] != 0 ||
         (!l.lowerIsHost && switchFault_[l.lower.sw.value()] != 0);
}

// Brings the effective state of every direction of `links` in line with the
// faults: first every newly failed direction is cut (so none of them is a
// reroute target), then the routes are recomputed, then what the cut
// directions held is rerouted or dropped, and repaired directions restart.
void FabricEmulator::applyFaults(const std::vector<LinkId>& links) {
  std::vector<std::uint8_t> wasDown;
  wasDown.reserve(links.size());
  for (LinkId l : links)
    wasDown.push_back(directionsDown(l));
  std::vector<std::uint32_t> cutNow, healedNow;
  for (LinkId l : links) {
    for (Direction d : {Direction::kUp, Direction::kDown}) {
      const std::uint32_t ch = index(l, d);
      const bool fail = shouldFail(ch);
      if (fail && !channels_[ch].failed) {
        cut(ch);
        cutNow.push_back(ch);
      } else if (!fail && channels_[ch].failed) {
        channels_[ch].failed = false;
        --failedDirections_;
        healedNow.push_back(ch);
      }
    }
  }
  if (cutNow.empty() && healedNow.empty()) return;
  recomputeReach();
  for (std::uint32_t ch : cutNow)
    rerouteQueued(ch, true);
  for (std::uint32_t ch : healedNow)
    heal(ch);
  for (std::size_t i = 0; i < links.size(); ++i) {
    const std::uint8_t now = directionsDown(links[i]);
    if ((now & ~wasDown[i]) != 0 && linkFaultCb_) linkFaultCb_(links[i], false);
  }
}

// The direction stops at once: the packet being sent is lost (its arrival
// event finds a new epoch, or, if the receiver already forwards its head, it
// arrives truncated), pending gating transitions are void, and from now on it
// is unpowered (a fresh gate, off; the old gate's times are kept).
void FabricEmulator::cut(std::uint32_t ch) {
  Channel& c = channels_[ch];
  const TimePs now = sched_.now();
  const bool wasUsable = chUsable(ch);
  c.failed = true;
  ++failedDirections_;
  c.recovering = false;
  c.offPending = false;
  ++c.epoch;
  c.failedSince = now;
  if (c.waiting) {
    c.counters.creditWait += now - c.waitSince;
    c.waiting = false;
  }
  if (iqModel()) {
    iqCut(ch);
  } else if (c.busy) {
    packets_[c.txPacket].truncated = true;
    c.busy = false;
    c.lpi.transmissionEnded(now);
    // The rest of the packet will not be read: its sender's buffer frees.
    if (c.txInCh != kNone) returnCredit(c.txInCh, c.txVc, c.txBytes);
  }
  c.lpi.suspend(now);
  const policies::GatingTimes& g = c.gate.times(now);
  for (std::size_t i = 0; i < g.size(); ++i)
    c.gateBefore[i] += g[i];
  c.gate = policies::GatedLink(cfg_.turnOnPs, cfg_.turnOffPs, LinkPowerState::kOff, now);
  iqRefresh(ch);
  if (wasUsable && usabilityCb_)
    usabilityCb_(LinkId(ch / 2), static_cast<Direction>(ch % 2), false);
}

// Repaired: the link retrains for T_on (kRecovered); a direction gating wants
// on turns on over that time, like any turn-on (powered, usable at the end).
void FabricEmulator::heal(std::uint32_t ch) {
  Channel& c = channels_[ch];
  const TimePs now = sched_.now();
  c.failedTotal += now - c.failedSince;
  c.recovering = true;
  if (c.enabled) post(c.gate.request(true, now), kTurnedOn, ch, c.epoch);
  post(now + cfg_.turnOnPs, kRecovered, ch, c.epoch);
}

void FabricEmulator::recovered(std::uint32_t ch) {
  channels_[ch].recovering = false;
  // Once per repair: a link repaired whole reports when both directions are back.
  const LinkId link(ch / 2);
  const bool stillRecovering = channels_[index(link, Direction::kUp)].recovering ||
                               channels_[index(link, Direction::kDown)].recovering;
  if (!stillRecovering && linkFaultCb_) linkFaultCb_(link, true);
}

void FabricEmulator::recomputeReach() {
  reach_.recompute([this](LinkId l, Direction d) { return channels_[index(l, d)].failed; });
  gatedReachDirty_ = true;
}

void FabricEmulator::returnCredit(std::uint32_t ch, std::uint8_t vc, std::uint32_t bytes) {
  post(sched_.now() + cfg_.linkLatencyPs, kCredit, ch,
       (static_cast<std::uint32_t>(vc) << 24) | bytes);
}

void FabricEmulator::discard(std::uint32_t p) {
  const Packet& pk = packets_[p];
  if (pk.inCh == kNone) {
    --queuedAtHosts_;
  } else {
    returnCredit(pk.inCh, pk.vc, pk.bytes);
  }
  post(sched_.now(), kDrop, p);
}

bool FabricEmulator::loseFromWire(std::uint32_t p, std::uint32_t ch) {
  const Packet& pk = packets_[p];
  Channel& c = channels_[ch];
  // It never reached the receiver's buffer: its credit is free again.
  if (!c.toHost) c.credits[pk.vc] += pk.bytes;
  lose(p);
  return true;
}

void FabricEmulator::lose(std::uint32_t p) {
  const std::uint32_t msg = packets_[p].msg;
  const bool gated = packets_[p].gatedDrop;
  ++stats_.packetsDropped;
  if (gated) ++stats_.packetsDroppedGated;
  --packetsLive_;
  freePackets_.push_back(p);
  Message& m = messages_[msg];
  const bool first = !m.lost;
  m.lost = true;
  if (first) m.lostToGating = gated;
  // A copy: the callback may send (reusing this record or growing messages_).
  const Drop info{m.info, sched_.now(), m.lostToGating};
  if (first) ++stats_.messagesDropped;
  if (first && gated) ++stats_.messagesDroppedGated;
  if (--m.remaining == 0) freeMessages_.push_back(msg);
  if (first && dropCb_) dropCb_(info);
}

}  // namespace ebb::sim
