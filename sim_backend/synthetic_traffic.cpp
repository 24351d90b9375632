#include "sim_backend/synthetic_traffic.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "workload/arrival_gap.h"
#include "workload/hotspot.h"

namespace ebb::sim {

SyntheticTraffic::SyntheticTraffic(FabricEmulator& emu, workload::SyntheticSpec spec)
    : emu_(emu), spec_(std::move(spec)) {
  flitsPerMessage_ = static_cast<double>(emu.config().messageFlits(spec_.messageBytes));
  pMax_ = std::min(1.0, spec_.rate.max() / flitsPerMessage_);
  const std::size_t hosts = emu.topology().numHosts();
  rngs_.reserve(hosts);
  for (std::size_t h = 0; h < hosts; ++h) {
    // splitmix-style per-host seeds: streams independent of each other.
    std::uint64_t z = spec_.seed + 0x9E3779B97F4A7C15ULL * (h + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    rngs_.emplace_back(z ^ (z >> 31));
  }
  if (Result<std::vector<std::uint32_t>> hot =
          workload::resolveHotspot(spec_.hotspot, emu.topology(), spec_.seed)) {
    hot_ = std::move(*hot);
  }
}

std::uint32_t SyntheticTraffic::destination(std::uint32_t host, std::mt19937_64& rng) const {
  const auto hosts = static_cast<std::uint32_t>(rngs_.size());
  if (!hot_.empty()) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const bool sourceHot = std::binary_search(hot_.begin(), hot_.end(), host);
    const auto others = static_cast<std::uint32_t>(hot_.size()) - (sourceHot ? 1u : 0u);
    // Drawn only with hot spots, so uniform traffic keeps its exact stream.
    if (u(rng) < spec_.hotspot.fraction && others > 0) {
      std::uniform_int_distribution<std::uint32_t> pick(0, others - 1);
      std::uint32_t i = pick(rng);
      // Skip the source within the hot list.
      if (sourceHot && hot_[i] >= host) ++i;
      return hot_[i];
    }
  }
  if (spec_.includeSelf) return std::uniform_int_distribution<std::uint32_t>(0, hosts - 1)(rng);
  std::uniform_int_distribution<std::uint32_t> pick(0, hosts - 2);
  std::uint32_t dst = pick(rng);
  if (dst >= host) ++dst;  // any host but the source
  return dst;
}

TimePs SyntheticTraffic::gap(std::mt19937_64& rng) const {
  const TimePs cycle = emu_.config().cyclePs;
  if (spec_.arrivals == workload::Arrivals::kBernoulli)
    return workload::bernoulliGap(pMax_, cycle, rng);
  return workload::poissonGap(pMax_, cycle, rng);
}

void SyntheticTraffic::start() {
  if (pMax_ <= 0) return;
  const TimePs now = emu_.scheduler().now();
  for (std::uint32_t h = 0; h < rngs_.size(); ++h) {
    if (const auto first = workload::arrivalBefore(now, gap(rngs_[h]), spec_.rate.end()))
      emu_.scheduler().at(*first, agent::Phase::kNetwork, [this, h] { next(h); });
  }
}

void SyntheticTraffic::next(std::uint32_t host) {
  auto& rng = rngs_[host];
  const TimePs now = emu_.scheduler().now();
  if (now >= spec_.rate.end()) return;
  const double p = spec_.rate.at(now) / flitsPerMessage_;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  if (u(rng) * pMax_ < p) {
    const std::uint32_t dst = destination(host, rng);
    std::int64_t bytes = spec_.messageBytes;
    if (spec_.sizeMax > 0) {
      std::uniform_int_distribution<std::int64_t> size(spec_.sizeMin, spec_.sizeMax);
      bytes = size(rng);
    }
    emu_.sendMessage(fabric::HostId(host), fabric::HostId(dst), bytes);
    ++generated_;
    bytes_ += static_cast<std::uint64_t>(bytes);
  }
  if (const auto at = workload::arrivalBefore(now, gap(rng), spec_.rate.end()))
    emu_.scheduler().at(*at, agent::Phase::kNetwork, [this, host] { next(host); });
}

}  // namespace ebb::sim
