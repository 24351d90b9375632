#include "sim_backend/emulator_config.h"

#include <fmt/format.h>

#include <utility>

namespace ebb::sim {

Status EmulatorConfig::validate() const {
  const auto bad = [](const char* field, const std::string& rule) {
    return Status(ErrorCode::kInvalidArgument, fmt::format("emulator.{}: {}", field, rule));
  };
  if (cyclePs <= 0) return bad("cycle_ps", "must be > 0");
  if (flitBytes <= 0) return bad("flit_bytes", "must be > 0");
  if (packetBytes <= 0 || packetBytes > 0xFFFFFF) {
    return bad("packet_bytes", fmt::format("must be in 1..16777215 (is {})", packetBytes));
  }
  if (vcs < 1 || vcs > 16) return bad("vcs", fmt::format("must be in 1..16 (is {})", vcs));
  if (switchModel == SwitchModel::kInputQueued) {
    // Flit level: buffers of whole flits (wormhole when smaller than a
    // packet), delays in whole cycles.
    if (vcBufferBytes < flitBytes) {
      return bad("vc_buffer_bytes",
                 fmt::format("{} cannot hold one flit of {} bytes", vcBufferBytes, flitBytes));
    }
    if (vcBufferBytes % flitBytes != 0) {
      return bad("vc_buffer_bytes",
                 fmt::format("{} is not a whole number of {}-byte flits (the input-queued model "
                             "buffers whole flits)",
                             vcBufferBytes, flitBytes));
    }
    if (linkLatencyPs % cyclePs != 0 || routingDelayPs % cyclePs != 0) {
      return bad("link_latency_ps", "the input-queued model counts whole cycles");
    }
    // The model holds every buffered flit and every cycle of wire delay in
    // memory, made when it starts.
    if (vcBufferBytes / flitBytes > kMaxIqBufferFlits) {
      return bad(
          "vc_buffer_bytes",
          fmt::format("{} is {} flits of {} bytes, more than the input-queued model's "
                      "{} flits per VC",
                      vcBufferBytes, vcBufferBytes / flitBytes, flitBytes, kMaxIqBufferFlits));
    }
    // A flit takes at least a cycle from one buffer to the next: with 0 the
    // model would round the stages up and miss its zero-load formula.
    if (linkLatencyPs < cyclePs) {
      return bad(
          "link_latency_cycles",
          fmt::format("must be >= 1 with the input-queued model (is {})", linkLatencyPs / cyclePs));
    }
    if (linkLatencyPs / cyclePs > kMaxIqLinkCycles) {
      return bad("link_latency_cycles",
                 fmt::format("{} is more than the input-queued model's {} cycles",
                             linkLatencyPs / cyclePs, kMaxIqLinkCycles));
    }
    const std::pair<const char*, std::int64_t> stages[] = {
        {"routing_delay_cycles", routingDelayPs / cyclePs},
        {"vc_alloc_cycles", vcAllocCycles},
        {"sw_alloc_cycles", swAllocCycles},
        {"crossbar_cycles", crossbarCycles},
        {"credit_cycles", creditCycles},
        {"injection_cycles", injectionCycles}};
    for (const auto& [field, v] : stages) {
      if (v < 0 || v > 1000) return bad(field, fmt::format("must be in 0..1000 (is {})", v));
    }
    if (speedup < 1 || speedup > 16) {
      return bad("speedup", fmt::format("must be in 1..16 (is {})", speedup));
    }
  } else if (vcBufferBytes < packetBytes) {
    return bad("vc_buffer_bytes",
               fmt::format("{} cannot hold one packet of {} bytes (virtual cut-through needs "
                           "vc_buffer_bytes >= packet_bytes)",
                           vcBufferBytes, packetBytes));
  }
  if (linkLatencyPs < 0) return bad("link_latency_ps", "must be >= 0");
  if (routingDelayPs < 0) return bad("routing_delay_ps", "must be >= 0");
  if (turnOnPs < 0) return bad("turn_on_ps", "must be >= 0");
  if (turnOffPs < 0) return bad("turn_off_ps", "must be >= 0");
  if (faultDetectionPs < 0) return bad("fault_detection_ps", "must be >= 0");
  return lpi.validate();
}

}  // namespace ebb::sim
