#include "policies/lpi_link.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace ebb::policies {
namespace {

constexpr auto at(LpiState s) {
  return static_cast<std::size_t>(s);
}

TimePs sum(const LpiTimes& t) {
  TimePs s = 0;
  for (TimePs x : t)
    s += x;
  return s;
}

// Driving a link by events only, following its timers: the states it passes
// through after a transmission, and when.
struct Visit {
  LpiState state;
  TimePs from;
};
std::vector<Visit> followTimers(const LpiParams& p, TimePs until) {
  LpiLink l(p, 0);
  l.onEvent(LpiEvent::kPacketReady, 0);
  LpiStep s = l.onEvent(LpiEvent::kTransmissionEnded, 100);
  std::vector<Visit> v{{s.state, 100}};
  while (s.nextTimer >= 0 && s.nextTimer <= until) {
    const TimePs t = s.nextTimer;
    s = l.onEvent(LpiEvent::kTimer, t);
    EXPECT_GT(s.nextTimer == -1 ? t + 1 : s.nextTimer, t) << "a timer must move time forward";
    v.push_back({s.state, t});
  }
  return v;
}

TEST(LpiLink, DeepSleepTimersWalkTheFigure3Timeline) {
  const LpiParams p = LpiParams::table6(LpiMode::kDeepSleep, 2);
  const TimePs tq = 100 + p.hold + p.sleepSignal;
  const auto v = followTimers(p, tq + 2 * (p.quiet + p.refresh));
  const std::vector<Visit> want = {{LpiState::kHold, 100},
                                   {LpiState::kSleepSignal, 100 + p.hold},
                                   {LpiState::kQuiet, tq},
                                   {LpiState::kRefresh, tq + p.quiet},
                                   {LpiState::kQuiet, tq + p.quiet + p.refresh},
                                   {LpiState::kRefresh, tq + 2 * p.quiet + p.refresh},
                                   {LpiState::kQuiet, tq + 2 * (p.quiet + p.refresh)}};
  ASSERT_EQ(v.size(), want.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i].state, want[i].state) << i;
    EXPECT_EQ(v[i].from, want[i].from) << i;
  }
}

TEST(LpiLink, FastWakeAndHybridTimers) {
  const LpiParams fw = LpiParams::table6(LpiMode::kFastWake, 1);
  auto v = followTimers(fw, 1'000'000'000'000);
  ASSERT_EQ(v.size(), 2u);  // hold, then fast-wake with no timer
  EXPECT_EQ(v[1].state, LpiState::kFastWake);
  EXPECT_EQ(v[1].from, 100 + fw.hold);

  LpiParams hy = LpiParams::table6(LpiMode::kHybrid, 1);
  hy.hybridFastWake = 2 * hy.sleepSignal;
  const TimePs ts = 100 + hy.hold + hy.hybridFastWake;
  v = followTimers(hy, ts + hy.sleepSignal + hy.quiet);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[1].state, LpiState::kFastWake);
  EXPECT_EQ(v[1].from, 100 + hy.hold);
  EXPECT_EQ(v[2].state, LpiState::kSleepSignal);
  EXPECT_EQ(v[2].from, ts);
  EXPECT_EQ(v[3].state, LpiState::kQuiet);
  EXPECT_EQ(v[4].state, LpiState::kRefresh);
  EXPECT_EQ(v[4].from, ts + hy.sleepSignal + hy.quiet);

  // Without LPI: hold for ever.
  v = followTimers(LpiParams{}, 1'000'000'000'000);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].state, LpiState::kHold);
}

TEST(LpiLink, PacketEventReturnsDelayStateAndTimer) {
  const LpiParams p = LpiParams::table6(LpiMode::kDeepSleep, 1);
  LpiLink l(p, 0);
  const TimePs t = p.hold + p.sleepSignal + 10;  // quiet
  LpiStep s = l.onEvent(LpiEvent::kPacketReady, t);
  EXPECT_EQ(s.delay, p.wakeDeepSleep);
  EXPECT_EQ(s.state, LpiState::kWaking);
  EXPECT_EQ(s.nextTimer, t + p.wakeDeepSleep);  // active from here
  s = l.onEvent(LpiEvent::kTimer, t + p.wakeDeepSleep);
  EXPECT_EQ(s.state, LpiState::kActive);
  EXPECT_EQ(s.nextTimer, -1);  // active until the transmission ends
  EXPECT_EQ(l.times()[at(LpiState::kWaking)], p.wakeDeepSleep);
  s = l.onEvent(LpiEvent::kTransmissionEnded, t + p.wakeDeepSleep + 700);
  EXPECT_EQ(s.delay, 0);
  EXPECT_EQ(s.state, LpiState::kHold);
  EXPECT_EQ(s.nextTimer, t + p.wakeDeepSleep + 700 + p.hold);
  EXPECT_EQ(l.times()[at(LpiState::kActive)], 700);
  EXPECT_EQ(sum(l.times()), t + p.wakeDeepSleep + 700);
}

TEST(LpiLink, WakingIsCreditedAsItElapses) {
  const LpiParams p = LpiParams::table6(LpiMode::kDeepSleep, 0);
  LpiLink l(p, 0);
  const TimePs t = 5 * p.sleepSignal;
  ASSERT_EQ(l.packetReady(t), p.wakeDeepSleep);
  l.finish(t + 1000);  // a snapshot half way through the wake-up
  EXPECT_EQ(l.times()[at(LpiState::kWaking)], 1000);
  EXPECT_EQ(sum(l.times()), t + 1000);
  l.finish(t + p.wakeDeepSleep + 50);
  EXPECT_EQ(l.times()[at(LpiState::kWaking)], p.wakeDeepSleep);
  EXPECT_EQ(l.times()[at(LpiState::kActive)], 50);
}

TEST(LpiLink, BackToBackPacketsPayNothingEvenWithZeroHold) {
  for (LpiMode m : {LpiMode::kDeepSleep, LpiMode::kFastWake, LpiMode::kHybrid}) {
    LpiLink l(LpiParams::table6(m, 0), 0);
    TimePs t = 0;
    EXPECT_EQ(l.packetReady(t), 0);
    for (int i = 0; i < 10; ++i) {
      t += 100;
      l.transmissionEnded(t);
      EXPECT_EQ(l.packetReady(t), 0) << toString(m);
    }
    EXPECT_EQ(l.times()[at(LpiState::kActive)], 1000);
    // One picosecond later is too late with a zero hold.
    l.transmissionEnded(t + 100);
    EXPECT_GT(l.packetReady(t + 101), 0) << toString(m);
  }
}

// --- A tick-by-tick reference of Figures 3-5, to compare against ---

struct RefPhase {
  LpiState state;
  TimePs len;  // -1: for ever
};

std::vector<RefPhase> idleSequence(const LpiParams& p) {
  std::vector<RefPhase> s{{LpiState::kHold, p.mode == LpiMode::kOff ? -1 : p.hold}};
  if (p.mode == LpiMode::kFastWake) s.push_back({LpiState::kFastWake, -1});
  if (p.mode == LpiMode::kHybrid) s.push_back({LpiState::kFastWake, p.hybridFastWake});
  if (p.mode == LpiMode::kDeepSleep || p.mode == LpiMode::kHybrid) {
    s.push_back({LpiState::kSleepSignal, p.sleepSignal});
    for (int i = 0; i < 1000; ++i) {
      s.push_back({LpiState::kQuiet, p.quiet});
      s.push_back({LpiState::kRefresh, p.refresh});
    }
  }
  return s;
}

TimePs refWake(const LpiParams& p, LpiState s) {
  if (s == LpiState::kFastWake) return p.wakeFastWake;
  if (s == LpiState::kSleepSignal || s == LpiState::kQuiet || s == LpiState::kRefresh) {
    return p.wakeDeepSleep;
  }
  return 0;
}

// Random gaps and transmissions on small, odd parameters; the link must agree
// with the reference at every picosecond of every gap, on every delay and on
// every credited time.
TEST(LpiLink, AgreesWithATickByTickReference) {
  std::mt19937 gen(7);
  const auto rng = [&gen] { return static_cast<TimePs>(gen()); };
  for (LpiMode mode : {LpiMode::kOff, LpiMode::kDeepSleep, LpiMode::kFastWake, LpiMode::kHybrid}) {
    for (int trial = 0; trial < 60; ++trial) {
      LpiParams p;
      p.mode = mode;
      p.sleepSignal = 1 + rng() % 4;
      p.hold = p.sleepSignal * (rng() % 3);
      p.hybridFastWake = rng() % 6;
      p.quiet = 1 + rng() % 9;
      p.refresh = 1 + rng() % 3;
      p.wakeDeepSleep = 5 + rng() % 4;
      p.wakeFastWake = 1 + rng() % 2;
      ASSERT_TRUE(p.validate().isOk());
      const std::vector<RefPhase> seq = idleSequence(p);
      LpiLink l(p, 0);
      LpiTimes ref{};
      TimePs t = 0;
      l.packetReady(0);
      for (int pkt = 0; pkt < 30; ++pkt) {
        const TimePs duration = 1 + rng() % 5;
        t += duration;
        l.transmissionEnded(t);
        ref[at(LpiState::kActive)] += duration;
        // Idle: walk the phases tick by tick.
        const TimePs gap = rng() % 4 == 0 ? 0 : rng() % 60;
        std::size_t ph = 0;
        TimePs in = 0;
        const auto skipEmpty = [&] {
          while (seq[ph].len >= 0 && in >= seq[ph].len) {
            ++ph;
            in = 0;
          }
        };
        for (TimePs i = 0; i < gap; ++i) {
          skipEmpty();
          ASSERT_EQ(l.stateAt(t + i), seq[ph].state)
              << toString(mode) << " trial " << trial << " packet " << pkt << " +" << i;
          const TimePs next = seq[ph].len < 0 ? -1 : t + i + (seq[ph].len - in);
          ASSERT_EQ(l.nextTransition(t + i), next) << toString(mode) << " +" << i;
          ref[at(seq[ph].state)] += 1;
          ++in;
        }
        skipEmpty();
        const TimePs wake = gap == 0 ? 0 : refWake(p, seq[ph].state);
        t += gap;
        ASSERT_EQ(l.packetReady(t), wake) << toString(mode) << " trial " << trial;
        ref[at(LpiState::kWaking)] += wake;
        t += wake;
        l.finish(t);
        ASSERT_EQ(l.times(), ref) << toString(mode) << " trial " << trial << " packet " << pkt;
      }
    }
  }
}

// A transmitter with data waiting for credits is not idle: pinned in hold it
// does not enter low-power idle, and the next packet pays nothing.
TEST(LpiLink, PinnedLinkStaysInHold) {
  const LpiParams p = LpiParams::table6(LpiMode::kDeepSleep, 1);
  LpiLink l(p, 0);
  l.packetReady(0);
  l.transmissionEnded(100);
  l.pin(200);
  EXPECT_EQ(l.stateAt(100 + 100 * p.hold), LpiState::kHold);
  EXPECT_EQ(l.nextTransition(100 + 100 * p.hold), -1);
  EXPECT_EQ(l.packetReady(100 + 100 * p.hold), 0);
  EXPECT_EQ(l.times()[at(LpiState::kHold)], 100 * p.hold);
  // Pinning a link that is already asleep changes nothing.
  l.transmissionEnded(200 + 100 * p.hold);
  const TimePs asleep = 200 + 100 * p.hold + p.hold + p.sleepSignal + 10;
  l.pin(asleep);
  EXPECT_EQ(l.packetReady(asleep + 5), p.wakeDeepSleep);
  // With a zero hold, a link blocked the instant it went idle is pinned too.
  LpiLink z(LpiParams::table6(LpiMode::kDeepSleep, 0), 0);
  z.packetReady(0);
  z.transmissionEnded(100);
  z.pin(100);
  EXPECT_EQ(z.packetReady(100 + 10 * p.quiet), 0);
}

TEST(LpiLink, SuspendStopsCreditingAndResumeRestartsInHold) {
  const LpiParams p = LpiParams::table6(LpiMode::kFastWake, 1);
  LpiLink l(p, 0);
  l.suspend(3 * p.hold);  // gated off
  EXPECT_TRUE(l.suspended());
  l.finish(1'000 * p.hold);
  EXPECT_EQ(sum(l.times()), 3 * p.hold);  // nothing while off
  l.resume(1'000 * p.hold);
  EXPECT_EQ(l.stateAt(1'000 * p.hold), LpiState::kHold);
  EXPECT_EQ(l.packetReady(1'000 * p.hold + p.hold / 2), 0);
  EXPECT_EQ(l.times()[at(LpiState::kHold)], p.hold + p.hold / 2);
  EXPECT_EQ(l.times()[at(LpiState::kFastWake)], 2 * p.hold);
}

TEST(LpiLink, CarriedTimesAreKept) {
  LpiTimes carried{};
  carried[at(LpiState::kQuiet)] = 42;
  LpiLink l(LpiParams::table6(LpiMode::kDeepSleep, 0), 1000, carried);
  l.finish(1000 + LpiParams{}.sleepSignal + 8);
  EXPECT_EQ(l.times()[at(LpiState::kQuiet)], 42 + 8);
}

TEST(LpiLink, ParamsValidationNamesTheField) {
  LpiParams p;
  EXPECT_TRUE(p.validate().isOk());
  const auto fails = [](LpiParams q, const char* field) {
    const Status s = q.validate();
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << field;
    EXPECT_NE(s.message().find(field), std::string::npos) << s.message();
  };
  p.hold = -1;
  fails(p, "lpi.hold_ps");
  p = LpiParams{};
  p.hybridFastWake = -5;
  fails(p, "lpi.hybrid_fast_wake_ps");
  p = LpiParams{};
  p.sleepSignal = -1;
  fails(p, "lpi.sleep_signal_ps");
  p = LpiParams{};
  p.wakeDeepSleep = -1;
  fails(p, "lpi.wake_deep_sleep_ps");
  p = LpiParams{};
  p.wakeFastWake = -1;
  fails(p, "lpi.wake_fast_wake_ps");
  p = LpiParams{};
  p.quiet = 0;
  fails(p, "lpi.quiet_ps");
  p = LpiParams{};
  p.refresh = -1;
  fails(p, "lpi.refresh_ps");
  p = LpiParams{};
  p.powerDeepSleep = 1.5;
  fails(p, "lpi.power_deep_sleep");
  p = LpiParams{};
  p.powerFastWake = -0.1;
  fails(p, "lpi.power_fast_wake");
  p = LpiParams{};
  p.powerFastWake = std::numeric_limits<double>::quiet_NaN();
  fails(p, "lpi.power_fast_wake");
  EXPECT_FALSE(LpiParams::table6(LpiMode::kDeepSleep, -1).validate().isOk());
}

TEST(LpiLink, NamesOfStatesModesAndEvents) {
  EXPECT_STREQ(toString(LpiState::kQuiet), "quiet");
  EXPECT_STREQ(toString(LpiState::kWaking), "waking");
  EXPECT_STREQ(toString(LpiMode::kHybrid), "hybrid");
  EXPECT_STREQ(toString(LpiEvent::kTimer), "timer");
}

}  // namespace
}  // namespace ebb::policies
