#include "policies/gating_policy.h"

#include <gtest/gtest.h>

#include <vector>

namespace ebb::policies {
namespace {

std::vector<UpLinkView> links(int k, int on, int mtIndex = 0) {
  std::vector<UpLinkView> v(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) {
    v[static_cast<std::size_t>(i)] = {i < on ? LinkPowerState::kOn : LinkPowerState::kOff,
                                      i == mtIndex};
  }
  return v;
}

SwitchView view(const std::vector<UpLinkView>& up, bool mtSwitch, bool inputs = true) {
  return SwitchView{up, false, mtSwitch, inputs};
}

TEST(GatingPolicy, TurnsOffTheHighestNonMtLinkAndOnTheLowestOffLink) {
  const GatingPolicy p(Thresholds::makeStatic(0.03, 0.15));
  auto up = links(4, 3);
  Decision d = p.decide(view(up, true), 0.01);
  EXPECT_EQ(d.action, Action::kTurnOff);
  EXPECT_EQ(d.upIndex, 2);
  EXPECT_EQ(d.reason.rule, Rule::kBelowOff);
  EXPECT_EQ(d.reason.linksOn, 3);
  EXPECT_DOUBLE_EQ(d.reason.threshold, 0.03);
  EXPECT_DOUBLE_EQ(d.reason.effectiveThreshold, 0.75 * 0.03);
  d = p.decide(view(up, true), 0.2);
  EXPECT_EQ(d.action, Action::kTurnOn);
  EXPECT_EQ(d.upIndex, 3);
  EXPECT_EQ(d.reason.rule, Rule::kAboveOn);
  d = p.decide(view(up, true), 0.1);
  EXPECT_EQ(d.action, Action::kHold);
  EXPECT_EQ(d.reason.rule, Rule::kWithinBand);
}

TEST(GatingPolicy, TurningOnCountsAsOnAndTurningOffAsOff) {
  const GatingPolicy p(Thresholds::makeDynamic(0.15));
  auto up = links(4, 2);
  up[1].state = LinkPowerState::kTurningOn;
  up[3].state = LinkPowerState::kTurningOff;
  Decision d = p.decide(view(up, true), 0.5);
  EXPECT_EQ(d.reason.linksOn, 2);
  EXPECT_EQ(d.upIndex, 2);  // lowest not on/turning on
  d = p.decide(view(up, true), 0.0);
  // Only usable (kOn) non-MT links are turned off: index 1 is still turning on.
  EXPECT_EQ(d.action, Action::kHold);
  EXPECT_EQ(d.reason.rule, Rule::kNothingToTurnOff);
}

TEST(GatingPolicy, MtUpLinkIsNeverChosen) {
  for (auto thresholds : {Thresholds::makeStatic(0.03, 0.15), Thresholds::makeDynamic(0.15)}) {
    const GatingPolicy p(thresholds);
    for (int k = 1; k <= 16; ++k) {
      for (int mt = 0; mt < k; ++mt) {
        for (int on = 0; on <= k; ++on) {
          auto up = links(k, on, mt);
          up[static_cast<std::size_t>(mt)].state = LinkPowerState::kOn;
          for (bool inputs : {true, false}) {
            for (double u : {0.0, 0.001, 0.02, 0.5}) {
              const Decision d = p.decide(view(up, true, inputs), u);
              if (d.action == Action::kTurnOff) {
                EXPECT_NE(d.upIndex, mt) << "k=" << k << " on=" << on << " u=" << u;
                EXPECT_FALSE(up[static_cast<std::size_t>(d.upIndex)].isMt);
              }
            }
          }
        }
      }
    }
  }
}

TEST(GatingPolicy, LastUpLinkOfANonMtSwitchGoesOnlyWhenInputsAreOff) {
  for (auto thresholds : {Thresholds::makeStatic(0.03, 0.15), Thresholds::makeDynamic(0.15)}) {
    const GatingPolicy p(thresholds);
    for (int k = 2; k <= 16; ++k) {
      auto up = links(k, 1, /*mtIndex=*/-1);  // non-MT switch: no MT link
      for (double u : {0.0, 0.01, 0.1}) {
        Decision d = p.decide(view(up, false, /*inputs=*/true), u);
        EXPECT_NE(d.action, Action::kTurnOff) << "k=" << k << " u=" << u;
      }
      Decision d = p.decide(view(up, false, /*inputs=*/false), 0.0);
      EXPECT_EQ(d.action, Action::kTurnOff);
      EXPECT_EQ(d.reason.rule, Rule::kInputsOff);
      EXPECT_EQ(d.upIndex, 0);
    }
  }
}

TEST(GatingPolicy, MtSwitchKeepsItsMtLinkEvenWithoutInputs) {
  const GatingPolicy p(Thresholds::makeStatic(0.03, 0.15));
  auto up = links(4, 1, 0);
  const Decision d = p.decide(view(up, true, false), 0.0);
  EXPECT_EQ(d.action, Action::kHold);
}

TEST(GatingPolicy, UpwardPropagation) {
  auto up = links(4, 0, -1);
  Decision d = propagateUp(view(up, false, true));
  EXPECT_EQ(d.action, Action::kTurnOn);
  EXPECT_EQ(d.upIndex, 0);
  EXPECT_EQ(d.reason.rule, Rule::kPropagateUp);
  // decide() applies it too, whatever the utilization.
  const GatingPolicy p(Thresholds::makeDynamic(0.15));
  EXPECT_EQ(p.decide(view(up, false, true), 0.0).action, Action::kTurnOn);
  EXPECT_EQ(propagateUp(view(up, false, false)).action, Action::kHold);
  const SwitchView root{std::span<const UpLinkView>{}, true, true, true};
  EXPECT_EQ(propagateUp(root).action, Action::kHold);
  EXPECT_EQ(p.decide(root, 0.9).reason.rule, Rule::kRoot);
}

TEST(GatingPolicy, DownLinkRule) {
  EXPECT_TRUE(downLinksOn(true, false));
  EXPECT_TRUE(downLinksOn(false, true));
  EXPECT_FALSE(downLinksOn(false, false));
}

// Constant load L (fraction of the switch's full up-link throughput): u_up =
// L k / i. Any off followed by on (or on followed by off) in consecutive
// periods is an oscillation.
int oscillations(const GatingPolicy& p, int k, double load, int startOn) {
  auto up = links(k, startOn, 0);
  int on = startOn;
  Action last = Action::kHold;
  int count = 0;
  for (int period = 0; period < 4 * k + 4; ++period) {
    const double u = std::min(1.0, load * k / on);
    const Decision d = p.decide(view(up, true), u);
    if ((d.action == Action::kTurnOn && last == Action::kTurnOff) ||
        (d.action == Action::kTurnOff && last == Action::kTurnOn)) {
      ++count;
    }
    if (d.action == Action::kTurnOn) {
      up[static_cast<std::size_t>(d.upIndex)].state = LinkPowerState::kOn;
      ++on;
    } else if (d.action == Action::kTurnOff) {
      up[static_cast<std::size_t>(d.upIndex)].state = LinkPowerState::kOff;
      --on;
    }
    last = d.action;
  }
  return count;
}

TEST(GatingPolicy, DynamicThresholdsNeverOscillate) {
  for (int k = 2; k <= 16; ++k) {
    for (double uOn : {0.05, 0.15, 0.435, 0.8, 1.0}) {
      const GatingPolicy p(Thresholds::makeDynamic(uOn));
      for (int step = 0; step <= 400; ++step) {
        const double load = step / 400.0;
        for (int start : {1, k}) {
          EXPECT_EQ(oscillations(p, k, load, start), 0)
              << "k=" << k << " U_on=" << uOn << " load=" << load << " start=" << start;
        }
      }
    }
  }
}

TEST(GatingPolicy, ValidStaticThresholdsNeverOscillate) {
  for (int k = 2; k <= 16; ++k) {
    for (auto [off, on] : {std::pair{0.03, 0.15}, std::pair{0.085, 0.435}, std::pair{0.2, 0.41},
                           std::pair{0.49, 0.99}}) {
      const GatingPolicy p(Thresholds::makeStatic(off, on));
      ASSERT_TRUE(p.thresholds().validate().isOk());
      for (int step = 0; step <= 400; ++step) {
        const double load = step / 400.0;
        for (int start : {1, k}) {
          EXPECT_EQ(oscillations(p, k, load, start), 0)
              << "k=" << k << " [" << off << "," << on << "] load=" << load;
        }
      }
    }
  }
}

// The rule is needed: thresholds with U_on <= 2 U_off do oscillate somewhere.
TEST(GatingPolicy, InvalidStaticThresholdsDoOscillate) {
  const GatingPolicy p(Thresholds::makeStatic(0.1, 0.15));
  int total = 0;
  for (int step = 0; step <= 400; ++step)
    total += oscillations(p, 4, step / 400.0, 4);
  EXPECT_GT(total, 0);
}

}  // namespace
}  // namespace ebb::policies
