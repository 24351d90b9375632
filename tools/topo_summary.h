#pragma once

#include <string>

#include "fabric/minimal_tree.h"
#include "fabric/topology.h"

namespace ebb::tools {

// The counts `ebb topo` prints, computed once.
struct TopoSummary {
  std::size_t hosts = 0;
  std::size_t switches = 0;
  std::vector<std::size_t> switchesPerLevel;
  std::size_t links = 0;
  std::size_t switchLinks = 0;
  std::size_t hostLinks = 0;
  std::size_t mtSwitches = 0;
  std::size_t mtSwitchLinks = 0;
  std::size_t mtLinks = 0;
  std::string shape;  // "4-ary 3-tree" or "fat tree (3 levels)"
};

TopoSummary summarize(const fabric::Topology& t, const fabric::MinimalTree& mt);
std::string formatText(const TopoSummary& s);
std::string formatJson(const TopoSummary& s);

}  // namespace ebb::tools
