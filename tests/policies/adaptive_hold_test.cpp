// The adaptive hold of low-power idle (LpiParams::adaptive): how the hold
// moves, and the delay bound it keeps on any arrival pattern.
#include <gtest/gtest.h>

#include <random>

#include "policies/lpi_link.h"

namespace ebb::policies {
namespace {

constexpr TimePs kTs = 1'100'000;  // T_s of Table VI
constexpr TimePs kTx = 100'000;    // one packet's transmission

LpiParams adaptive(LpiMode mode, TimePs budget, TimePs hold = kTs) {
  LpiParams p = LpiParams::table6(mode, 1);
  p.hold = hold;
  p.adaptive = {true, budget, 0, 64 * kTs};
  return p;
}

// Sends one packet ready at `t`; returns when its transmission ends and what it waited.
struct Sent {
  TimePs end;
  TimePs delay;
};
Sent send(LpiLink& l, TimePs t) {
  const TimePs d = l.packetReady(t);
  l.transmissionEnded(t + d + kTx);
  return {t + d + kTx, d};
}

TEST(AdaptiveHold, AWakeUpThatOverdrawsTheAccountDoublesTheHold) {
  LpiLink l(adaptive(LpiMode::kDeepSleep, 10'000), 0);
  Sent s = send(l, 0);  // idle since 0, ready at 0: back to back, no delay
  EXPECT_EQ(s.delay, 0);
  s = send(l, s.end + 3 * kTs);  // past the hold: sleeping
  EXPECT_EQ(s.delay, 5'500'000);
  EXPECT_EQ(l.counters().wakeups, 1u);
  EXPECT_EQ(l.counters().hold, 2 * kTs);
  EXPECT_EQ(l.delayBalance(), 2 * 10'000 - 5'500'000);
}

// The overdraw reported is the most the account was ever overdrawn, not what
// is left at the end: packets that follow in hold earn the budget back, and
// the end value (0 here) would hide the wake-up's transient excess.
TEST(AdaptiveHold, TheOverdrawIsTheLargestOfTheRunNotTheLast) {
  LpiLink l(adaptive(LpiMode::kDeepSleep, 100'000), 0);
  Sent s = send(l, 0);
  s = send(l, s.end + 3 * kTs);  // the wake-up: 5.5 us charged, 0.2 us earned
  ASSERT_EQ(s.delay, 5'500'000);
  const TimePs peak = 5'500'000 - 2 * 100'000;
  EXPECT_EQ(l.counters().maxOverdraw, peak);
  for (int i = 0; i < 200; ++i)
    s = send(l, s.end + kTx);  // in hold: free, each earns the budget
  const LpiCounters c = l.counters();
  EXPECT_LT(static_cast<TimePs>(c.wakeDelay) - 100'000 * static_cast<TimePs>(c.packets), 0);
  EXPECT_EQ(c.maxOverdraw, peak);
}

TEST(AdaptiveHold, AnIdlePeriodBegunInDebtHoldsForMaxHold) {
  LpiParams p = adaptive(LpiMode::kDeepSleep, 10'000);
  LpiLink l(p, 0);
  Sent s = send(l, 0);
  s = send(l, s.end + 3 * kTs);  // overdraws: in debt from here on
  ASSERT_LT(l.delayBalance(), 0);
  EXPECT_EQ(l.stateAt(s.end + p.adaptive.maxHold - 1), LpiState::kHold);
  EXPECT_EQ(l.stateAt(s.end + p.adaptive.maxHold), LpiState::kSleepSignal);
  EXPECT_EQ(l.counters().overBudgetIdles, 1u);
  // Inside max_hold a packet pays nothing; after it, the wake-up is not charged.
  s = send(l, s.end + 10 * kTs);
  EXPECT_EQ(s.delay, 0);
  const TimePs before = l.delayBalance();
  s = send(l, s.end + p.adaptive.maxHold + kTs);
  EXPECT_EQ(s.delay, 5'500'000);
  EXPECT_EQ(l.counters().longIdleWakeups, 1u);
  EXPECT_EQ(l.counters().longIdleWakeDelay, 5'500'000);
  EXPECT_EQ(l.delayBalance(), before + 10'000);
}

TEST(AdaptiveHold, ALongIdleWithinBudgetHalvesTheHoldDownToItsFloor) {
  LpiParams p = adaptive(LpiMode::kFastWake, 1'000'000, 8 * kTs);
  p.adaptive.minHold = 2 * kTs;
  LpiLink l(p, 0);
  Sent s = send(l, 0);
  s = send(l, s.end + 8 * 8 * kTs);  // idle 8 holds: the hold was spent for nothing
  EXPECT_EQ(s.delay, p.wakeFastWake);
  EXPECT_EQ(l.counters().hold, 4 * kTs);
  s = send(l, s.end + 7 * 4 * kTs);  // shorter than 8 holds: kept
  EXPECT_EQ(l.counters().hold, 4 * kTs);
  s = send(l, s.end + 8 * 4 * kTs);
  EXPECT_EQ(l.counters().hold, 2 * kTs);
  s = send(l, s.end + 8 * 2 * kTs);
  EXPECT_EQ(l.counters().hold, 2 * kTs) << "never below min_hold";
}

TEST(AdaptiveHold, AFixedHoldCountsWakeUpsAndNeverMoves) {
  LpiLink l(LpiParams::table6(LpiMode::kHybrid, 1), 0);
  Sent s = send(l, 0);
  s = send(l, s.end + 3 * kTs / 2);  // fast-wake part of hybrid
  s = send(l, s.end + 10 * kTs);     // deep-sleep part
  const LpiCounters c = l.counters();
  EXPECT_EQ(c.packets, 3u);
  EXPECT_EQ(c.wakeups, 2u);
  EXPECT_EQ(c.wakeDelay, 340'000 + 5'500'000);
  EXPECT_EQ(c.hold, kTs);
  EXPECT_EQ(c.overBudgetIdles + c.longIdleWakeups, 0u);
}

// The bound, on random arrivals in every mode: the charged wake-up delay stays
// within budget x packets + one wake-up; each uncharged one ended an idle of
// max_hold or more (so it costs at most T_w / max_hold of the idle time); the
// hold stays within [min_hold, max_hold].
TEST(AdaptiveHold, ChargedDelayStaysWithinBudgetOnRandomArrivals) {
  std::mt19937_64 rng(7);
  for (LpiMode mode : {LpiMode::kDeepSleep, LpiMode::kFastWake, LpiMode::kHybrid}) {
    for (TimePs budget : {1'000, 20'000, 400'000}) {
      for (int pattern = 0; pattern < 4; ++pattern) {
        LpiParams p = adaptive(mode, budget, 2 * kTs);
        p.adaptive.minHold = kTs / 2;
        p.adaptive.maxHold = 16 * kTs;
        LpiLink l(p, 0);
        // Bursts with short gaps, separated by gaps around the hold and long pauses.
        std::exponential_distribution<double> shortGap(1.0 / (0.3 * kTs));
        std::exponential_distribution<double> midGap(1.0 / (4.0 * kTs * (pattern + 1)));
        std::uniform_real_distribution<double> coin(0, 1);
        TimePs t = 0, longIdle = 0, worstWake = std::max(p.wakeDeepSleep, p.wakeFastWake);
        for (int i = 0; i < 20'000; ++i) {
          const double c = coin(rng);
          const TimePs gap = static_cast<TimePs>(c < 0.7    ? shortGap(rng)
                                                 : c < 0.98 ? midGap(rng)
                                                            : 40.0 * kTs * coin(rng) + kTs);
          if (gap >= p.adaptive.maxHold) longIdle += gap;
          t = send(l, t + gap).end;
          const TimePs h = l.counters().hold;
          ASSERT_GE(h, p.adaptive.minHold);
          ASSERT_LE(h, p.adaptive.maxHold);
        }
        const LpiCounters c = l.counters();
        const TimePs charged = c.wakeDelay - c.longIdleWakeDelay;
        EXPECT_LE(charged, budget * static_cast<TimePs>(c.packets) + worstWake)
            << toString(mode) << " budget " << budget << " pattern " << pattern;
        EXPECT_LE(static_cast<double>(c.longIdleWakeDelay),
                  static_cast<double>(worstWake) * static_cast<double>(longIdle) /
                      static_cast<double>(p.adaptive.maxHold));
        EXPECT_GT(c.wakeups, 0u) << "the pattern must make the link sleep";
      }
    }
  }
}

TEST(AdaptiveHold, ValidationNamesTheRule) {
  LpiParams p = adaptive(LpiMode::kHybrid, 0);
  Status s = p.validate();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("lpi.adaptive_hold.delay_budget"), std::string::npos) << s.message();
  p = adaptive(LpiMode::kHybrid, 1000);
  p.adaptive.minHold = 2 * kTs;  // above the hold it starts from
  s = p.validate();
  EXPECT_NE(s.message().find("min_hold <= hold <= max_hold"), std::string::npos) << s.message();
  p = adaptive(LpiMode::kHybrid, 1000);
  p.adaptive.maxHold = kTs / 2;
  EXPECT_FALSE(p.validate().isOk());
}

}  // namespace
}  // namespace ebb::policies
