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

TEST(GatingPolicy, NeverLeavesANonMtSwitchWithoutAUsableUpLinkWhileInputsAreOn) {
  const GatingPolicy p(Thresholds::makeStatic(0.03, 0.15));
  auto up = links(4, 2, -1);
  up[1].state = LinkPowerState::kTurningOn;  // counted as on, not yet usable
  Decision d = p.decide(view(up, false, true), 0.0);
  EXPECT_EQ(d.action, Action::kHold);
  EXPECT_EQ(d.reason.rule, Rule::kNothingToTurnOff);
  up[1].state = LinkPowerState::kOn;
  d = p.decide(view(up, false, true), 0.0);
  EXPECT_EQ(d.action, Action::kTurnOff);
  EXPECT_EQ(d.upIndex, 1);
}

TEST(GatingPolicy, ReasonNamesTheThresholdThatFired) {
  const GatingPolicy p(Thresholds::makeDynamic(0.2));
  auto up = links(4, 3);
  Decision d = p.decide(view(up, true), 0.05);
  EXPECT_EQ(d.action, Action::kTurnOff);
  EXPECT_STREQ(thresholdName(d.reason.rule), "U_off(i)");
  EXPECT_DOUBLE_EQ(d.reason.threshold, 0.2 * 2 / 4);  // U_off(3) = U_on (3-1)/4
  EXPECT_DOUBLE_EQ(d.reason.effectiveThreshold, 3.0 / 4 * 0.2 * 2 / 4);
  EXPECT_EQ(d.reason.upLinks, 4);
  EXPECT_EQ(describe(d),
            "turn-off up[2]: u_up<U_off, u_up=0.05 < U_off(3)=0.1 (effective 0.075; 3 of 4 up "
            "links on)");
  d = p.decide(view(up, true), 0.5);
  EXPECT_STREQ(thresholdName(d.reason.rule), "U_on");
  EXPECT_NE(describe(d).find("turn-on up[3]: u_up>U_on, u_up=0.5 > U_on=0.2"), std::string::npos)
      << describe(d);
  EXPECT_STREQ(thresholdName(Rule::kPropagateUp), "");
}

TEST(GatingPolicy, CreateValidatesTheThresholds) {
  const auto ok = GatingPolicy::create(Thresholds::makeStatic(0.03, 0.15));
  ASSERT_TRUE(ok.isOk());
  EXPECT_DOUBLE_EQ(ok->thresholds().uOff, 0.03);
  const auto bad = GatingPolicy::create(Thresholds::makeStatic(0.1, 0.15));
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().message(),
            "static thresholds [U_off=0.1, U_on=0.15] break the rule U_on > 2*U_off");
  EXPECT_FALSE(GatingPolicy::create(Thresholds::makeDynamic(1.5)).isOk());
}

TEST(GatingPolicy, ValidateViewNamesTheRule) {
  auto up = links(4, 4, 0);
  EXPECT_TRUE(validateView(view(up, true)).isOk());
  EXPECT_NE(validateView(view(up, false)).message().find("a non-MT switch has no MT up link"),
            std::string::npos);
  auto noMt = links(4, 4, -1);
  EXPECT_TRUE(validateView(view(noMt, false)).isOk());
  EXPECT_NE(validateView(view(noMt, true)).message().find("exactly one MT up link (has 0)"),
            std::string::npos);
  EXPECT_EQ(validateView(SwitchView{up, true, true, true}).code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(validateView(SwitchView{{}, true, true, true}).isOk());
  EXPECT_FALSE(validateView(SwitchView{{}, false, false, true}).isOk());
}

}  // namespace
}  // namespace ebb::policies
