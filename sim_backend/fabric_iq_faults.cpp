// Failures on the input-queued model (docs/emulator.md, "Faults"): a cut
// direction loses the packets crossing it, whole, and a switch with no way on
// for a packet discards its flits as they come.
#include <algorithm>

#include "sim_backend/fabric_emulator.h"

namespace ebb::sim {

using fabric::Direction;
using iq::kHostOwner;

// Direction `ch` failed. A packet crossing it is lost whole: the part past
// the cut could never get its tail (a wormhole packet would hold its VCs for
// ever), the part before it has nowhere to go. Crossing: a flit of it on the
// wire, or it holds one of the direction's output VCs.
void FabricEmulator::iqCut(std::uint32_t ch) {
  std::vector<std::uint32_t> lost;
  for (const auto& due : iqFlitWheel_) {
    for (const iq::WireFlit& f : due) {
      if (f.slot >> iqShift_ == ch) lost.push_back(f.flit.packet());
    }
  }
  const fabric::Link& l = topo_.link(fabric::LinkId(ch / 2));
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  for (std::uint32_t v = 0; v < vcs; ++v) {
    const std::uint32_t owner = iqOut_[iqSlot(ch, v)].owner;
    if (owner == kHostOwner) {
      lost.push_back(iqSources_[l.host.value()].packet);
    } else if (owner != iq::kNone) {
      lost.push_back(iqIn_[owner].packet);
    }
  }
  iqKill(std::move(lost));
}

// Takes every flit of the `lost` packets out of the network: from their
// sources, the wires (the credit goes straight back: the flit never reached
// the buffer) and the input buffers (each freed slot credits its sender as
// a forwarded flit does); the VCs they hold are released, and each packet
// is counted lost (a kDrop event, now). Faults are rare: this scans it all.
void FabricEmulator::iqKill(std::vector<std::uint32_t> lost) {
  std::sort(lost.begin(), lost.end());
  lost.erase(std::unique(lost.begin(), lost.end()), lost.end());
  if (lost.empty()) return;
  const auto isLost = [&](std::uint32_t p) {
    return std::binary_search(lost.begin(), lost.end(), p);
  };
  for (std::uint32_t h = 0; h < iqSources_.size(); ++h) {
    iq::Source& s = iqSources_[h];
    if (s.packet == iq::kNone || !isLost(s.packet)) continue;
    iqReleaseVc(index(topo_.host(fabric::HostId(h)).link, Direction::kUp), s.vc);
    s.packet = iq::kNone;
  }
  for (auto& due : iqFlitWheel_) {
    const auto gone = std::remove_if(due.begin(), due.end(), [&](const iq::WireFlit& f) {
      if (!isLost(f.flit.packet())) return false;
      ++iqOut_[f.slot].credits;
      return true;
    });
    iqOnWire_ -= static_cast<std::uint64_t>(due.end() - gone);
    due.erase(gone, due.end());
  }
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  std::vector<iq::Flit> kept;
  for (std::uint32_t sw = 0; sw < iqSwitches_.size(); ++sw) {
    const iq::SwitchPorts& ports = iqSwitches_[sw];
    for (std::uint32_t i = ports.first; i < ports.first + ports.inputs; ++i) {
      for (std::uint32_t v = 0; v < vcs; ++v) {
        const std::uint32_t slot = iqSlot(iqInputs_[i], v);
        iq::InputVc& in = iqIn_[slot];
        const bool current = in.state != iq::InputVc::kIdle && isLost(in.packet);
        if (in.count == 0 && !current) continue;
        iq::Flit* ring = &iqFlits_[static_cast<std::size_t>(slot) * iqCap_];
        kept.clear();
        for (std::uint32_t k = 0, at = in.first; k < in.count; ++k) {
          if (!isLost(ring[at].packet())) kept.push_back(ring[at]);
          at = at + 1 == iqCap_ ? 0 : at + 1;
        }
        const auto removed = static_cast<std::uint32_t>(in.count - kept.size());
        for (std::uint32_t k = 0; k < removed; ++k)
          iqCredit(iqCycle_ + iqDelay_.credit, slot);
        iqBuffered_.remove(sw, removed);
        std::copy(kept.begin(), kept.end(), ring);
        in.first = 0;
        in.count = static_cast<std::uint32_t>(kept.size());
        if (!current) continue;
        if (in.state == iq::InputVc::kActive) {
          iq::Port& ip = iqPorts_[slot >> iqShift_];
          if (ip.heldIn == slot) {
            ip.heldIn = iq::kNone;
            iqPorts_[in.out].heldOut = iq::kNone;
          }
          iqReleaseVc(in.out, in.outVc);
        }
        iqNextPacket(slot);
      }
    }
  }
  for (std::uint32_t i = 0; i < iqInputs_.size(); ++i) {
    const iq::InputMasks m = iqMasksOf(iqInputs_[i]);
    iqStages_.assign(i, Stages::kRouting, m.routing);
    iqStages_.assign(i, Stages::kVcAlloc, m.vcAlloc);
    iqStages_.assign(i, Stages::kReady, m.ready);
  }
  // Credit waits: a VC whose waiting flits left waits no more.
  for (std::uint32_t slot = 0; slot < iqOut_.size(); ++slot) {
    const iq::OutputVc& o = iqOut_[slot];
    const bool waits = o.credits == 0 && ((o.owner < kHostOwner && iqIn_[o.owner].count > 0) ||
                                          (o.owner == kHostOwner));
    if (waits) {
      iqBlock(slot);
    } else {
      iqUnblock(slot);
    }
  }
  for (std::uint32_t p : lost)
    post(sched_.now(), kDrop, p);
  iqArm();
}

// The packet at the front of `slot` has no way on: its flits leave the
// buffer as they come (credits go back as for forwarded flits), and at its
// tail it is counted lost and the VC takes the next packet.
void FabricEmulator::iqSink(std::uint32_t sw, std::uint32_t slot) {
  iq::InputVc& in = iqIn_[slot];
  while (in.count > 0) {
    const iq::Flit f = iqFlits_[static_cast<std::size_t>(slot) * iqCap_ + in.first];
    in.first = in.first + 1 == iqCap_ ? 0 : in.first + 1;
    --in.count;
    iqBuffered_.remove(sw);
    iqCredit(iqCycle_ + iqDelay_.credit, slot);
    if (!f.tail()) continue;
    post(sched_.now(), kDrop, f.packet());
    iqStages_.clear(iqInputOf(slot), Stages::kRouting, iqBit(slot));
    iqNextPacket(slot);
    return;
  }
}

}  // namespace ebb::sim
