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
