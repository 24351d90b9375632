#include "replay/fabric_from_config.h"

#include <filesystem>

#include <fmt/format.h>

#include "fabric/ibnetdiscover.h"
#include "fabric/kary_tree.h"
#include "fabric/xgft.h"

namespace ebb::replay {

Result<fabric::Topology> topologyFromConfig(const config::FabricConfig& cfg,
                                            const std::string& baseDir) {
  switch (cfg.topology_case()) {
    case config::FabricConfig::kKaryNTree: {
      const auto& spec = cfg.kary_n_tree();
      if (spec.k() > 1'000'000 || spec.n() > 1'000'000) {
        return {ErrorCode::kInvalidArgument,
                fmt::format("fabric.kary_n_tree: k = {}, n = {} exceed any buildable fabric",
                            spec.k(), spec.n())};
      }
      if (spec.has_max_switches() && spec.max_switches() == 0) {
        return {ErrorCode::kInvalidArgument, "fabric.kary_n_tree.max_switches: must be > 0"};
      }
      auto tree = fabric::KAryNTree::make(
          static_cast<int>(spec.k()), static_cast<int>(spec.n()),
          spec.has_max_switches() ? spec.max_switches() : fabric::KAryNTree::kDefaultMaxSwitches,
          "fabric.kary_n_tree.max_switches");
      if (!tree) {
        return {tree.status().code(), "fabric.kary_n_tree: " + tree.status().message()};
      }
      return tree->build();
    }
    case config::FabricConfig::kXgft: {
      const auto& spec = cfg.xgft();
      if (spec.has_max_switches() && spec.max_switches() == 0) {
        return {ErrorCode::kInvalidArgument, "fabric.xgft.max_switches: must be > 0"};
      }
      if (spec.has_ports() && spec.ports() == 0) {  // leave it out for the default
        return {ErrorCode::kInvalidArgument,
                "fabric.xgft.ports: must be > 0 (leave it out for the most any level needs)"};
      }
      auto x = fabric::Xgft::make(
          {spec.m().begin(), spec.m().end()}, {spec.w().begin(), spec.w().end()},
          spec.has_ports() ? spec.ports() : 0,
          spec.has_max_switches() ? spec.max_switches() : fabric::KAryNTree::kDefaultMaxSwitches,
          "fabric.xgft.max_switches");
      if (!x) return {x.status().code(), "fabric." + x.status().message()};
      return x->build();
    }
    case config::FabricConfig::kTopologyFile: {
      const auto& spec = cfg.topology_file();
      if (spec.path().empty()) {
        return {ErrorCode::kInvalidArgument, "fabric.topology_file.path: must name a file"};
      }
      std::filesystem::path p(spec.path());
      if (p.is_relative() && !baseDir.empty()) p = std::filesystem::path(baseDir) / p;
      return fabric::readIbnetdiscoverFile(p.string(), {spec.roots().begin(), spec.roots().end()},
                                           "fabric.topology_file.roots");
    }
    case config::FabricConfig::TOPOLOGY_NOT_SET:
      break;
  }
  return {ErrorCode::kInvalidArgument,
          "fabric: set exactly one of kary_n_tree { k n }, xgft { m w } or topology_file { path }"};
}

}  // namespace ebb::replay
