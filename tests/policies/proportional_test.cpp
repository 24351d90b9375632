// The proportional gating policy (docs/mechanisms.md §2.7): under constant
// load it never reverses a change, for every k up to 64 and loads across the
// whole range; after a load step at k = 32 it has every link the load needs
// within two periods; and it changes several links at once, by the same
// choice rules as the other policies (lowest off on, highest non-MT off, the
// MT link and the last usable link kept).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "policies/gating_policy.h"

namespace ebb::policies {
namespace {

using S = LinkPowerState;

GatingPolicy proportional(double uOn = 0.15, double h = 0.75) {
  return GatingPolicy::create(Thresholds::makeProportional(uOn, h)).value();
}

// A switch with k up links (the first one its MT link), `on` of them on, under
// constant ascending load (in link capacities): u_up = min(1, load / on),
// transitions complete within a period. Returns the links on after each period.
std::vector<int> run(const GatingPolicy& p, int k, double load, int on, int periods,
                     std::vector<Action>* actions = nullptr) {
  std::vector<UpLinkView> up(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i)
    up[static_cast<std::size_t>(i)] = {i < on ? S::kOn : S::kOff, i == 0};
  std::vector<int> trace;
  for (int t = 0; t < periods; ++t) {
    const double u = std::min(1.0, load / on);
    const Decision d = p.decide(SwitchView{up, false, true, true}, u);
    if (actions) actions->push_back(d.action);
    for (int i : d.upIndices) {
      auto& link = up[static_cast<std::size_t>(i)];
      EXPECT_FALSE(d.action == Action::kTurnOff && link.isMt) << "the MT link went off";
      link.state = d.action == Action::kTurnOn ? S::kOn : S::kOff;
      on += d.action == Action::kTurnOn ? 1 : -1;
    }
    EXPECT_GE(on, 1) << "the last usable up link went off";
    trace.push_back(on);
  }
  return trace;
}

// Links needed at utilization u for a load (at least 1, at most k).
int needed(double load, double u, int k) {
  return std::clamp(static_cast<int>(std::ceil(load / u - 1e-9)), 1, k);
}

TEST(Proportional, NeverReversesUnderConstantLoadForAnyKUpTo64) {
  for (double uOn : {0.15, 0.435, 0.8}) {
    for (double h : {0.5, 0.75, 0.95}) {
      const GatingPolicy p = proportional(uOn, h);
      for (int k = 1; k <= 64; ++k) {
        for (int step = 0; step <= 120; ++step) {
          // Loads from 0 to all k links at U_on and beyond, with the
          // breakpoints of both targets hit exactly.
          const double load = k * uOn * 1.2 * step / 120.0;
          for (int start : {1, std::max(1, k / 2), k}) {
            std::vector<Action> actions;
            const std::vector<int> trace = run(p, k, load, start, 40, &actions);
            bool turnedOn = false, turnedOff = false;
            for (Action a : actions) {
              turnedOn = turnedOn || a == Action::kTurnOn;
              turnedOff = turnedOff || a == Action::kTurnOff;
            }
            EXPECT_FALSE(turnedOn && turnedOff)
                << "k=" << k << " load=" << load << " start=" << start << " U_on=" << uOn
                << " h=" << h;
            // Settled: the last periods hold, between what the load needs at
            // U_on and at h * U_on.
            EXPECT_EQ(actions.back(), Action::kHold) << "k=" << k << " load=" << load;
            if (load <= start) {  // measured unsaturated from the start
              EXPECT_GE(trace.back(), needed(load, uOn, k)) << "k=" << k << " load=" << load;
              EXPECT_LE(trace.back(), std::max(needed(load, h * uOn, k), start));
            }
          }
        }
      }
    }
  }
}

TEST(Proportional, AStepAtK32HasEveryLinkItNeedsWithinTwoPeriods) {
  const GatingPolicy p = proportional(0.15);
  const int k = 32;
  for (double load = 0.05; load <= 32.0; load *= 1.1) {
    const std::vector<int> trace = run(p, k, load, 1, 4);
    EXPECT_GE(trace[1], needed(load, 0.15, k)) << "load " << load;
    EXPECT_EQ(trace[1], trace[3]) << "load " << load;  // and holds there
  }
  // The dynamic policy, one link per period, needs 31 periods for the same.
  const GatingPolicy dyn = GatingPolicy::create(Thresholds::makeDynamic(0.15)).value();
  std::vector<UpLinkView> up(32, {S::kOff, false});
  up[0] = {S::kOn, true};
  int on = 1;
  for (; on < 32; ++on) {
    const Decision d = dyn.decide(SwitchView{up, false, true, true}, 1.0);
    ASSERT_EQ(d.upIndices.size(), 1u);
    up[static_cast<std::size_t>(d.upIndex)].state = S::kOn;
  }
  EXPECT_EQ(on, 32);
}

// Backpressure: a switch behind a saturated parent sends little (u_up 0.05)
// and waits for credit most of the period. With the wait trigger the links
// multiply each period the wait persists, as in saturation: 1 -> 7 -> 32.
TEST(Proportional, APersistentWaitMultipliesTheLinksEachPeriod) {
  Thresholds t = Thresholds::makeProportional(0.15, 0.75);
  t.waitOn = 0.1;
  const GatingPolicy p = GatingPolicy::create(t).value();
  std::vector<UpLinkView> up(32, {S::kOff, false});
  up[0] = {S::kOn, true};
  std::vector<int> trace;
  int on = 1;
  for (int period = 0; period < 2; ++period) {
    const Decision d = p.decide(SwitchView{up, false, true, true}, 0.05, 0.9);
    EXPECT_EQ(d.reason.rule, Rule::kCongested);
    for (int i : d.upIndices) {
      up[static_cast<std::size_t>(i)].state = S::kOn;
      ++on;
    }
    trace.push_back(on);
  }
  EXPECT_EQ(trace, (std::vector<int>{7, 32}));
}

TEST(Proportional, ChangesSeveralLinksByTheChoiceRules) {
  const GatingPolicy p = proportional(0.2, 0.5);
  // 8 up links, MT at 2; 0, 2 and 5 on; 7 turning off. Load 3 * 0.5 = 1.5
  // link capacities needs ceil(1.5 / 0.2) = 8: every link not on or turning
  // on, lowest first (the one turning off included).
  std::vector<UpLinkView> up(8, {S::kOff, false});
  up[0].state = S::kOn;
  up[2] = {S::kOn, true};
  up[5].state = S::kOn;
  up[7].state = S::kTurningOff;
  Decision d = p.decide(SwitchView{up, false, true, true}, 0.5);
  EXPECT_EQ(d.action, Action::kTurnOn);
  EXPECT_EQ(d.reason.rule, Rule::kLoadNeedsMore);
  EXPECT_EQ(d.upIndices, (std::vector<int>{1, 3, 4, 6, 7}));
  EXPECT_EQ(d.upIndex, 1);
  // All on, load 0.25 link capacities: fits ceil(0.25 / 0.1) = 3 at h * U_on;
  // the 5 highest non-MT usable links go, the MT link (2) stays.
  for (auto& l : up)
    l.state = S::kOn;
  d = p.decide(SwitchView{up, false, true, true}, 0.25 / 8);
  EXPECT_EQ(d.action, Action::kTurnOff);
  EXPECT_EQ(d.reason.rule, Rule::kLoadNeedsFewer);
  EXPECT_EQ(d.upIndices, (std::vector<int>{7, 6, 5, 4, 3}));
  EXPECT_NE(describe(d).find("load-needs-fewer"), std::string::npos) << describe(d);
  // Idle: down to the MT link alone, never below one usable link.
  d = p.decide(SwitchView{up, false, true, true}, 0.0);
  EXPECT_EQ(d.upIndices, (std::vector<int>{7, 6, 5, 4, 3, 1, 0}));
  // Within the band: hold.
  std::vector<UpLinkView> two{{S::kOn, true}, {S::kOn, false}, {S::kOff, false}};
  // Load 0.3: 2 links at U_on = 0.2, 3 at h * U_on = 0.1: it holds its 2.
  d = p.decide(SwitchView{two, false, true, true}, 0.15);
  EXPECT_EQ(d.action, Action::kHold);
  EXPECT_TRUE(d.upIndices.empty());
}

TEST(Proportional, ThresholdsAreChecked) {
  EXPECT_FALSE(GatingPolicy::create(Thresholds::makeProportional(0.15, 1.0)));
  EXPECT_FALSE(GatingPolicy::create(Thresholds::makeProportional(0.15, 0.0)));
  EXPECT_FALSE(GatingPolicy::create(Thresholds::makeProportional(0.0, 0.5)));
  const auto bad = GatingPolicy::create(Thresholds::makeProportional(0.15, 1.5));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("0 < h < 1"), std::string::npos);
}

// The congestion trigger (docs/mechanisms.md §2.8): queues on the up links
// bring a link on whatever u_up says, and hold every link on.
TEST(CongestionTrigger, WaitingForCreditBringsALinkOnAndHoldsTheRest) {
  Thresholds dynamic = Thresholds::makeDynamic(0.15);
  dynamic.waitOn = 0.1;
  const GatingPolicy p = GatingPolicy::create(dynamic).value();
  std::vector<UpLinkView> up{{S::kOn, true}, {S::kOn, false}, {S::kOff, false}, {S::kOff, false}};
  const SwitchView view{up, false, true, true};
  // u_up 0.01 alone would turn link 1 off; waiting 30% of the period turns 2 on.
  EXPECT_EQ(p.decide(view, 0.01).action, Action::kTurnOff);
  Decision d = p.decide(view, 0.01, 0.3);
  EXPECT_EQ(d.action, Action::kTurnOn);
  EXPECT_EQ(d.upIndices, std::vector<int>{2});
  EXPECT_EQ(d.reason.rule, Rule::kCongested);
  EXPECT_NE(describe(d).find("waited 0.3 of the period > W_on=0.1"), std::string::npos)
      << describe(d);
  // At or below W_on it does not fire; with every link on it holds.
  EXPECT_EQ(p.decide(view, 0.01, 0.1).action, Action::kTurnOff);
  std::vector<UpLinkView> all(4, {S::kOn, false});
  all[0].isMt = true;
  d = p.decide(SwitchView{all, false, true, true}, 0.01, 0.5);
  EXPECT_EQ(d.action, Action::kHold);
  EXPECT_EQ(d.reason.rule, Rule::kNothingToTurnOn);

  // Proportional: sized for the busy share (sending or waiting), at least one
  // link more than it has, and nothing off.
  Thresholds prop = Thresholds::makeProportional(0.15, 0.75);
  prop.waitOn = 0.1;
  const GatingPolicy q = GatingPolicy::create(prop).value();
  d = q.decide(view, 0.01, 0.3);  // load 0.02 needs 1; busy 0.31 x 2 links needs 5 (cap 4)
  EXPECT_EQ(d.upIndices, (std::vector<int>{2, 3}));
  EXPECT_EQ(d.reason.rule, Rule::kCongested);
  d = q.decide(view, 0.01, 0.11);  // busy 0.12 x 2 = 0.24: 2 links, so one more than it has
  EXPECT_EQ(d.upIndices, std::vector<int>{2});
  EXPECT_EQ(d.reason.rule, Rule::kCongested);
  d = q.decide(view, 0.5, 0.3);  // load 1.0 needs 7 (capped at 4): needs more anyway
  EXPECT_EQ(d.upIndices, (std::vector<int>{2, 3}));
  EXPECT_EQ(d.reason.rule, Rule::kLoadNeedsMore);
  // W_on is checked.
  prop.waitOn = 1.0;
  EXPECT_FALSE(GatingPolicy::create(prop));
}

}  // namespace
}  // namespace ebb::policies
