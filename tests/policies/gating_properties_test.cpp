// Property tests of the gating policy: no oscillation under constant load for
// every k <= 16 and every load (checked at every breakpoint where a decision
// can change, just below and above it, between breakpoints and on a grid), the
// MT up link never chosen, the last up link rule, and the link choice rules
// over every state vector of small switches and random ones up to k = 16.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "policies/gating_policy.h"

namespace ebb::policies {
namespace {

using S = LinkPowerState;

struct RunLog {
  std::vector<Action> actions;
  int finalOn = 0;
};

// A switch with k up links, the first `startOn` on, under constant ascending
// traffic (in units of one up link's capacity): u_up = min(1, traffic / i),
// the traffic spread over the i links on. Transitions complete within a period.
RunLog runConstant(const GatingPolicy& p, int k, double traffic, int startOn, bool mtSwitch,
                   int periods) {
  std::vector<UpLinkView> up(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i)
    up[static_cast<std::size_t>(i)] = {i < startOn ? S::kOn : S::kOff, mtSwitch && i == 0};
  int on = startOn;
  RunLog r;
  for (int t = 0; t < periods; ++t) {
    const double u = on == 0 ? 0.0 : std::min(1.0, traffic / on);
    const Decision d = p.decide(SwitchView{up, false, mtSwitch, true}, u);
    r.actions.push_back(d.action);
    if (d.action == Action::kTurnOn) {
      up[static_cast<std::size_t>(d.upIndex)].state = S::kOn;
      ++on;
    } else if (d.action == Action::kTurnOff) {
      up[static_cast<std::size_t>(d.upIndex)].state = S::kOff;
      --on;
    }
  }
  r.finalOn = on;
  return r;
}

// Off then on, or on then off, in consecutive periods.
int reversals(const RunLog& r) {
  int n = 0;
  for (std::size_t i = 1; i < r.actions.size(); ++i) {
    const Action a = r.actions[i - 1], b = r.actions[i];
    n += (a == Action::kTurnOff && b == Action::kTurnOn) ||
                 (a == Action::kTurnOn && b == Action::kTurnOff)
             ? 1
             : 0;
  }
  return n;
}

// Under constant load the switch moves one way only, then holds for good.
bool monotoneThenSteady(const RunLog& r) {
  bool sawOn = false, sawOff = false, held = false;
  for (Action a : r.actions) {
    if (a == Action::kHold) {
      held = true;
      continue;
    }
    if (held) return false;  // a change after a hold under the same load
    (a == Action::kTurnOn ? sawOn : sawOff) = true;
  }
  return !(sawOn && sawOff) && held;
}

// Every traffic value at which some decision changes (u_up crosses a
// threshold or saturates), the neighbouring doubles, the midpoints between
// them, and a regular grid: all the load classes a constant load can fall in.
std::vector<double> loadsToTry(const Thresholds& t, int k) {
  std::vector<double> b{0.0, static_cast<double>(k)};
  for (int i = 1; i <= k; ++i) {
    b.push_back(t.onThreshold() * i);
    b.push_back(t.offThreshold(i, k) * i);
    b.push_back(static_cast<double>(i));
  }
  std::sort(b.begin(), b.end());
  std::vector<double> out;
  for (std::size_t j = 0; j < b.size(); ++j) {
    for (double x : {b[j], std::nextafter(b[j], -1.0), std::nextafter(b[j], 1e9)})
      if (x >= 0) out.push_back(x);
    if (j + 1 < b.size()) out.push_back((b[j] + b[j + 1]) / 2);
  }
  for (int g = 0; g <= 50; ++g)
    out.push_back(k * g / 50.0);
  return out;
}

void expectStable(const Thresholds& t, int k, const char* what) {
  const GatingPolicy p(t);
  for (double traffic : loadsToTry(t, k)) {
    for (int start = 1; start <= k; ++start) {
      for (bool mt : {true, false}) {
        const RunLog r = runConstant(p, k, traffic, start, mt, 2 * k + 3);
        ASSERT_EQ(reversals(r), 0) << what << " " << t.describe() << " k=" << k
                                   << " traffic=" << traffic << " start=" << start;
        ASSERT_TRUE(monotoneThenSteady(r)) << what << " " << t.describe() << " k=" << k
                                           << " traffic=" << traffic << " start=" << start;
        ASSERT_GE(r.finalOn, 1);
      }
    }
  }
}

TEST(GatingProperties, DynamicThresholdsNeverOscillate) {
  for (int k = 1; k <= 16; ++k) {
    for (double uOn : {0.01, 0.05, 0.15, 0.3, 0.435, 0.5, 0.8, 0.99, 1.0}) {
      const Thresholds t = Thresholds::makeDynamic(uOn);
      ASSERT_TRUE(t.validate().isOk());
      expectStable(t, k, "dynamic");
    }
  }
}

// Valid pairs across the map of possible thresholds, including pairs right at
// the edge U_on = 2 U_off (plus the smallest step).
TEST(GatingProperties, ValidStaticThresholdsNeverOscillate) {
  std::vector<Thresholds> pairs;
  for (double off : {0.001, 0.01, 0.03, 0.05, 0.085, 0.1, 0.2, 0.3, 0.4, 0.49, 0.4999}) {
    for (double on :
         {std::nextafter(2 * off, 2.0), 2 * off + 0.005, 2 * off + 0.1, (2 * off + 1) / 2, 1.0}) {
      const Thresholds t = Thresholds::makeStatic(off, on);
      if (on <= 1.0 && t.validate().isOk()) pairs.push_back(t);
    }
  }
  ASSERT_GT(pairs.size(), 40u);
  for (int k = 1; k <= 16; ++k) {
    for (const Thresholds& t : pairs)
      expectStable(t, k, "static");
  }
}

// The validity rule is needed: every pair with U_on < 2 U_off oscillates for
// every k >= 2, at the load that puts u_up in (U_on/2, U_off) on two links.
TEST(GatingProperties, StaticThresholdsBreakingTheRuleOscillate) {
  for (double off : {0.05, 0.1, 0.2, 0.4}) {
    for (double on : {1.01 * off, 1.5 * off, 1.99 * off}) {
      const Thresholds t = Thresholds::makeStatic(off, on);
      ASSERT_FALSE(t.validate().isOk());
      const GatingPolicy p(t);
      for (int k = 2; k <= 16; ++k) {
        const double traffic = 2 * (on / 2 + off) / 2;  // u_up on two links is the midpoint
        const RunLog r = runConstant(p, k, traffic, 2, true, 6);
        EXPECT_GT(reversals(r), 0) << t.describe() << " k=" << k;
      }
    }
  }
}

// --- Decisions over every state of small switches, random ones up to k = 16 ---

struct Case {
  std::vector<UpLinkView> up;
  bool isMtSwitch;
  bool inputs;
  double u;
};

int countIf(const std::vector<UpLinkView>& up, bool (*pred)(LinkPowerState)) {
  int n = 0;
  for (const UpLinkView& l : up)
    n += pred(l.state) ? 1 : 0;
  return n;
}

// The rules of docs/mechanisms.md section 2, checked on one decision.
void checkDecision(const GatingPolicy& p, const Case& c) {
  const SwitchView v{c.up, false, c.isMtSwitch, c.inputs};
  const Decision d = p.decide(v, c.u);
  const int k = static_cast<int>(c.up.size());
  const int on = countIf(c.up, isOnOrTurningOn);
  const int usable = countIf(c.up, isUsable);
  int lowestOff = -1;
  for (int i = k - 1; i >= 0; --i)
    if (!isOnOrTurningOn(c.up[static_cast<std::size_t>(i)].state)) lowestOff = i;
  const auto at = [&](int i) { return c.up[static_cast<std::size_t>(i)]; };
  const auto ctx = [&] {
    std::string s = "k=" + std::to_string(k) + " mtSwitch=" + std::to_string(c.isMtSwitch) +
                    " inputs=" + std::to_string(c.inputs) + " u=" + std::to_string(c.u) + " [";
    for (const UpLinkView& l : c.up)
      s += std::string(toString(l.state)) + (l.isMt ? "*" : "") + " ";
    return s + "] -> " + describe(d);
  };
  EXPECT_EQ(d.reason.linksOn, on) << ctx();
  EXPECT_EQ(d.reason.upLinks, k) << ctx();
  if (d.action == Action::kHold) {
    EXPECT_EQ(d.upIndex, -1) << ctx();
  } else {
    ASSERT_TRUE(d.upIndex >= 0 && d.upIndex < k) << ctx();
  }
  if (d.action == Action::kTurnOff) {
    // Never the MT up link, never a link that is not usable.
    EXPECT_FALSE(at(d.upIndex).isMt) << ctx();
    EXPECT_EQ(at(d.upIndex).state, S::kOn) << ctx();
    // The last up link of a non-MT switch goes only when its ascending inputs
    // are all off; while traffic may ascend a usable up link remains.
    if (!c.isMtSwitch && on == 1) {
      EXPECT_FALSE(c.inputs) << ctx();
    }
    if (c.isMtSwitch || c.inputs) {
      EXPECT_GE(usable - 1, 1) << ctx();
    }
    // The highest-numbered non-MT up link that is on.
    for (int i = d.upIndex + 1; i < k; ++i)
      EXPECT_FALSE(at(i).state == S::kOn && !at(i).isMt) << ctx();
    if (d.reason.rule == Rule::kBelowOff) {
      EXPECT_LT(c.u, p.thresholds().offThreshold(on, k)) << ctx();
    } else {
      EXPECT_EQ(d.reason.rule, Rule::kInputsOff) << ctx();
      EXPECT_FALSE(c.isMtSwitch || c.inputs) << ctx();
    }
  }
  // A switch that can receive ascending traffic: propagation, and turning on
  // above U_on, happen whenever a link can be turned on; below U_off a spare
  // non-MT usable link goes off.
  const bool canAscend = c.isMtSwitch || c.inputs;
  bool spare = false;
  for (const UpLinkView& l : c.up)
    spare = spare || (l.state == S::kOn && !l.isMt);
  if (d.action == Action::kTurnOn) {
    EXPECT_TRUE(canAscend) << ctx();
    // The lowest-numbered up link that is off or turning off.
    EXPECT_EQ(d.upIndex, lowestOff) << ctx();
    if (d.reason.rule == Rule::kAboveOn) {
      EXPECT_GT(c.u, p.thresholds().onThreshold()) << ctx();
    } else {
      EXPECT_EQ(d.reason.rule, Rule::kPropagateUp) << ctx();
      EXPECT_TRUE(c.inputs) << ctx();
      EXPECT_EQ(on, 0) << ctx();
    }
  }
  if (canAscend) {
    if (lowestOff >= 0 && ((c.inputs && on == 0) || c.u > p.thresholds().onThreshold())) {
      EXPECT_EQ(d.action, Action::kTurnOn) << ctx();
    }
    if (c.u < p.thresholds().offThreshold(on, k) && spare && usable >= 2 &&
        !(c.inputs && on == 0) && c.u <= p.thresholds().onThreshold()) {
      EXPECT_EQ(d.action, Action::kTurnOff) << ctx();
    }
  } else {
    // No ascending input on a non-MT switch: shed one up link per period.
    EXPECT_EQ(d.action, spare ? Action::kTurnOff : Action::kHold) << ctx();
  }
}

std::vector<double> utilizations(const Thresholds& t, int k) {
  std::vector<double> u{0.0, 1e-12, 1.0, 0.5};
  for (int i = 1; i <= k; ++i) {
    for (double x : {t.offThreshold(i, k), t.onThreshold()}) {
      u.push_back(x);
      u.push_back(std::nextafter(x, -1.0));
      u.push_back(std::nextafter(x, 2.0));
    }
  }
  return u;
}

const Thresholds kPolicies[] = {Thresholds::makeStatic(0.03, 0.15),
                                Thresholds::makeStatic(0.085, 0.435), Thresholds::makeDynamic(0.15),
                                Thresholds::makeDynamic(0.435)};

TEST(GatingProperties, EveryStateOfSwitchesUpToK5) {
  constexpr S kStates[] = {S::kOn, S::kTurningOn, S::kTurningOff, S::kOff};
  std::size_t checked = 0;
  for (const Thresholds& t : kPolicies) {
    const GatingPolicy p(t);
    for (int k = 1; k <= 5; ++k) {
      const std::vector<double> us = utilizations(t, k);
      int combos = 1;
      for (int i = 0; i < k; ++i)
        combos *= 4;
      for (int mt = -1; mt < k; ++mt) {  // -1: no MT up link
        for (int code = 0; code < combos; ++code) {
          Case c;
          c.up.resize(static_cast<std::size_t>(k));
          for (int i = 0, x = code; i < k; ++i, x /= 4)
            c.up[static_cast<std::size_t>(i)] = {kStates[x % 4], i == mt};
          for (bool inputs : {true, false}) {
            c.inputs = inputs;
            c.isMtSwitch = mt >= 0;
            for (double u : us) {
              c.u = u;
              checkDecision(p, c);
              ++checked;
              if (::testing::Test::HasFailure()) return;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1'000'000u);
}

TEST(GatingProperties, RandomStatesUpTo16UpLinks) {
  std::mt19937_64 rng(20240607);
  constexpr S kStates[] = {S::kOn, S::kTurningOn, S::kTurningOff, S::kOff};
  for (const Thresholds& t : kPolicies) {
    const GatingPolicy p(t);
    for (int n = 0; n < 50'000; ++n) {
      const int k = 1 + static_cast<int>(rng() % 16);
      const int mt = static_cast<int>(rng() % static_cast<unsigned>(k + 1)) - 1;
      Case c;
      c.up.resize(static_cast<std::size_t>(k));
      // Mostly on or off, sometimes in transition.
      for (int i = 0; i < k; ++i) {
        const auto r = rng() % 10;
        c.up[static_cast<std::size_t>(i)] = {r < 4   ? S::kOn
                                             : r < 8 ? S::kOff
                                                     : kStates[r % 4],
                                             i == mt};
      }
      if (mt >= 0 && rng() % 2 == 0) c.up[static_cast<std::size_t>(mt)].state = S::kOn;
      c.isMtSwitch = mt >= 0;
      c.inputs = rng() % 3 != 0;
      const std::vector<double> us = utilizations(t, k);
      c.u = us[rng() % us.size()];
      checkDecision(p, c);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Upward propagation as a pure function: every non-root view with an
// ascending input on and nothing on or turning on gets its lowest off link on.
TEST(GatingProperties, UpwardPropagationRule) {
  for (int k = 1; k <= 8; ++k) {
    for (int code = 0; code < (1 << k); ++code) {
      std::vector<UpLinkView> up(static_cast<std::size_t>(k));
      for (int i = 0; i < k; ++i)  // each link off or turning off
        up[static_cast<std::size_t>(i)] = {(code >> i) & 1 ? S::kTurningOff : S::kOff, false};
      for (bool inputs : {true, false}) {
        const Decision d = propagateUp(SwitchView{up, false, false, inputs});
        EXPECT_EQ(d.action, inputs ? Action::kTurnOn : Action::kHold);
        if (inputs) {
          EXPECT_EQ(d.upIndex, 0);
          EXPECT_EQ(d.reason.rule, Rule::kPropagateUp);
        }
      }
      // One link on or turning on: nothing to propagate.
      up[static_cast<std::size_t>(code % k)].state = code % 2 ? S::kOn : S::kTurningOn;
      EXPECT_EQ(propagateUp(SwitchView{up, false, false, true}).action, Action::kHold);
    }
  }
  // A root never propagates, whatever it is told.
  const Decision root = propagateUp(SwitchView{{}, true, true, true});
  EXPECT_EQ(root.action, Action::kHold);
  EXPECT_EQ(root.reason.rule, Rule::kRoot);
}

// The down-link rule over its whole truth table.
TEST(GatingProperties, DownLinkRule) {
  for (bool mt : {false, true}) {
    for (bool anyInput : {false, true}) {
      EXPECT_EQ(downLinksOn(mt, anyInput), mt || anyInput) << mt << anyInput;
    }
  }
  static_assert(!downLinksOn(false, false) && downLinksOn(false, true));
}

}  // namespace
}  // namespace ebb::policies
