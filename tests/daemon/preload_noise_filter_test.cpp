// The filter of libumad2sim's stderr flood: the first noise line becomes one
// clear line, the rest are counted; every other line passes unchanged.
#include "daemon/preload_noise_filter.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace ebb::daemon {
namespace {

TEST(PreloadNoiseFilter, SaysTheSimulatorIsGoneOnceAndCountsTheRest) {
  PreloadNoiseFilter f;
  EXPECT_EQ(f.filterLine("ebb agent: S1_0_0 failed safe"), "ebb agent: S1_0_0 failed safe");
  const std::string first = f.filterLine(PreloadNoiseFilter::kNoise);
  EXPECT_NE(first.find("the ibsim simulator is gone"), std::string::npos) << first;
  EXPECT_EQ(f.filterLine(PreloadNoiseFilter::kNoise), "");
  EXPECT_EQ(f.filterLine(PreloadNoiseFilter::kNoise), "");
  EXPECT_EQ(f.filterLine("ebb agent: stopping"), "ebb agent: stopping");
  EXPECT_EQ(f.suppressed(), 3u);
}

TEST(PreloadNoiseFilter, NotInstalledWithoutTheIbsimPreload) {
  const char* old = std::getenv("LD_PRELOAD");
  const std::string saved = old ? old : "";
  ::unsetenv("LD_PRELOAD");
  EXPECT_EQ(PreloadNoiseFilter::installIfUnderIbsim(), nullptr);
  ::setenv("LD_PRELOAD", "libsomething-else.so", 1);
  EXPECT_EQ(PreloadNoiseFilter::installIfUnderIbsim(), nullptr);
  if (old) {
    ::setenv("LD_PRELOAD", saved.c_str(), 1);
  } else {
    ::unsetenv("LD_PRELOAD");
  }
}

}  // namespace
}  // namespace ebb::daemon
