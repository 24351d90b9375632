#include "replay/oracle.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace ebb::replay {

using fabric::SwitchId;

Result<OracleBound> OracleBound::make(const fabric::Topology& topo, const fabric::MinimalTree& mt,
                                      double targetUtilization, double capacityBytes) {
  OracleBound o;
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
  const std::size_t groups = members.size();
  o.minimalLinks_.assign(groups, 0);
  o.upLinks_.assign(groups, 0);
  // The group above each group: every parent of its members must share one.
  std::vector<std::uint32_t> parentGroup(groups, 0xFFFFFFFF);
  for (std::uint32_t g = 0; g < groups; ++g) {
    for (SwitchId s : members[g]) {
      const fabric::Switch& sw = topo.sw(s);
      o.upLinks_[g] += static_cast<std::uint32_t>(sw.upPorts.size());
      if (mt.containsSwitch(s) && mt.upPort(s)) ++o.minimalLinks_[g];
      for (std::uint16_t p : sw.upPorts) {
        const std::uint32_t above = groupOf[topo.link(sw.ports[p].link).upper.sw.value()];
        if (parentGroup[g] != 0xFFFFFFFF && parentGroup[g] != above) {
          return Status(ErrorCode::kInvalidArgument,
                        fmt::format("oracle: the switches above {} (level {}) do not all have the "
                                    "same hosts below; the bound covers fat trees whose "
                                    "ancestors at each level form one group",
                                    sw.name, sw.level));
        }
        parentGroup[g] = above;
      }
    }
  }
  const auto& leaves = topo.switchesAtLevel(depth - 1);
  std::vector<std::uint32_t> leafIndex(topo.numSwitches(), 0);
  o.ancestor_.assign(leaves.size() * o.levels_, 0);
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    leafIndex[leaves[i].value()] = static_cast<std::uint32_t>(i);
    std::uint32_t g = groupOf[leaves[i].value()];
    for (int level = depth - 1; level >= 0; --level) {
      o.ancestor_[i * o.levels_ + static_cast<std::size_t>(level)] = g;
      if (level > 0) g = parentGroup[g];
    }
  }
  o.leafIndexOfHost_.resize(topo.numHosts());
  for (std::size_t h = 0; h < topo.numHosts(); ++h)
    o.leafIndexOfHost_[h] =
        leafIndex[topo.leafOf(fabric::HostId(static_cast<fabric::HostId::rep_type>(h))).value()];
  o.up_.assign(groups, 0);
  o.down_.assign(groups, 0);
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

double OracleBound::closePeriod() {
  const double perDirection = target_ * capacity_;
  double on = 0;
  for (std::size_t g = 0; g < up_.size(); ++g) {
    const auto need = [&](double load) {
      const double byLoad = load > 0 ? std::ceil(load / perDirection - 1e-9) : 0;
      return std::min<double>(upLinks_[g], std::max<double>(minimalLinks_[g], byLoad));
    };
    on += need(up_[g]) + need(down_[g]);
  }
  std::fill(up_.begin(), up_.end(), 0.0);
  std::fill(down_.begin(), down_.end(), 0.0);
  const double power = switchDirections_ > 0 ? on / switchDirections_ : 0;
  sumPower_ += power;
  ++periods_;
  return power;
}

double OracleBound::switchLinkPower() const {
  return periods_ ? sumPower_ / static_cast<double>(periods_) : 1.0;
}

double OracleBound::allLinkPower() const {
  const double all = switchDirections_ + hostDirections_;
  return all > 0 ? (switchLinkPower() * switchDirections_ + hostDirections_) / all : 1.0;
}

}  // namespace ebb::replay
