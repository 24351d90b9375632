#include "replay/oracle.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace ebb::replay {

using fabric::SwitchId;

namespace {
constexpr std::uint32_t kNoGroup = 0xFFFFFFFF;

std::uint32_t ceilDiv(std::uint32_t a, std::uint32_t b) {
  return b == 0 ? 0 : (a + b - 1) / b;
}
}  // namespace

Result<OracleBound> OracleBound::make(const fabric::Topology& topo, const fabric::MinimalTree& mt,
                                      double targetUtilization, double capacityBytes, Rules rules) {
  OracleBound o;
  o.rules_ = rules;
  o.target_ = targetUtilization;
  o.capacity_ = capacityBytes;
  const int depth = topo.depth();
  o.levels_ = static_cast<std::uint32_t>(depth);
  o.leafLevel_ = static_cast<std::uint32_t>(depth - 1);
  for (std::size_t l = 0; l < topo.numLinks(); ++l) {
    (topo.isSwitchLink(fabric::LinkId(static_cast<fabric::LinkId::rep_type>(l)))
         ? o.switchDirections_
         : o.hostDirections_) += 2;
  }
  // Groups, leaves first: a switch's group is the set of its children's
  // groups (the same set means the same hosts below).
  std::vector<std::uint32_t> groupOf(topo.numSwitches(), 0);
  std::vector<std::vector<SwitchId>> members;
  for (int level = depth - 1; level >= 0; --level) {
    std::map<std::vector<std::uint32_t>, std::uint32_t> byChildren;
    for (SwitchId s : topo.switchesAtLevel(level)) {
      std::vector<std::uint32_t> key;
      if (level == depth - 1) {
        key.push_back(static_cast<std::uint32_t>(members.size()));  // a leaf: its own group
      } else {
        for (std::uint16_t p : topo.sw(s).downPorts) {
          const fabric::Link& l = topo.link(topo.sw(s).ports[p].link);
          if (!l.lowerIsHost) key.push_back(groupOf[l.lower.sw.value()]);
        }
        std::sort(key.begin(), key.end());
        key.erase(std::unique(key.begin(), key.end()), key.end());
      }
      auto [it, added] = byChildren.try_emplace(key, static_cast<std::uint32_t>(members.size()));
      if (added) members.emplace_back();
      groupOf[s.value()] = it->second;
      members[it->second].push_back(s);
    }
  }
  o.groups_.assign(members.size(), {});
  for (std::uint32_t g = 0; g < members.size(); ++g) {
    Group& grp = o.groups_[g];
    grp.size = static_cast<std::uint32_t>(members[g].size());
    // Its up links per parent switch: the same count is that switch's links
    // down into this group.
    std::map<std::uint32_t, std::uint32_t> onParent;
    for (SwitchId s : members[g]) {
      const fabric::Switch& sw = topo.sw(s);
      grp.level = static_cast<std::uint32_t>(std::max(0, static_cast<int>(sw.level)));
      grp.upLinks += static_cast<std::uint32_t>(sw.upPorts.size());
      grp.upPerSwitch = std::max(grp.upPerSwitch, static_cast<std::uint32_t>(sw.upPorts.size()));
      if (mt.containsSwitch(s)) ++grp.minimalSwitches;
      if (mt.containsSwitch(s) && mt.upPort(s)) ++grp.minimalLinks;
      std::uint32_t down = 0;
      for (std::uint16_t p : sw.downPorts)
        down += topo.link(sw.ports[p].link).lowerIsHost ? 0u : 1u;
      grp.downCost.push_back(down);
      for (std::uint16_t p : sw.upPorts) {
        const SwitchId upper = topo.link(sw.ports[p].link).upper.sw;
        const std::uint32_t above = groupOf[upper.value()];
        if (grp.parent != kNoGroup && grp.parent != above) {
          return Status(ErrorCode::kInvalidArgument,
                        fmt::format("oracle: the switches above {} (level {}) do not all have the "
                                    "same hosts below; the bound covers fat trees whose "
                                    "ancestors at each level form one group",
                                    sw.name, sw.level));
        }
        grp.parent = above;
        ++onParent[upper.value()];
      }
    }
    std::sort(grp.downCost.begin(), grp.downCost.end());
    if (grp.parent == kNoGroup) continue;
    grp.intoMax = 0;
    grp.intoMin = onParent.size() < members[grp.parent].size() ? 0 : 0xFFFFFFFF;
    for (const auto& [upper, links] : onParent) {
      grp.intoMax = std::max(grp.intoMax, links);
      grp.intoMin = std::min(grp.intoMin, links);
    }
  }
  for (std::uint32_t g = 0; g < o.groups_.size(); ++g)
    o.byLevel_.push_back(g);
  std::stable_sort(o.byLevel_.begin(), o.byLevel_.end(), [&](std::uint32_t a, std::uint32_t b) {
    return o.groups_[a].level < o.groups_[b].level;
  });
  const auto& leaves = topo.switchesAtLevel(depth - 1);
  std::vector<std::uint32_t> leafIndex(topo.numSwitches(), 0);
  o.ancestor_.assign(leaves.size() * o.levels_, 0);
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    leafIndex[leaves[i].value()] = static_cast<std::uint32_t>(i);
    std::uint32_t g = groupOf[leaves[i].value()];
    for (int level = depth - 1; level >= 0; --level) {
      o.ancestor_[i * o.levels_ + static_cast<std::size_t>(level)] = g;
      if (level > 0) g = o.groups_[g].parent;
    }
  }
  o.leafIndexOfHost_.resize(topo.numHosts());
  for (std::size_t h = 0; h < topo.numHosts(); ++h)
    o.leafIndexOfHost_[h] =
        leafIndex[topo.leafOf(fabric::HostId(static_cast<fabric::HostId::rep_type>(h))).value()];
  o.up_.assign(o.groups_.size(), 0);
  o.down_.assign(o.groups_.size(), 0);
  o.active_.assign(o.groups_.size(), 0);
  o.downNeed_.assign(o.groups_.size(), 0);
  return o;
}

// The message climbs out of its source's group at each level until a group
// holds both ends, and descends into its destination's groups at the same
// levels.
void OracleBound::offer(fabric::HostId src, fabric::HostId dst, std::int64_t bytes) {
  const std::size_t a = leafIndexOfHost_[src.value()] * std::size_t{levels_};
  const std::size_t b = leafIndexOfHost_[dst.value()] * std::size_t{levels_};
  const auto load = static_cast<double>(bytes);
  for (std::uint32_t level = leafLevel_; level >= 1; --level) {
    const std::uint32_t from = ancestor_[a + level], to = ancestor_[b + level];
    if (from == to) break;
    up_[from] += load;
    down_[to] += load;
  }
}

double OracleBound::closePeriod(std::uint64_t periods) {
  double power = 0;
  for (std::uint64_t i = 0; i < std::min<std::uint64_t>(periods, 2); ++i) {
    // The second pass is the idle period the remaining ones repeat.
    const std::uint64_t weight = i == 0 ? 1 : periods - 1;
    const double on = directionsOn();
    const double free = freeDirectionsOn();
    std::fill(up_.begin(), up_.end(), 0.0);
    std::fill(down_.begin(), down_.end(), 0.0);
    const double p = switchDirections_ > 0 ? on / switchDirections_ : 0;
    sumPower_ += p * static_cast<double>(weight);
    sumFreePower_ +=
        (switchDirections_ > 0 ? free / switchDirections_ : 0) * static_cast<double>(weight);
    power += p * static_cast<double>(weight);
  }
  periods_ += periods;
  return periods > 0 ? power / static_cast<double>(periods) : 0;
}

namespace {
// Links a load needs at the target, at least the minimal tree's, at most all.
std::uint32_t needed(double load, double perLink, std::uint32_t minimal, std::uint32_t all) {
  const double byLoad = load > 0 ? std::ceil(load / perLink - 1e-9) : 0;
  return static_cast<std::uint32_t>(std::min<double>(all, std::max<double>(minimal, byLoad)));
}
}  // namespace

double OracleBound::freeDirectionsOn() const {
  const double perLink = target_ * capacity_;
  double on = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const Group& grp = groups_[g];
    if (grp.parent == kNoGroup) continue;
    on += needed(up_[g], perLink, grp.minimalLinks, grp.upLinks) +
          needed(down_[g], perLink, grp.minimalLinks, grp.upLinks);
  }
  return on;
}

double OracleBound::directionsOn() {
  const double perLink = target_ * capacity_;
  if (rules_ == Rules::kWholeLinks) {  // a link carries both ways at once
    double on = 0;
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      const Group& grp = groups_[g];
      if (grp.parent == kNoGroup) continue;
      on += 2.0 * needed(std::max(up_[g], down_[g]), perLink, grp.minimalLinks, grp.upLinks);
    }
    return on;
  }
  // Per direction: the up directions each group needs, and the switches of
  // each group that must be active (an input on). Up directions carrying
  // load leave active switches, and every up direction lands on a parent
  // switch and makes it active; so do the down directions a child's load
  // needs, which only active parents send.
  double on = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    active_[g] = groups_[g].minimalSwitches;
    downNeed_[g] = 0;
  }
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const Group& grp = groups_[g];
    if (grp.parent == kNoGroup) continue;
    const std::uint32_t up = needed(up_[g], perLink, grp.minimalLinks, grp.upLinks);
    const std::uint32_t down = needed(down_[g], perLink, grp.minimalLinks, grp.upLinks);
    on += up;
    active_[g] =
        std::max({active_[g], ceilDiv(up, grp.upPerSwitch), ceilDiv(down, grp.upPerSwitch)});
    std::uint32_t& parent = active_[grp.parent];
    parent = std::max({parent, ceilDiv(up, grp.intoMax), ceilDiv(down, grp.intoMax)});
    downNeed_[grp.parent] += down;
  }
  // An active switch has every down link on (the down-link rule), and each
  // makes the switch below it active: roots first.
  for (std::uint32_t g : byLevel_) {
    const Group& grp = groups_[g];
    if (grp.parent != kNoGroup) {
      active_[g] =
          std::max(active_[g], ceilDiv(active_[grp.parent] * grp.intoMin, grp.upPerSwitch));
    }
    active_[g] = std::min(active_[g], grp.size);
    double down = 0;
    for (std::uint32_t i = 0; i < active_[g]; ++i)
      down += grp.downCost[i];  // the cheapest active switches
    // Never fewer than the children's own down needs (uneven trees, where
    // the cheapest switches may not reach every child with enough links).
    on += std::max(down, static_cast<double>(downNeed_[g]));
  }
  return on;
}

double OracleBound::switchLinkPower() const {
  return periods_ ? sumPower_ / static_cast<double>(periods_) : 1.0;
}

double OracleBound::freeDirectionsPower() const {
  return periods_ ? sumFreePower_ / static_cast<double>(periods_) : 1.0;
}

double OracleBound::allLinkPower() const {
  const double all = switchDirections_ + hostDirections_;
  return all > 0 ? (switchLinkPower() * switchDirections_ + hostDirections_) / all : 1.0;
}

}  // namespace ebb::replay
