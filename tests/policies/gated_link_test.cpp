#include "policies/gated_link.h"

#include <gtest/gtest.h>

namespace ebb::policies {
namespace {

constexpr auto idx = [](LinkPowerState s) { return static_cast<std::size_t>(s); };

TEST(GatedLink, TurnOffIsUnusableAtOnceButPoweredForTOff) {
  GatedLink l(1000, 1000, LinkPowerState::kOn, 0);
  EXPECT_EQ(l.request(false, 500), 1500);
  EXPECT_EQ(l.state(500), LinkPowerState::kTurningOff);
  EXPECT_FALSE(isUsable(l.state(600)));
  EXPECT_TRUE(isPowered(l.state(1499)));
  EXPECT_EQ(l.state(1500), LinkPowerState::kOff);
  const auto& t = l.times(2000);
  EXPECT_EQ(t[idx(LinkPowerState::kOn)], 500);
  EXPECT_EQ(t[idx(LinkPowerState::kTurningOff)], 1000);
  EXPECT_EQ(t[idx(LinkPowerState::kOff)], 500);
}

TEST(GatedLink, TurnOnIsPoweredAtOnceUsableAfterTOn) {
  GatedLink l(1000, 300, LinkPowerState::kOff, 0);
  EXPECT_EQ(l.request(true, 100), 1100);
  EXPECT_EQ(l.request(true, 200), 1100);  // repeating is a no-op
  EXPECT_EQ(l.state(1099), LinkPowerState::kTurningOn);
  EXPECT_EQ(l.state(1100), LinkPowerState::kOn);
  EXPECT_EQ(l.transitionEnd(), -1);
  const auto& t = l.times(1100);
  EXPECT_EQ(t[idx(LinkPowerState::kOff)], 100);
  EXPECT_EQ(t[idx(LinkPowerState::kTurningOn)], 1000);
}

TEST(GatedLink, ReversingATransition) {
  GatedLink l(1000, 1000, LinkPowerState::kOn, 0);
  l.request(false, 0);
  EXPECT_EQ(l.request(true, 400), 1400);
  EXPECT_EQ(l.state(1399), LinkPowerState::kTurningOn);
  EXPECT_EQ(l.state(1400), LinkPowerState::kOn);
  EXPECT_EQ(l.request(true, 1500), 1500);
}

}  // namespace
}  // namespace ebb::policies

namespace ebb::policies {
namespace {

constexpr auto at = [](LinkPowerState s) { return static_cast<std::size_t>(s); };

TEST(GatedLink, ReversingATurnOnPowersDownAfterTOff) {
  GatedLink l(1000, 300, LinkPowerState::kOff, 0);
  l.request(true, 0);
  EXPECT_EQ(l.request(false, 600), 900);  // never became usable
  EXPECT_EQ(l.state(899), LinkPowerState::kTurningOff);
  EXPECT_EQ(l.state(900), LinkPowerState::kOff);
  const GatingTimes& t = l.times(1000);
  EXPECT_EQ(t[at(LinkPowerState::kTurningOn)], 600);
  EXPECT_EQ(t[at(LinkPowerState::kTurningOff)], 300);
  EXPECT_EQ(t[at(LinkPowerState::kOff)], 100);
  EXPECT_EQ(t[at(LinkPowerState::kOn)], 0);
}

TEST(GatedLink, ZeroTransitionTimesAreImmediate) {
  GatedLink l(0, 0);
  EXPECT_EQ(l.request(false, 50), 50);
  EXPECT_EQ(l.state(50), LinkPowerState::kOff);
  EXPECT_EQ(l.request(true, 80), 80);
  EXPECT_EQ(l.state(80), LinkPowerState::kOn);
  const GatingTimes& t = l.times(100);
  EXPECT_EQ(t[at(LinkPowerState::kOn)], 70);
  EXPECT_EQ(t[at(LinkPowerState::kOff)], 30);
}

// Every picosecond is credited to exactly one state; usable only when on,
// powered unless off, over a random request sequence.
TEST(GatedLink, TimeIsAccountedOnceAndStatesFollowTheRules) {
  GatedLink l(700, 400);
  TimePs now = 0;
  unsigned x = 12345;
  for (int i = 0; i < 500; ++i) {
    x = x * 1103515245u + 12345u;
    now += static_cast<TimePs>(x % 1500);
    const bool on = (x >> 8) % 2 == 0;
    const LinkPowerState before = l.state(now);
    const TimePs done = l.request(on, now);
    const LinkPowerState s = l.state(now);
    if (before == (on ? LinkPowerState::kOn : LinkPowerState::kOff)) {
      EXPECT_EQ(done, now);
    } else if (before != (on ? LinkPowerState::kTurningOn : LinkPowerState::kTurningOff)) {
      EXPECT_EQ(done, now + (on ? 700 : 400));
      EXPECT_EQ(s, on ? LinkPowerState::kTurningOn : LinkPowerState::kTurningOff);
    }
    EXPECT_EQ(isUsable(s), s == LinkPowerState::kOn);
    EXPECT_EQ(isPowered(s), s != LinkPowerState::kOff);
    const GatingTimes& t = l.times(now);
    EXPECT_EQ(t[0] + t[1] + t[2] + t[3], now);
  }
}

TEST(GatedLink, ValidateTimingNamesTheRule) {
  EXPECT_TRUE(GatedLink::validateTiming(1000, 1000, 2000).isOk());
  const Status s = GatedLink::validateTiming(1000, 1500, 1500);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("period > max(T_on=1000 ps, T_off=1500 ps)"), std::string::npos)
      << s.message();
  EXPECT_NE(GatedLink::validateTiming(-1, 0, 10).message().find("T_on, T_off >= 0"),
            std::string::npos);
}

TEST(GatedLink, StateNames) {
  EXPECT_STREQ(toString(LinkPowerState::kTurningOff), "turning-off");
  EXPECT_STREQ(toString(LinkPowerState::kOff), "off");
}

}  // namespace
}  // namespace ebb::policies
