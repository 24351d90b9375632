#include "workload/otf2_ranks.h"

#include <optional>

namespace ebb::workload::otf2 {
namespace {

// The PROCESS location group `group` belongs to, if any.
std::optional<OTF2_LocationGroupRef> processOf(
    OTF2_LocationGroupRef group, const std::map<OTF2_LocationGroupRef, LocationGroupDef>& groups) {
  const auto it = groups.find(group);
  if (it == groups.end()) return std::nullopt;
  if (it->second.type == OTF2_LOCATION_GROUP_TYPE_PROCESS) return group;
  if (it->second.type == OTF2_LOCATION_GROUP_TYPE_ACCELERATOR) {
    const auto creator = groups.find(it->second.creator);
    if (creator != groups.end() && creator->second.type == OTF2_LOCATION_GROUP_TYPE_PROCESS)
      return it->second.creator;
  }
  return std::nullopt;
}

}  // namespace

std::map<OTF2_LocationRef, std::uint32_t> ranksOfLocations(
    const std::map<OTF2_LocationRef, LocationDef>& locations,
    const std::map<OTF2_LocationGroupRef, LocationGroupDef>& groups, std::uint32_t& rankCount) {
  std::map<OTF2_LocationRef, std::uint32_t> rankOf;
  std::map<OTF2_LocationGroupRef, std::uint32_t> rankOfProcess;
  rankCount = 0;
  // Locations in id order: a process is numbered at its first location.
  for (const auto& [loc, def] : locations) {
    const auto process = processOf(def.group, groups);
    if (!process) {
      rankOf[loc] = rankCount++;
      continue;
    }
    const auto [it, added] = rankOfProcess.emplace(*process, rankCount);
    if (added) ++rankCount;
    rankOf[loc] = it->second;
  }
  return rankOf;
}

}  // namespace ebb::workload::otf2
