// Helpers of the campaign tests: base configs, scratch folders, the command.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "configs/config_loader.h"
#include "fabric/topology.h"
#include "replay/fabric_from_config.h"
#include "tests/tools/cli_run.h"

namespace ebb::campaign::testing {

// A gated k-ary n-tree with the default check period (2000 cycles).
inline config::Config baseConfig(int k, int n) {
  return config::parseTextConfig("fabric { kary_n_tree { k: " + std::to_string(k) +
                                     " n: " + std::to_string(n) +
                                     " } } gating { policy: DYNAMIC u_on: 0.15 } seed: 1",
                                 "test")
      .value();
}

inline fabric::Topology topologyOf(const config::Config& cfg) {
  return replay::topologyFromConfig(cfg.fabric(), "").value();
}

// A fresh, empty folder for one test.
inline std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::path(EBB_BINARY_DIR) / "test_scratch" / ("campaign_" + name);
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

using tools::testing::CliRun;
using tools::testing::ebb;

}  // namespace ebb::campaign::testing
