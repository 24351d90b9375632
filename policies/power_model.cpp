#include "policies/power_model.h"

namespace ebb::policies {

namespace {
constexpr std::size_t idx(LpiState s) {
  return static_cast<std::size_t>(s);
}
}  // namespace

TimePs DirectionTimes::total() const {
  TimePs t = turningOn + turningOff + off;
  for (TimePs x : lpi)
    t += x;
  return t;
}

DirectionTimes& DirectionTimes::operator+=(const DirectionTimes& o) {
  for (std::size_t i = 0; i < lpi.size(); ++i)
    lpi[i] += o.lpi[i];
  turningOn += o.turningOn;
  turningOff += o.turningOff;
  off += o.off;
  return *this;
}

double PowerModel::energy(const DirectionTimes& t) const {
  double e = 0;
  for (std::size_t i = 0; i < kLpiStates; ++i) {
    double p = 1.0;
    if (i == idx(LpiState::kQuiet)) p = pDs_;
    if (i == idx(LpiState::kFastWake)) p = pFw_;
    e += p * static_cast<double>(t.lpi[i]);
  }
  return e + static_cast<double>(t.turningOn + t.turningOff);
}

double PowerModel::relativePower(std::span<const DirectionTimes> links) const {
  double e = 0;
  double total = 0;
  for (const DirectionTimes& t : links) {
    e += energy(t);
    total += static_cast<double>(t.total());
  }
  return total > 0 ? e / total : 1.0;
}

}  // namespace ebb::policies
