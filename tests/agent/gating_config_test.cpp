// The one translation from a config's gating section to thresholds, used by
// ebb replay, ebb tune and ebb agent.
#include "agent/gating_config.h"

#include <gtest/gtest.h>

namespace ebb::agent {
namespace {

config::GatingSpec spec(config::GatingSpec::Policy p, double uOff, double uOn) {
  config::GatingSpec g;
  g.set_policy(p);
  g.set_u_off(uOff);
  g.set_u_on(uOn);
  return g;
}

TEST(GatingConfig, UnsetPolicyIsDynamicWithTheThresholdsDefaultUOn) {
  const GatingChoice c = gatingFromConfig(config::GatingSpec{});
  EXPECT_TRUE(c.gating);
  EXPECT_EQ(c.thresholds.kind, policies::GatingKind::kDynamic);
  EXPECT_DOUBLE_EQ(c.thresholds.uOn, policies::Thresholds{}.uOn);
  EXPECT_EQ(c.policyName, "dynamic [U_on=0.15]");
}

TEST(GatingConfig, StaticKeepsBothThresholdsAndNamesThem) {
  const GatingChoice c = gatingFromConfig(spec(config::GatingSpec::STATIC, 0.03, 0.2));
  EXPECT_TRUE(c.gating);
  EXPECT_EQ(c.thresholds.kind, policies::GatingKind::kStatic);
  EXPECT_DOUBLE_EQ(c.thresholds.uOff, 0.03);
  EXPECT_DOUBLE_EQ(c.thresholds.uOn, 0.2);
  EXPECT_EQ(c.policyName, "static [0.03, 0.2]");
  EXPECT_TRUE(c.thresholds.validate().isOk());
}

TEST(GatingConfig, DynamicIgnoresUOffAndAllOnDoesNotGate) {
  const GatingChoice d = gatingFromConfig(spec(config::GatingSpec::DYNAMIC, 0.4, 0.3));
  EXPECT_DOUBLE_EQ(d.thresholds.uOff, 0.0);
  EXPECT_DOUBLE_EQ(d.thresholds.uOn, 0.3);
  const GatingChoice off = gatingFromConfig(spec(config::GatingSpec::ALL_ON, 0, 0));
  EXPECT_FALSE(off.gating);
  EXPECT_TRUE(off.policyName.empty());
}

TEST(GatingConfig, OffTheMapIsReturnedForTheCallerToValidate) {
  // U_on <= 2 U_off: translated as given; validate() names the rule.
  const GatingChoice c = gatingFromConfig(spec(config::GatingSpec::STATIC, 0.1, 0.15));
  const Status s = c.thresholds.validate();
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("U_on"), std::string::npos) << s.message();
}

TEST(GatingConfig, ProportionalTakesItsHysteresisAndOnlyIt) {
  config::GatingSpec g;
  g.set_policy(config::GatingSpec::PROPORTIONAL);
  g.set_u_on(0.2);
  ASSERT_TRUE(checkGatingFields(g).isOk());
  GatingChoice c = gatingFromConfig(g);
  EXPECT_EQ(c.thresholds.kind, policies::GatingKind::kProportional);
  EXPECT_DOUBLE_EQ(c.thresholds.hysteresis, policies::Thresholds{}.hysteresis);
  EXPECT_EQ(c.policyName, "proportional [U_on=0.2, h=0.9]");
  g.set_hysteresis(0.5);
  c = gatingFromConfig(g);
  EXPECT_DOUBLE_EQ(c.thresholds.hysteresis, 0.5);
  g.set_hysteresis(1.0);
  EXPECT_NE(checkGatingFields(g).message().find("gating.hysteresis: 1 breaks the rule 0 < h < 1"),
            std::string::npos)
      << checkGatingFields(g).message();
  config::GatingSpec dyn;
  dyn.set_hysteresis(0.5);
  EXPECT_NE(checkGatingFields(dyn).message().find("applies to the PROPORTIONAL policy only"),
            std::string::npos);
  config::GatingSpec off;
  off.set_policy(config::GatingSpec::PROPORTIONAL);
  off.set_u_off(0.1);
  EXPECT_NE(checkGatingFields(off).message().find("policy is PROPORTIONAL"), std::string::npos)
      << checkGatingFields(off).message();
}

TEST(GatingConfig, TheCongestionTriggerIsNamedAndChecked) {
  config::GatingSpec g;
  g.set_wait_on(0.1);
  ASSERT_TRUE(checkGatingFields(g).isOk());
  const GatingChoice c = gatingFromConfig(g);
  EXPECT_DOUBLE_EQ(c.thresholds.waitOn, 0.1);
  EXPECT_EQ(c.policyName, "dynamic [U_on=0.15] + xmit-wait>0.1");
  EXPECT_DOUBLE_EQ(gatingFromConfig(config::GatingSpec{}).thresholds.waitOn, 0.0);
  g.set_wait_on(1.0);
  EXPECT_NE(checkGatingFields(g).message().find("gating.wait_on: 1 breaks the rule"),
            std::string::npos);
}

}  // namespace
}  // namespace ebb::agent
