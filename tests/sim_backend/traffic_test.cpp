#include "sim_backend/traffic.h"

#include <gtest/gtest.h>

namespace ebb::sim {
namespace {

TEST(RateProfile, AlonsoRampShape) {
  const RateProfile r = RateProfile::alonsoRamp(1000);
  EXPECT_DOUBLE_EQ(r.at(0), 0.01);
  EXPECT_DOUBLE_EQ(r.at(59'999'000), 0.01);
  EXPECT_NEAR(r.at(120'000'000), 0.305, 1e-12);
  EXPECT_DOUBLE_EQ(r.at(200'000'000), 0.60);
  EXPECT_NEAR(r.at(360'000'000), 0.305, 1e-12);
  EXPECT_EQ(r.end(), 420'000'000);
  EXPECT_DOUBLE_EQ(r.at(420'000'000), 0.0);
  EXPECT_TRUE(r.rising(100'000'000));
  EXPECT_FALSE(r.rising(350'000'000));
  EXPECT_TRUE(r.validate().isOk());
  EXPECT_FALSE(RateProfile({{0, -0.1}}).validate().isOk());
  EXPECT_FALSE(RateProfile({{10, 0.1}, {5, 0.1}}).validate().isOk());
}

}  // namespace
}  // namespace ebb::sim
