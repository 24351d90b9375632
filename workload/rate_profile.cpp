#include "workload/rate_profile.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ebb::workload {

Status checkOfferedLoad(std::string_view field, double rate) {
  if (!(rate >= 0) || !std::isfinite(rate)) {
    return invalidArgument(fmt::format("{}: must be >= 0 (is {})", field, rate));
  }
  if (rate > 1) {
    return invalidArgument(fmt::format(
        "{}: {} flits/cycle/node is more than a host's link carries (at most 1)", field, rate));
  }
  return Status::ok();
}

RateProfile::RateProfile(std::vector<std::pair<TimePs, double>> points)
    : points_(std::move(points)) {
  for (const auto& [t, r] : points_)
    max_ = std::max(max_, r);
  // A flat profile (uniform traffic) neither rises nor falls: it is drawn as
  // one curve, as a workload without a profile is.
  const bool flat =
      std::all_of(points_.begin(), points_.end(), [&](const auto& p) { return p.second == max_; });
  for (const auto& [t, r] : points_) {
    if (flat) break;
    if (r >= max_) {
      hasPeak_ = true;
      peakAt_ = t;
      break;
    }
  }
}

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

double RateProfile::integral() const {
  double sum = 0;
  for (std::size_t i = 1; i < points_.size(); ++i) {
    const auto& [t0, r0] = points_[i - 1];
    const auto& [t1, r1] = points_[i];
    sum += (r0 + r1) / 2 * static_cast<double>(t1 - t0);
  }
  return sum;
}

bool RateProfile::rising(TimePs t) const {
  // Rising until the first time the peak is reached.
  return !hasPeak_ || t < peakAt_;
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

}  // namespace ebb::workload
