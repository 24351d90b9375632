#include "workload/hotspot.h"

#include <algorithm>
#include <numeric>
#include <random>

#include <fmt/format.h>

namespace ebb::workload {

Result<std::vector<std::uint32_t>> resolveHotspot(const Hotspot& spot, const fabric::Topology& topo,
                                                  std::uint64_t seed) {
  std::vector<std::uint32_t> hot;
  if (!spot.enabled()) return hot;
  const std::size_t hosts = topo.numHosts();
  if (!spot.hostNames.empty()) {
    for (std::size_t i = 0; i < spot.hostNames.size(); ++i) {
      const std::optional<fabric::HostId> h = topo.findHost(spot.hostNames[i]);
      if (!h) {
        return Status(ErrorCode::kInvalidArgument,
                      fmt::format("workload.hotspot.host[{}]: no host named '{}' in the fabric", i,
                                  spot.hostNames[i]));
      }
      if (std::find(hot.begin(), hot.end(), h->value()) != hot.end()) {
        return Status(
            ErrorCode::kInvalidArgument,
            fmt::format("workload.hotspot.host[{}]: '{}' is named twice", i, spot.hostNames[i]));
      }
      hot.push_back(h->value());
    }
  } else {
    if (spot.count == 0 || spot.count >= hosts) {
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("workload.hotspot.hosts: must be in 1..{} (the fabric has {} "
                                "hosts; is {})",
                                hosts > 0 ? hosts - 1 : 0, hosts, spot.count));
    }
    // A seeded partial shuffle: the first `count` of a random permutation.
    std::vector<std::uint32_t> all(hosts);
    std::iota(all.begin(), all.end(), 0u);
    std::mt19937_64 rng(seed ^ 0x486F7453706F7473ULL);  // "HotSpots"
    for (std::uint32_t i = 0; i < spot.count; ++i) {
      std::uniform_int_distribution<std::size_t> pick(i, hosts - 1);
      std::swap(all[i], all[pick(rng)]);
    }
    hot.assign(all.begin(), all.begin() + spot.count);
  }
  std::sort(hot.begin(), hot.end());
  return hot;
}

}  // namespace ebb::workload
