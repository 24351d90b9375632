// The guard's turn-off rate rules (RateLimits): at most N turn-offs in a
// sliding window, and a minimum dwell before a link that came on may go off.
// noteOff/noteOn keep the history; checkRate only reads it (and ages it out).
#include <gtest/gtest.h>

#include <string>

#include "agent/safety_guard.h"
#include "fabric/kary_tree.h"

namespace ebb::agent {
namespace {

using fabric::Direction;
using fabric::LinkId;

bool mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

class SafetyGuardRate : public ::testing::Test {
 protected:
  const fabric::Topology topo_ = fabric::KAryNTree::make(2, 2).value().build();
  const fabric::MinimalTree mt_ = fabric::MinimalTree::build(topo_).value();
  SafetyGuard guard_{topo_, mt_, fabric::LinkStates::allOn(topo_)};
  const LinkId a_{0};
  const LinkId b_{1};
};

TEST_F(SafetyGuardRate, ValidateNamesTheBadField) {
  EXPECT_TRUE(RateLimits{}.validate().isOk());
  EXPECT_TRUE((RateLimits{3, milliseconds(10), milliseconds(5), {}}).validate().isOk());
  const Status negMax = RateLimits{-1, milliseconds(10), 0, {}}.validate();
  EXPECT_FALSE(negMax.isOk());
  EXPECT_TRUE(mentions(negMax, "max_off_per_window")) << negMax.message();
  const Status noWindow = RateLimits{2, 0, 0, {}}.validate();
  EXPECT_FALSE(noWindow.isOk());
  EXPECT_TRUE(mentions(noWindow, "rate window")) << noWindow.message();
  const Status negDwell = RateLimits{0, 0, -1, {}}.validate();
  EXPECT_FALSE(negDwell.isOk());
  EXPECT_TRUE(mentions(negDwell, "min_dwell")) << negDwell.message();
}

TEST_F(SafetyGuardRate, ZeroLimitsAreUnlimited) {
  // Default limits: any number of turn-offs at one instant, and a link that
  // has just come on may go off at once.
  for (int i = 0; i < 100; ++i)
    guard_.noteOff(a_, milliseconds(1));
  guard_.noteOn(a_, milliseconds(1));
  EXPECT_TRUE(guard_.checkRate(a_, milliseconds(1)).isOk());
  EXPECT_TRUE(guard_.checkRate(b_, milliseconds(1)).isOk());
  EXPECT_EQ(guard_.refused(), 0u);
}

TEST_F(SafetyGuardRate, RefusesTheTurnOffAfterNInOneWindow) {
  guard_.setRateLimits({2, milliseconds(10), 0, {}});
  guard_.noteOff(a_, milliseconds(0));
  // checkRate only reads the history: asking twice does not use up the limit.
  EXPECT_TRUE(guard_.checkRate(a_, milliseconds(1)).isOk());
  EXPECT_TRUE(guard_.checkRate(a_, milliseconds(1)).isOk());
  guard_.noteOff(a_, milliseconds(1));
  const Status s = guard_.checkRate(a_, milliseconds(5));
  EXPECT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(mentions(s, "rate limit: 2 links already turned off in the last 10 ms"))
      << s.message();
  // The limit is fabric-wide, not per link.
  EXPECT_FALSE(guard_.checkRate(b_, milliseconds(5)).isOk());
  EXPECT_EQ(guard_.refused(), 2u);
}

TEST_F(SafetyGuardRate, TheWindowSlidesPastTheOldestTurnOff) {
  // The window is (now - window, now]: a turn-off at t counts until just
  // before t + window and no longer at t + window.
  guard_.setRateLimits({2, milliseconds(10), 0, {}});
  guard_.noteOff(a_, milliseconds(0));
  guard_.noteOff(a_, milliseconds(1));
  EXPECT_FALSE(guard_.checkRate(a_, milliseconds(10) - 1).isOk());
  EXPECT_TRUE(guard_.checkRate(a_, milliseconds(10)).isOk());
  guard_.noteOff(a_, milliseconds(10));
  // Now the turn-offs at 1 ms and 10 ms fill the window until 11 ms.
  EXPECT_FALSE(guard_.checkRate(a_, milliseconds(11) - 1).isOk());
  EXPECT_TRUE(guard_.checkRate(a_, milliseconds(11)).isOk());
  // Long after, the whole history has aged out.
  EXPECT_TRUE(guard_.checkRate(a_, milliseconds(100)).isOk());
}

TEST_F(SafetyGuardRate, ALinkStaysOnForTheMinimumDwell) {
  guard_.setRateLimits({0, 0, milliseconds(5), {}});
  const TimePs on = milliseconds(100);
  guard_.noteOn(a_, on);
  const Status s = guard_.checkRate(a_, on + milliseconds(5) - 1);
  EXPECT_FALSE(s.isOk());
  EXPECT_TRUE(mentions(s, "rate limit: " + topo_.describeLink(a_) + " came on")) << s.message();
  EXPECT_TRUE(mentions(s, "(minimum dwell 5 ms)")) << s.message();
  EXPECT_TRUE(guard_.checkRate(a_, on + milliseconds(5)).isOk());  // exactly t + minDwell
  // Only the link that came on is held; one never noted on is free.
  EXPECT_TRUE(guard_.checkRate(b_, on).isOk());
  EXPECT_EQ(guard_.refused(), 1u);
}

TEST_F(SafetyGuardRate, ComingOnAgainRestartsTheDwell) {
  guard_.setRateLimits({0, 0, milliseconds(5), {}});
  guard_.noteOn(a_, milliseconds(0));
  guard_.noteOn(a_, milliseconds(4));
  EXPECT_FALSE(guard_.checkRate(a_, milliseconds(5)).isOk());
  EXPECT_FALSE(guard_.checkRate(a_, milliseconds(9) - 1).isOk());
  EXPECT_TRUE(guard_.checkRate(a_, milliseconds(9)).isOk());
}

TEST_F(SafetyGuardRate, BothRulesApplyTogether) {
  guard_.setRateLimits({1, milliseconds(10), milliseconds(5), {}});
  guard_.noteOn(a_, milliseconds(0));
  guard_.noteOff(a_, milliseconds(20));  // some other link went off
  // a_ is past its dwell, but the window is full.
  const Status s = guard_.checkRate(a_, milliseconds(25));
  EXPECT_TRUE(mentions(s, "already turned off")) << s.message();
  EXPECT_TRUE(guard_.checkRate(a_, milliseconds(30)).isOk());
  // b_ came on recently: the window is free again, the dwell is not.
  guard_.noteOn(b_, milliseconds(28));
  const Status d = guard_.checkRate(b_, milliseconds(30));
  EXPECT_TRUE(mentions(d, "minimum dwell")) << d.message();
}

TEST_F(SafetyGuardRate, RecordOffAndOnChangeTheViewNotTheRateHistory) {
  // recordOff/recordOn keep the link states the connectivity checks use; the
  // rate history is noteOff/noteOn's (the agent calls both).
  guard_.setRateLimits({1, milliseconds(10), milliseconds(5), {}});
  const LinkId spare = [&] {
    for (LinkId::rep_type l = 0; l < topo_.numLinks(); ++l)
      if (!mt_.containsLink(LinkId(l))) return LinkId(l);
    return LinkId();
  }();
  ASSERT_TRUE(spare.valid());
  guard_.recordOff(spare, Direction::kUp);
  EXPECT_FALSE(guard_.states().isOn(spare, Direction::kUp));
  EXPECT_TRUE(guard_.states().isOn(spare, Direction::kDown));
  EXPECT_TRUE(guard_.checkRate(a_, milliseconds(1)).isOk());  // no turn-off counted
  guard_.recordOn(spare, Direction::kUp);
  EXPECT_TRUE(guard_.states().isFullyOn(spare));
  EXPECT_TRUE(guard_.checkRate(spare, milliseconds(1)).isOk());  // no dwell started
  guard_.noteOff(a_, milliseconds(1));
  EXPECT_FALSE(guard_.checkRate(a_, milliseconds(2)).isOk());
  EXPECT_TRUE(guard_.checkAll().isOk());
}

}  // namespace
}  // namespace ebb::agent
