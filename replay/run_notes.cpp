// What a valid run spec is known to do badly, said before the run
// (replay/run_spec.h, runNotes).
#include <fmt/format.h>

#include "replay/run_spec.h"

namespace ebb::replay {

std::vector<std::string> runNotes(const RunSpec& spec) {
  std::vector<std::string> notes;
  const sim::EmulatorConfig& em = spec.emulator;
  const bool deep =
      em.lpi.mode == policies::LpiMode::kDeepSleep || em.lpi.mode == policies::LpiMode::kHybrid;
  if (deep && em.vcBufferBytes < 4 * em.packetBytes) {
    notes.push_back(fmt::format(
        "low-power idle {} on VC buffers of {:g} packet(s): each hop pays a deep-sleep wake-up "
        "while packets back up behind it, and such a fabric congests even at light load "
        "(docs/emulator.md, \"Low-power idle and small buffers\"); the paper's setup gives "
        "emulator.vc_buffer_bytes at least 4 packets (configs/lpi_table6_hybrid.textproto)",
        em.lpi.mode == policies::LpiMode::kHybrid ? "HYBRID" : "DEEP_SLEEP",
        static_cast<double>(em.vcBufferBytes) / static_cast<double>(em.packetBytes)));
  }
  // Hybrid's fast-wake stage lasts the hold it starts from (docs/policies.md;
  // an adaptive hold does not move it): with none, an idle link goes
  // straight to deep sleep.
  if (em.lpi.mode == policies::LpiMode::kHybrid && em.lpi.hybridFastWake == 0) {
    notes.push_back(
        "lpi.mode HYBRID with lpi.hold_ts 0: its fast-wake stage lasts the hold it starts from "
        "(an adaptive hold does not move it), so an idle link goes straight to deep sleep and "
        "the run is the same as DEEP_SLEEP");
  }
  return notes;
}

}  // namespace ebb::replay
