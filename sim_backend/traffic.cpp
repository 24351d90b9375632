#include "sim_backend/traffic.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ebb::sim {

RateProfile RateProfile::alonsoRamp(TimePs cyclePs, double scale, double low, double high) {
  const auto c = [&](double cycles) { return static_cast<TimePs>(cycles * scale) * cyclePs; };
  return RateProfile(
      {{0, low}, {c(60'000), low}, {c(180'000), high}, {c(300'000), high}, {c(420'000), low}});
}

double RateProfile::at(TimePs t) const {
  if (points_.empty() || t >= points_.back().first) return 0.0;
  if (t <= points_.front().first) return points_.front().second;
  const auto it = std::upper_bound(points_.begin(), points_.end(), t,
                                   [](TimePs x, const auto& p) { return x < p.first; });
  const auto& [t1, r1] = *it;
  const auto& [t0, r0] = *(it - 1);
  if (t1 == t0) return r1;
  return r0 + (r1 - r0) * static_cast<double>(t - t0) / static_cast<double>(t1 - t0);
}

double RateProfile::max() const {
  double m = 0;
  for (const auto& p : points_)
    m = std::max(m, p.second);
  return m;
}

bool RateProfile::rising(TimePs t) const {
  // Rising until the first time the peak is reached.
  for (const auto& [pt, r] : points_) {
    if (r >= max()) return t < pt;
  }
  return true;
}

Status RateProfile::validate() const {
  for (std::size_t i = 0; i < points_.size(); ++i) {
    if (points_[i].second < 0 || !std::isfinite(points_[i].second)) {
      return {ErrorCode::kInvalidArgument,
              fmt::format("traffic rate point {}: the rate {} must be >= 0", i, points_[i].second)};
    }
    if (i > 0 && points_[i].first < points_[i - 1].first) {
      return {ErrorCode::kInvalidArgument,
              fmt::format("traffic rate point {}: times must ascend", i)};
    }
  }
  return Status::ok();
}

SyntheticTraffic::SyntheticTraffic(FabricEmulator& emu, SyntheticSpec spec)
    : emu_(emu), spec_(std::move(spec)) {
  const double flitsPerMessage =
      static_cast<double>(spec_.messageBytes) / static_cast<double>(emu.config().flitBytes);
  pMax_ = std::min(1.0, spec_.rate.max() / flitsPerMessage);
  const std::size_t hosts = emu.topology().numHosts();
  rngs_.reserve(hosts);
  for (std::size_t h = 0; h < hosts; ++h) {
    // splitmix-style per-host seeds: streams independent of each other.
    std::uint64_t z = spec_.seed + 0x9E3779B97F4A7C15ULL * (h + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    rngs_.emplace_back(z ^ (z >> 31));
  }
}

TimePs SyntheticTraffic::gap(std::mt19937_64& rng) const {
  const TimePs cycle = emu_.config().cyclePs;
  if (spec_.arrivals == Arrivals::kBernoulli) {
    if (pMax_ >= 1.0) return cycle;
    std::geometric_distribution<std::int64_t> g(pMax_);
    return (g(rng) + 1) * cycle;
  }
  std::exponential_distribution<double> e(pMax_);
  return std::max<TimePs>(1, static_cast<TimePs>(e(rng) * static_cast<double>(cycle)));
}

void SyntheticTraffic::start() {
  if (pMax_ <= 0) return;
  for (std::uint32_t h = 0; h < rngs_.size(); ++h) {
    const TimePs first = emu_.scheduler().now() + gap(rngs_[h]);
    emu_.scheduler().at(first, agent::Phase::kNetwork, [this, h] { next(h); });
  }
}

void SyntheticTraffic::next(std::uint32_t host) {
  auto& rng = rngs_[host];
  const TimePs now = emu_.scheduler().now();
  if (now >= spec_.rate.end()) return;
  const double flitsPerMessage =
      static_cast<double>(spec_.messageBytes) / static_cast<double>(emu_.config().flitBytes);
  const double p = spec_.rate.at(now) / flitsPerMessage;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  if (u(rng) * pMax_ < p) {
    const auto hosts = static_cast<std::uint32_t>(rngs_.size());
    std::uniform_int_distribution<std::uint32_t> pick(0, hosts - 2);
    std::uint32_t dst = pick(rng);
    if (dst >= host) ++dst;  // any host but the source
    std::int64_t bytes = spec_.messageBytes;
    if (spec_.sizeMax > 0) {
      std::uniform_int_distribution<std::int64_t> size(spec_.sizeMin, spec_.sizeMax);
      bytes = size(rng);
    }
    emu_.sendMessage(fabric::HostId(host), fabric::HostId(dst), bytes);
    ++generated_;
    bytes_ += static_cast<std::uint64_t>(bytes);
  }
  emu_.scheduler().at(now + gap(rng), agent::Phase::kNetwork, [this, host] { next(host); });
}

}  // namespace ebb::sim
