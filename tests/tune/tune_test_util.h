// Helpers of the `ebb tune` tests: the command in-process, scratch folders, specs.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "configs/config_loader.h"
#include "tests/tools/cli_run.h"
#include "tune/spec.h"

namespace ebb::tune::testing {

using tools::testing::CliRun;
using tools::testing::ebb;

// A fresh, empty folder for one test.
inline std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ebb-tune-test-" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::filesystem::path writeSpec(const std::filesystem::path& dir, const std::string& text) {
  const auto path = dir / "spec.textproto";
  std::ofstream(path) << text;
  return path;
}

inline Result<TunePlan> planFrom(const std::string& text,
                                 std::uint64_t maxSettings = kDefaultMaxSettings) {
  config::TuneSpec spec;
  if (Status s = config::parseTextMessage(text, "test", spec); !s.isOk()) return s;
  return buildTunePlan(spec, "", maxSettings);
}

// A 4-ary 2-tree (16 hosts) on the alonso-ramp at `scale` of its length:
// tens of milliseconds a run.
inline std::string tinyRampBase(double scale) {
  return "base { fabric { kary_n_tree { k: 4 n: 2 } } workload { alonso_ramp { time_scale: " +
         std::to_string(scale) + " } } } skip_plots: true ";
}

}  // namespace ebb::tune::testing
