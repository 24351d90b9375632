#pragma once

#include <string>

#include "common/status.h"
#include "configs/proto/replay.pb.h"  // generated
#include "replay/jobs.h"

namespace ebb::replay {

// Motif jobs of a workload (docs/traffic.md, "Motifs"), for jobs.cpp.

// A motif job from its config, its parameters checked (E_INVALID names
// `field` and the rule) without generating the program.
Result<JobDef> jobFromMotif(const config::MotifSpec& m, const std::string& field);

// Draws jobs into `mix` until `fill.hosts` are taken: each job's size from
// the sizes that still fit (uniformly), its motif uniformly. At most
// kMaxFillJobs jobs (hosts / smallest size), refused before any is made.
inline constexpr std::uint32_t kMaxFillJobs = 1u << 16;
Status fillMix(const config::MixFillSpec& fill, config::JobMixSpec& mix);

}  // namespace ebb::replay
