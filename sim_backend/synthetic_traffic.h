#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "sim_backend/fabric_emulator.h"
#include "workload/rate_profile.h"

namespace ebb::sim {

// Uniform traffic (any host but the source) at a time-varying rate. Bernoulli:
// one trial per cycle with probability rate / the flits a message occupies
// on a link (EmulatorConfig::messageFlits);
// Poisson: exponential gaps with that mean. Both by thinning at the peak rate,
// so the per-host streams are exact and seeded per host. With hot spots
// (spec.hotspot), that share of the messages go to a hot host instead; the
// hot hosts are resolved here with workload::resolveHotspot, which a caller
// runs first to report a bad name (an unresolvable hot spot sends uniformly).
class SyntheticTraffic {
 public:
  SyntheticTraffic(FabricEmulator& emu, workload::SyntheticSpec spec);
  void start();  // schedules the first arrival of every host
  std::uint64_t generated() const { return generated_; }
  std::uint64_t bytesGenerated() const { return bytes_; }
  const std::vector<std::uint32_t>& hotHosts() const { return hot_; }

 private:
  void next(std::uint32_t host);
  std::uint32_t destination(std::uint32_t host, std::mt19937_64& rng) const;
  TimePs gap(std::mt19937_64& rng) const;

  FabricEmulator& emu_;
  workload::SyntheticSpec spec_;
  double flitsPerMessage_ = 1;  // on a link (EmulatorConfig::messageFlits)
  double pMax_ = 0;             // candidate probability per cycle at the peak rate
  std::vector<std::mt19937_64> rngs_;
  std::vector<std::uint32_t> hot_;  // hot hosts, ascending; empty: none
  std::uint64_t generated_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace ebb::sim
