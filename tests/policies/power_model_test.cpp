#include "policies/power_model.h"

#include <gtest/gtest.h>

#include <vector>

namespace ebb::policies {
namespace {

DirectionTimes idleFor(const LpiParams& p, TimePs duration) {
  LpiLink l(p, 0);
  l.finish(duration);
  DirectionTimes t;
  t.lpi = l.times();
  return t;
}

TEST(PowerModel, AlwaysActiveSavesNothing) {
  DirectionTimes t;
  t.lpi[static_cast<std::size_t>(LpiState::kActive)] = 1'000'000;
  const PowerModel m;
  EXPECT_DOUBLE_EQ(m.saving(std::vector{t, t}), 0.0);
  // Without LPI an idle link is in hold at full power: still no saving.
  EXPECT_DOUBLE_EQ(m.saving(std::vector{idleFor(LpiParams{}, 1'000'000'000)}), 0.0);
}

TEST(PowerModel, AlwaysIdleApproaches90PercentInDeepSleepLessRefresh) {
  const LpiParams p = LpiParams::table6(LpiMode::kDeepSleep, 0);
  const PowerModel m(p.powerDeepSleep, p.powerFastWake);
  const double s = m.saving(std::vector{idleFor(p, 1000 * p.quiet)});
  const double quietShare = static_cast<double>(p.quiet) / static_cast<double>(p.quiet + p.refresh);
  EXPECT_NEAR(s, 0.9 * quietShare, 1e-4);
  EXPECT_LT(s, 0.9);
  EXPECT_GT(s, 0.89);
}

TEST(PowerModel, AlwaysIdleApproaches40PercentInFastWake) {
  const LpiParams p = LpiParams::table6(LpiMode::kFastWake, 1);
  const PowerModel m;
  const double s = m.saving(std::vector{idleFor(p, 1'000'000 * p.hold)});
  EXPECT_NEAR(s, 0.4, 1e-5);
  EXPECT_LT(s, 0.4);
}

TEST(PowerModel, HoldAndSleepSignallingCountAtFullPower) {
  const LpiParams p = LpiParams::table6(LpiMode::kDeepSleep, 4);
  const PowerModel m;
  // Idle exactly through hold and sleep signalling: nothing saved yet.
  EXPECT_DOUBLE_EQ(m.saving(std::vector{idleFor(p, p.hold + p.sleepSignal)}), 0.0);
  // One more microsecond in quiet saves 0.9 us of energy.
  const DirectionTimes t = idleFor(p, p.hold + p.sleepSignal + 1'000'000);
  EXPECT_NEAR(m.energy(t), static_cast<double>(p.hold + p.sleepSignal) + 0.1 * 1e6, 1e-6);
}

TEST(PowerModel, GatingAloneAndCombined) {
  const PowerModel m;
  DirectionTimes gated;  // half the time off, a transition at full power
  gated.lpi[static_cast<std::size_t>(LpiState::kActive)] = 400;
  gated.turningOff = 100;
  gated.off = 500;
  EXPECT_DOUBLE_EQ(m.relativePower(std::vector{gated}), 0.5);
  DirectionTimes both = gated;  // the on time partly in fast-wake
  both.lpi[static_cast<std::size_t>(LpiState::kActive)] = 200;
  both.lpi[static_cast<std::size_t>(LpiState::kFastWake)] = 200;
  EXPECT_DOUBLE_EQ(m.relativePower(std::vector{both}), (200 + 0.6 * 200 + 100) / 1000.0);
  DirectionTimes sum = gated;
  sum += both;
  EXPECT_EQ(sum.total(), 2000);
}

}  // namespace
}  // namespace ebb::policies
