#include "policies/thresholds.h"

#include <gtest/gtest.h>

namespace ebb::policies {
namespace {

// Table 1 of Alonso et al.: static thresholds, factor i/k, k = 4.
TEST(Thresholds, Table1StaticEffectiveThresholds) {
  const Thresholds t = Thresholds::makeStatic(0.03, 0.15);
  const double factor[] = {0, 0.25, 0.5, 0.75, 1.0};
  for (int i = 1; i <= 4; ++i) {
    EXPECT_DOUBLE_EQ(t.offThreshold(i, 4), 0.03);
    EXPECT_DOUBLE_EQ(t.effectiveOn(i, 4), factor[i] * 0.15) << i;
    EXPECT_DOUBLE_EQ(t.effectiveOff(i, 4), factor[i] * 0.03) << i;
  }
  // 3/4 U_on = 0.1125: the paper's "about 0.11" for all links on.
  EXPECT_NEAR(t.effectiveOn(3, 4), 0.1125, 1e-12);
}

// Table 2: dynamic thresholds, U_off(i) = U_on (i-1)/k; effective = i/k of it.
TEST(Thresholds, Table2DynamicThresholds) {
  const double uOn = 0.15;
  const Thresholds t = Thresholds::makeDynamic(uOn);
  EXPECT_DOUBLE_EQ(t.offThreshold(4, 4), 3.0 / 4 * uOn);
  EXPECT_DOUBLE_EQ(t.offThreshold(3, 4), 2.0 / 4 * uOn);
  EXPECT_DOUBLE_EQ(t.offThreshold(2, 4), 1.0 / 4 * uOn);
  EXPECT_DOUBLE_EQ(t.offThreshold(1, 4), 0.0);
  EXPECT_DOUBLE_EQ(t.effectiveOff(4, 4), 3.0 / 4 * uOn);
  EXPECT_DOUBLE_EQ(t.effectiveOff(3, 4), 6.0 / 16 * uOn);
  EXPECT_DOUBLE_EQ(t.effectiveOff(2, 4), 2.0 / 16 * uOn);
  EXPECT_DOUBLE_EQ(t.effectiveOff(1, 4), 0.0);
  EXPECT_DOUBLE_EQ(t.effectiveOn(3, 4), 3.0 / 4 * uOn);
  EXPECT_DOUBLE_EQ(t.effectiveOn(2, 4), 2.0 / 4 * uOn);
  EXPECT_DOUBLE_EQ(t.effectiveOn(1, 4), 1.0 / 4 * uOn);
}

TEST(Thresholds, GeneralFormulasForAnyK) {
  for (int k = 2; k <= 16; ++k) {
    const Thresholds d = Thresholds::makeDynamic(0.4);
    for (int i = 1; i <= k; ++i) {
      EXPECT_DOUBLE_EQ(d.effectiveOff(i, k), 0.4 * i * (i - 1) / (k * k));
      EXPECT_DOUBLE_EQ(d.effectiveOn(i, k), 0.4 * i / k);
    }
  }
}

TEST(Thresholds, ValidationFollowsTheMapOfPossibleThresholds) {
  EXPECT_TRUE(Thresholds::makeStatic(0.03, 0.15).validate().isOk());
  EXPECT_TRUE(Thresholds::makeStatic(0.085, 0.435).validate().isOk());
  const Status bad = Thresholds::makeStatic(0.1, 0.15).validate();
  EXPECT_EQ(bad.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("U_on > 2*U_off"), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find("U_off=0.1"), std::string::npos);
  EXPECT_FALSE(Thresholds::makeStatic(0.075, 0.15).validate().isOk());  // equality is not enough
  EXPECT_NE(Thresholds::makeStatic(0.0, 0.15).validate().message().find("0 < U_off"),
            std::string::npos);
  EXPECT_NE(Thresholds::makeStatic(0.1, 1.5).validate().message().find("U_on <= 1"),
            std::string::npos);
  EXPECT_TRUE(Thresholds::makeDynamic(0.435).validate().isOk());
  EXPECT_TRUE(Thresholds::makeDynamic(1.0).validate().isOk());
  EXPECT_FALSE(Thresholds::makeDynamic(0.0).validate().isOk());
  EXPECT_FALSE(Thresholds::makeDynamic(-0.2).validate().isOk());
  EXPECT_FALSE(Thresholds::makeDynamic(1.01).validate().isOk());
}

}  // namespace
}  // namespace ebb::policies
