#include "policies/power_model.h"

#include <gtest/gtest.h>

#include <vector>

namespace ebb::policies {
namespace {

constexpr auto at(LpiState s) {
  return static_cast<std::size_t>(s);
}

// A link idle from 0 to `duration` (no packet at all).
DirectionTimes idleFor(const LpiParams& p, TimePs duration) {
  LpiLink l(p, 0);
  l.finish(duration);
  return DirectionTimes::lpiOnly(l.times());
}

double savingOf(const PowerModel& m, const DirectionTimes& t) {
  return m.saving(std::vector{t});
}

TEST(PowerModel, AlwaysActiveSavesNothing) {
  const PowerModel m;
  // LPI alone, transmitting all the time.
  DirectionTimes t;
  t.lpi[at(LpiState::kActive)] = 1'000'000;
  EXPECT_DOUBLE_EQ(m.saving(std::vector{t, t}), 0.0);
  // Back-to-back packets under every mode: never idle, never saving.
  for (LpiMode mode : {LpiMode::kDeepSleep, LpiMode::kFastWake, LpiMode::kHybrid}) {
    LpiLink l(LpiParams::table6(mode, 0), 0);
    for (TimePs s = 0; s < 100'000'000; s += 1'000'000) {
      EXPECT_EQ(l.packetReady(s), 0);
      l.transmissionEnded(s + 1'000'000);
    }
    EXPECT_DOUBLE_EQ(savingOf(m, DirectionTimes::lpiOnly(l.times())), 0.0) << toString(mode);
  }
  // Without LPI an idle link is in hold at full power: still no saving.
  EXPECT_DOUBLE_EQ(savingOf(m, idleFor(LpiParams{}, 1'000'000'000)), 0.0);
  // Gating alone with the link always on.
  GatedLink g(1000, 1000);
  EXPECT_DOUBLE_EQ(savingOf(m, DirectionTimes::gatingOnly(g.times(1'000'000))), 0.0);
}

// Deep-sleep, always idle: sleep signalling, then quiet at 0.1 P_ACT with
// refresh at full power. The saving grows toward 0.9 x T_q / (T_q + T_r).
TEST(PowerModel, AlwaysIdleApproaches90PercentInDeepSleepLessRefresh) {
  const LpiParams p = LpiParams::table6(LpiMode::kDeepSleep, 0);
  const PowerModel m(p);
  const double quietShare = static_cast<double>(p.quiet) / static_cast<double>(p.quiet + p.refresh);
  const double limit = 0.9 * quietShare;
  double last = 0;
  for (TimePs cycles : {1, 10, 100, 1000}) {
    const TimePs d = p.sleepSignal + cycles * (p.quiet + p.refresh);
    const double s = savingOf(m, idleFor(p, d));
    // Exact: cycles x (0.9 T_q) saved out of d.
    EXPECT_NEAR(s, 0.9 * static_cast<double>(cycles * p.quiet) / static_cast<double>(d), 1e-12);
    EXPECT_GT(s, last);
    EXPECT_LT(s, limit);
    last = s;
  }
  EXPECT_NEAR(last, limit, 1e-5);
  EXPECT_GT(last, 0.89);
  // Without refresh it would reach 90%.
  LpiParams noRefresh = p;
  noRefresh.refresh = 0;
  EXPECT_NEAR(savingOf(m, idleFor(noRefresh, 1000 * p.quiet)), 0.9, 1e-5);
}

TEST(PowerModel, AlwaysIdleApproaches40PercentInFastWake) {
  for (int hold : {0, 1, 4}) {
    const LpiParams p = LpiParams::table6(LpiMode::kFastWake, hold);
    const PowerModel m(p);
    const TimePs d = 1'000'000'000'000;  // one second idle
    const double s = savingOf(m, idleFor(p, d));
    EXPECT_NEAR(s, 0.4 * static_cast<double>(d - p.hold) / static_cast<double>(d), 1e-12);
    EXPECT_NEAR(s, 0.4, 1e-5);
    EXPECT_LE(s, 0.4);
  }
}

// Hybrid: exactly fast-wake for idle periods shorter than T_h,FW + T_h,DS;
// between fast-wake and deep-sleep for long ones (not in between for idle
// periods ending in its sleep signalling, which is at full power).
TEST(PowerModel, HybridIsFastWakeThenLiesBetween) {
  const PowerModel m;
  for (int hold : {1, 2, 4}) {
    const LpiParams h = LpiParams::table6(LpiMode::kHybrid, hold);
    const LpiParams f = LpiParams::table6(LpiMode::kFastWake, hold);
    const LpiParams d = LpiParams::table6(LpiMode::kDeepSleep, hold);
    for (TimePs x : {h.hold / 2, h.hold + h.hybridFastWake / 2, h.hold + h.hybridFastWake}) {
      EXPECT_DOUBLE_EQ(savingOf(m, idleFor(h, x)), savingOf(m, idleFor(f, x))) << hold;
    }
    for (TimePs x : {TimePs{10'000'000'000}, TimePs{1'000'000'000'000}}) {
      const double fw = savingOf(m, idleFor(f, x));
      const double hy = savingOf(m, idleFor(h, x));
      const double ds = savingOf(m, idleFor(d, x));
      EXPECT_LT(fw, hy) << hold << " " << x;
      EXPECT_LT(hy, ds) << hold << " " << x;
    }
  }
}

TEST(PowerModel, HoldAndSleepSignallingCountAtFullPower) {
  const LpiParams p = LpiParams::table6(LpiMode::kDeepSleep, 4);
  const PowerModel m(p);
  // Idle exactly through hold and sleep signalling: nothing saved yet.
  const DirectionTimes t0 = idleFor(p, p.hold + p.sleepSignal);
  EXPECT_EQ(t0.lpi[at(LpiState::kHold)], 4 * p.sleepSignal);
  EXPECT_EQ(t0.lpi[at(LpiState::kSleepSignal)], p.sleepSignal);
  EXPECT_DOUBLE_EQ(savingOf(m, t0), 0.0);
  // One more microsecond in quiet costs 0.1 us of energy.
  const DirectionTimes t = idleFor(p, p.hold + p.sleepSignal + 1'000'000);
  EXPECT_NEAR(m.energy(t), static_cast<double>(p.hold + p.sleepSignal) + 0.1 * 1e6, 1e-6);
  // The same holds for fast-wake's hold.
  const LpiParams f = LpiParams::table6(LpiMode::kFastWake, 2);
  EXPECT_DOUBLE_EQ(savingOf(m, idleFor(f, f.hold)), 0.0);
}

TEST(PowerModel, PowerOfEachState) {
  const PowerModel m(0.2, 0.7);
  EXPECT_DOUBLE_EQ(m.power(LpiState::kQuiet), 0.2);
  EXPECT_DOUBLE_EQ(m.power(LpiState::kFastWake), 0.7);
  for (LpiState s : {LpiState::kActive, LpiState::kHold, LpiState::kSleepSignal, LpiState::kRefresh,
                     LpiState::kWaking}) {
    EXPECT_DOUBLE_EQ(m.power(s), 1.0) << toString(s);
  }
  EXPECT_DOUBLE_EQ(m.power(LinkPowerState::kTurningOn), 1.0);
  EXPECT_DOUBLE_EQ(m.power(LinkPowerState::kTurningOff), 1.0);
  EXPECT_DOUBLE_EQ(m.power(LinkPowerState::kOff), 0.0);
  LpiParams p;
  p.powerDeepSleep = 0.05;
  EXPECT_DOUBLE_EQ(PowerModel(p).power(LpiState::kQuiet), 0.05);
}

// Energy per state: every state's time times its power, summing to the total.
TEST(PowerModel, EnergyBreakdownPerState) {
  const PowerModel m;
  DirectionTimes t;
  TimePs v = 1000;
  for (TimePs& x : t.lpi)
    x = (v += 1000);
  t.turningOn = 50;
  t.turningOff = 70;
  t.off = 100'000;
  const EnergyBreakdown e = m.breakdown(t);
  EXPECT_DOUBLE_EQ(e.lpi[at(LpiState::kQuiet)],
                   0.1 * static_cast<double>(t.lpi[at(LpiState::kQuiet)]));
  EXPECT_DOUBLE_EQ(e.lpi[at(LpiState::kFastWake)],
                   0.6 * static_cast<double>(t.lpi[at(LpiState::kFastWake)]));
  EXPECT_DOUBLE_EQ(e.lpi[at(LpiState::kRefresh)],
                   static_cast<double>(t.lpi[at(LpiState::kRefresh)]));
  EXPECT_DOUBLE_EQ(e.turningOn, 50);
  EXPECT_DOUBLE_EQ(e.turningOff, 70);
  double full = 0;
  for (LpiState s : {LpiState::kActive, LpiState::kHold, LpiState::kSleepSignal, LpiState::kRefresh,
                     LpiState::kWaking})
    full += static_cast<double>(t.lpi[at(s)]);
  const double want = full + 0.1 * static_cast<double>(t.lpi[at(LpiState::kQuiet)]) +
                      0.6 * static_cast<double>(t.lpi[at(LpiState::kFastWake)]) + 50 + 70;
  EXPECT_DOUBLE_EQ(e.total(), want);
  EXPECT_DOUBLE_EQ(m.energy(t), want);
  EXPECT_DOUBLE_EQ(m.averagePower(t), want / static_cast<double>(t.total()));
}

// Gating alone: time off saves all of P_ACT, transitions save nothing.
TEST(PowerModel, GatingAlone) {
  const PowerModel m;
  GatedLink g(1000, 2000);
  g.request(false, 4000);  // on 4000, turning off 2000, then off
  g.request(true, 8000);   // off 2000, turning on 1000, then on
  const DirectionTimes t = DirectionTimes::gatingOnly(g.times(10'000));
  EXPECT_EQ(t.total(), 10'000);
  EXPECT_EQ(t.lpi[at(LpiState::kActive)], 4000 + 1000);
  EXPECT_EQ(t.turningOff, 2000);
  EXPECT_EQ(t.turningOn, 1000);
  EXPECT_EQ(t.off, 2000);
  EXPECT_DOUBLE_EQ(m.relativePower(std::vector{t}), 8000.0 / 10'000);
  EXPECT_DOUBLE_EQ(savingOf(m, t), 0.2);
}

// Both: LPI (fast-wake) runs while the direction is gated on; gating supplies
// the time off and the transitions.
TEST(PowerModel, GatingAndLpiTogether) {
  const PowerModel m;
  const LpiParams p = LpiParams::table6(LpiMode::kFastWake, 1);
  const TimePs on = 100 * p.hold;
  GatedLink g(1000, 1000);
  LpiLink l(p, 0);
  l.suspend(on);         // gated off at `on`
  g.request(false, on);  // turning off [on, on+1000), off after
  const TimePs end = 3 * on;
  const DirectionTimes both = DirectionTimes::combined(g.times(end), l.times());
  EXPECT_EQ(both.total(), end);
  // hold at full power, fast-wake at 0.6, turning off at full power, off at 0.
  const double want = static_cast<double>(p.hold) + 0.6 * static_cast<double>(on - p.hold) + 1000;
  EXPECT_NEAR(m.energy(both), want, 1e-6);
  EXPECT_NEAR(m.relativePower(std::vector{both}), want / static_cast<double>(end), 1e-12);
  // Together they save more than either alone over the same time.
  const double gatingAlone = savingOf(m, DirectionTimes::gatingOnly(g.times(end)));
  LpiLink lonly(p, 0);
  lonly.finish(end);
  const double lpiAlone = savingOf(m, DirectionTimes::lpiOnly(lonly.times()));
  EXPECT_GT(savingOf(m, both), gatingAlone);
  EXPECT_GT(savingOf(m, both), lpiAlone);
}

TEST(PowerModel, SumsOverLinks) {
  const PowerModel m;
  DirectionTimes a, b;
  a.lpi[at(LpiState::kActive)] = 1000;
  b.off = 3000;
  DirectionTimes s = a;
  s += b;
  EXPECT_EQ(s.total(), 4000);
  EXPECT_DOUBLE_EQ(m.relativePower(std::vector{a, b}), 0.25);
  EXPECT_DOUBLE_EQ(m.relativePower(std::vector{s}), 0.25);
  EXPECT_DOUBLE_EQ(m.relativePower(std::vector<DirectionTimes>{}), 1.0);
  EXPECT_DOUBLE_EQ(m.averagePower(DirectionTimes{}), 1.0);
}

}  // namespace
}  // namespace ebb::policies
