// The input-queued model's self-checks and descriptions (docs/emulator.md,
// "Switch models"): credit conservation and stage masks derived from the
// input VCs' states, and what waits in the buffers.
#include <fmt/format.h>

#include "common/plural.h"
#include "sim_backend/fabric_emulator.h"

namespace ebb::sim {

using fabric::Direction;
using fabric::LinkId;

Status FabricEmulator::checkCredits() const {
  if (!iqModel()) return Status::ok();
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  std::vector<std::int64_t> held(iqOut_.size(), 0);  // per slot: credits, flits, items
  for (std::size_t slot = 0; slot < iqOut_.size(); ++slot)
    held[slot] = iqOut_[slot].credits + static_cast<std::int64_t>(iqIn_[slot].count);
  for (const auto& due : iqFlitWheel_) {
    for (const iq::WireFlit& f : due)
      ++held[f.slot];
  }
  for (const auto& due : iqCreditWheel_) {
    for (std::uint32_t slot : due)
      ++held[slot];
  }
  for (std::uint32_t ch = 0; ch < channels_.size(); ++ch) {
    const iq::InputMasks masks = iqMasksOf(ch);  // what the stage masks must be
    for (std::uint32_t v = 0; v < vcs; ++v) {
      if (held[iqSlot(ch, v)] != iqCap_) {
        return {ErrorCode::kInternal,
                fmt::format("credits of {} ({}) VC {}: {} flits and credits, buffer {}",
                            topo_.describeLink(LinkId(ch / 2)),
                            ch % 2 == static_cast<std::uint32_t>(Direction::kUp) ? "up" : "down", v,
                            held[iqSlot(ch, v)], iqCap_)};
      }
    }
    const std::uint32_t input = iqPorts_[ch].input;
    const iq::InputMasks kept = input == iq::kNone
                                    ? masks
                                    : iq::InputMasks{iqStages_.get(input, Stages::kRouting),
                                                     iqStages_.get(input, Stages::kVcAlloc),
                                                     iqStages_.get(input, Stages::kReady)};
    if (kept.routing != masks.routing || kept.vcAlloc != masks.vcAlloc ||
        kept.ready != masks.ready) {
      return {ErrorCode::kInternal,
              fmt::format("{} ({}) keeps VC masks {:#x}/{:#x}/{:#x} (routing/VC allocation/ready), "
                          "its VCs are in {:#x}/{:#x}/{:#x}",
                          topo_.describeLink(LinkId(ch / 2)),
                          ch % 2 == static_cast<std::uint32_t>(Direction::kUp) ? "up" : "down",
                          kept.routing, kept.vcAlloc, kept.ready, masks.routing, masks.vcAlloc,
                          masks.ready)};
    }
  }
  return Status::ok();
}

iq::InputMasks FabricEmulator::iqMasksOf(std::uint32_t ch) const {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  iq::InputMasks masks;
  for (std::uint32_t v = 0; v < vcs; ++v) {
    const iq::InputVc& in = iqIn_[iqSlot(ch, v)];
    const auto bit = static_cast<std::uint16_t>(1u << v);
    if (in.state == iq::InputVc::kRouting || in.state == iq::InputVc::kSink) masks.routing |= bit;
    if (in.state == iq::InputVc::kVcAlloc) masks.vcAlloc |= bit;
    if (in.state == iq::InputVc::kActive && in.count > 0 &&
        iqOut_[iqSlot(in.out, in.outVc)].credits > 0)
      masks.ready |= bit;
  }
  return masks;
}

// Why the routed packet at the front of `in` does not move on its output
// (empty: nothing holds it). A transmitter still waking from low-power idle
// says so: a wormhole chain behind it reads "no credits downstream" at every
// hop, and only its front names the wake-up it waits for.
std::string FabricEmulator::iqOutputHold(const iq::InputVc& in) const {
  const Channel& o = channels_[in.out];
  if (o.failed) return ", failed";
  if (o.offPending) return ", draining, then off";
  if (!o.enabled) return ", direction off";
  if (iqPorts_[in.out].sendable == 0) return ", turning on";
  if (in.state == iq::InputVc::kVcAlloc) return "";
  if (iqOut_[iqSlot(in.out, in.outVc)].credits == 0) return ", no credits downstream";
  const TimePs wake = iqPorts_[in.out].wakeAt - sched_.now();
  if (wake > 0) return fmt::format(", waking from low-power idle ({} ns more)", wake / 1000);
  return "";
}

// What the buffered flits wait for, per input VC holding any (the first
// `maxLines`, in channel order), as the output-queued description names the
// directions packets wait on: the stage of the packet at the front and, once
// routed, its way on and why it does not move.
std::string FabricEmulator::iqDescribeWaiting(std::size_t maxLines) const {
  const auto vcs = static_cast<std::uint32_t>(cfg_.vcs);
  const auto dirOf = [](std::uint32_t ch) {
    return ch % 2 == static_cast<std::uint32_t>(Direction::kUp) ? "up" : "down";
  };
  std::uint64_t flits = 0, switches = 0;
  for (std::uint32_t sw = 0; sw < iqSwitches_.size(); ++sw) {
    flits += iqBuffered_.of(sw);
    switches += iqBuffered_.of(sw) > 0 ? 1u : 0u;
  }
  if (flits == 0) return {};
  std::string out =
      fmt::format("{} wait in the input buffers of {}", counted(flits, "flit", "flits"),
                  counted(switches, "switch", "switches"));
  std::size_t lines = 0;
  for (std::uint32_t ch = 0; ch < channels_.size() && lines < maxLines; ++ch) {
    if (iqPorts_[ch].receiver == iq::kNone) continue;
    for (std::uint32_t v = 0; v < vcs && lines < maxLines; ++v) {
      const iq::InputVc& in = iqIn_[iqSlot(ch, v)];
      if (in.count == 0) continue;
      std::string why;
      if (in.state == iq::InputVc::kRouting || in.state == iq::InputVc::kIdle) {
        why = "in the route stage";
      } else if (in.state == iq::InputVc::kSink) {
        why = "discarded (no way on)";
      } else {
        const std::string way =
            fmt::format("{} ({})", topo_.describeLink(LinkId(in.out / 2)), dirOf(in.out));
        why = fmt::format("{} {}{}",
                          in.state == iq::InputVc::kVcAlloc ? "waiting for a VC on" : "bound for",
                          way, iqOutputHold(in));
      }
      out += fmt::format("; {} of {} ({}) VC {}: {}", in.count, topo_.describeLink(LinkId(ch / 2)),
                         dirOf(ch), v, why);
      ++lines;
    }
  }
  return out;
}

}  // namespace ebb::sim
