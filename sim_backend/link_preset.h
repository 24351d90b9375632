#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/time.h"
#include "sim_backend/emulator_config.h"

namespace ebb::sim {

// A link of real hardware, or the paper's units (docs/emulator.md, "Link
// presets"). A preset sets the link rate (one flit per cycle: cycle_ps is the
// time of one flit at the data rate), the flit and packet (MTU) sizes and the
// low-power-idle wake-up times together, so a 100G wake-up time is never
// paired with a 32 Gb/s link by accident.
struct LinkPreset {
  const char* name;          // as in the config: "IB_HDR_4K"
  int lanes;                 // 0: not a physical link (the paper's units)
  double laneGbps;           // data rate per lane, after line coding
  std::int64_t flitBytes;    // the flow-control unit: an InfiniBand credit is 64 bytes
  TimePs cyclePs;            // flitBytes at lanes x laneGbps
  std::int64_t packetBytes;  // the MTU
  const char* lpiSpeed;      // the Table I row (seed 004) whose wake-up times apply
  const char* source;        // where the numbers come from, for docs and `ebb replay --help`
};

std::span<const LinkPreset> linkPresets();
// nullptr when no preset has this name.
const LinkPreset* findLinkPreset(std::string_view name);
// Link rate, flit, MTU, a VC buffer of one MTU (the least virtual cut-through
// needs) and the wake-up times of the preset's Table I row.
void applyLinkPreset(const LinkPreset& preset, EmulatorConfig& cfg);

}  // namespace ebb::sim
