#include "workload/traffic_gen.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <random>

#include <fmt/format.h>

#include "workload/arrival_gap.h"

namespace ebb::workload {

Status GenSpec::validate() const {
  const auto bad = [](const std::string& m) { return Status(ErrorCode::kInvalidArgument, m); };
  if (hosts < 2) return bad(fmt::format("hosts: need at least 2 (have {})", hosts));
  // Each rule names its option and the value given ("(is N)"), as every check.
  if (messageBytes <= 0)
    return bad(fmt::format("--message-bytes: must be > 0 (is {})", messageBytes));
  if (cyclePs <= 0) return bad(fmt::format("--cycle-ps: must be > 0 (is {})", cyclePs));
  if (flitBytes <= 0) return bad(fmt::format("--flit-bytes: must be > 0 (is {})", flitBytes));
  if (Status s = rate.validate(); !s.isOk()) return s;
  if (hotspotHost >= hosts) {
    return bad(fmt::format("--hotspot-host {} is beyond the {} hosts", hotspotHost, hosts));
  }
  if (!(hotspotFraction >= 0 && hotspotFraction <= 1)) {
    return bad(fmt::format("--hotspot-fraction: must be in [0, 1] (is {})", hotspotFraction));
  }
  if (pattern == GenPattern::kIncast) {
    if (incastSenders < 1 || incastSenders >= hosts) {
      // The default (8) may not fit a small tree: said with the value.
      return bad(fmt::format("--incast-senders: must be in 1..{} (the other hosts; is {})",
                             hosts - 1, incastSenders));
    }
    if (incastPeriodPs <= 0) return bad("--incast-period-cycles: must be > 0");
    if (endPs <= 0) return bad("--cycles: must be > 0");
  }
  return Status::ok();
}

namespace {

Result<std::uint64_t> generateIncast(const GenSpec& s, TrafficWriter& out) {
  std::mt19937_64 rng(s.seed);
  std::vector<std::uint32_t> others;
  for (std::uint32_t h = 0; h < s.hosts; ++h) {
    if (h != s.hotspotHost) others.push_back(h);
  }
  std::uint64_t n = 0;
  // Rounds counted, not times summed: t + period may pass the time range.
  for (std::int64_t r = 0; r < s.incastRounds(); ++r) {
    const TimePs t = r * s.incastPeriodPs;
    std::shuffle(others.begin(), others.end(), rng);
    std::vector<std::uint32_t> senders(others.begin(), others.begin() + s.incastSenders);
    std::sort(senders.begin(), senders.end());
    for (std::uint32_t src : senders) {
      if (Status st = out.write({t, src, s.hotspotHost, s.messageBytes, 0}); !st.isOk()) return st;
      ++n;
    }
  }
  return n;
}

}  // namespace

// Bernoulli arrivals per host per cycle at the time-varying rate (by thinning
// at the peak rate), merged in time order with a heap of per-host next times.
Result<std::uint64_t> generateTraffic(const GenSpec& s, TrafficWriter& out) {
  if (Status st = s.validate(); !st.isOk()) return st;
  if (s.pattern == GenPattern::kIncast) return generateIncast(s, out);
  std::mt19937_64 rng(s.seed);
  std::vector<std::uint32_t> perm(s.hosts);
  std::iota(perm.begin(), perm.end(), 0u);
  if (s.pattern == GenPattern::kPermutation) {
    // A random derangement: shift a shuffled cycle by one.
    std::vector<std::uint32_t> order = perm;
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t i = 0; i < order.size(); ++i)
      perm[order[i]] = order[(i + 1) % order.size()];
  }
  const auto flitsPerMessage = static_cast<double>(s.flitsPerMessage());
  const double pMax = std::min(1.0, s.rate.max() / flitsPerMessage);
  if (pMax <= 0) return std::uint64_t{0};
  const auto gap = [&] { return bernoulliGap(pMax, s.cyclePs, rng); };
  std::uniform_real_distribution<double> u(0, 1);
  using Next = std::pair<TimePs, std::uint32_t>;
  std::priority_queue<Next, std::vector<Next>, std::greater<>> heap;
  const TimePs end = s.rate.end();
  for (std::uint32_t h = 0; h < s.hosts; ++h) {
    if (const std::optional<TimePs> t = arrivalBefore(0, gap(), end)) heap.push({*t, h});
  }
  std::uint64_t n = 0;
  while (!heap.empty()) {
    auto [t, src] = heap.top();
    heap.pop();
    if (t >= end) continue;
    if (u(rng) * pMax < s.rate.at(t) / flitsPerMessage) {
      std::uint32_t dst;
      if (s.pattern == GenPattern::kPermutation) {
        dst = perm[src];
      } else if (s.pattern == GenPattern::kHotspot && src != s.hotspotHost &&
                 u(rng) < s.hotspotFraction) {
        dst = s.hotspotHost;
      } else {
        std::uniform_int_distribution<std::uint32_t> pick(0, s.hosts - 2);
        dst = pick(rng);
        if (dst >= src) ++dst;
      }
      if (Status st = out.write({t, src, dst, s.messageBytes, 0}); !st.isOk()) return st;
      ++n;
    }
    if (const std::optional<TimePs> next = arrivalBefore(t, gap(), end)) heap.push({*next, src});
  }
  return n;
}

}  // namespace ebb::workload
