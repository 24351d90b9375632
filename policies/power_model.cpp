#include "policies/power_model.h"

namespace ebb::policies {

namespace {
constexpr std::size_t idx(LpiState s) {
  return static_cast<std::size_t>(s);
}
constexpr std::size_t idx(LinkPowerState s) {
  return static_cast<std::size_t>(s);
}
}  // namespace

DirectionTimes DirectionTimes::gatingOnly(const GatingTimes& g) {
  DirectionTimes t;
  t.lpi[idx(LpiState::kActive)] = g[idx(LinkPowerState::kOn)];
  t.turningOn = g[idx(LinkPowerState::kTurningOn)];
  t.turningOff = g[idx(LinkPowerState::kTurningOff)];
  t.off = g[idx(LinkPowerState::kOff)];
  return t;
}

DirectionTimes DirectionTimes::lpiOnly(const LpiTimes& l) {
  DirectionTimes t;
  t.lpi = l;
  return t;
}

DirectionTimes DirectionTimes::combined(const GatingTimes& g, const LpiTimes& l) {
  DirectionTimes t = gatingOnly(g);
  t.lpi = l;
  return t;
}

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

DirectionTimes& DirectionTimes::operator-=(const DirectionTimes& o) {
  for (std::size_t i = 0; i < lpi.size(); ++i)
    lpi[i] -= o.lpi[i];
  turningOn -= o.turningOn;
  turningOff -= o.turningOff;
  off -= o.off;
  return *this;
}

double EnergyBreakdown::total() const {
  double e = turningOn + turningOff;
  for (double x : lpi)
    e += x;
  return e;
}

double PowerModel::power(LpiState s) const {
  switch (s) {
    case LpiState::kQuiet:
      return pDs_;
    case LpiState::kFastWake:
      return pFw_;
    default:
      return 1.0;
  }
}

EnergyBreakdown PowerModel::breakdown(const DirectionTimes& t) const {
  EnergyBreakdown e;
  for (std::size_t i = 0; i < kLpiStates; ++i)
    e.lpi[i] = power(static_cast<LpiState>(i)) * static_cast<double>(t.lpi[i]);
  e.turningOn = power(LinkPowerState::kTurningOn) * static_cast<double>(t.turningOn);
  e.turningOff = power(LinkPowerState::kTurningOff) * static_cast<double>(t.turningOff);
  return e;
}

double PowerModel::energy(const DirectionTimes& t) const {
  return breakdown(t).total();
}

double PowerModel::averagePower(const DirectionTimes& t) const {
  const TimePs total = t.total();
  return total > 0 ? energy(t) / static_cast<double>(total) : 1.0;
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
