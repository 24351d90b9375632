#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "fabric/minimal_tree.h"
#include "fabric/topology.h"

namespace ebb::replay {

// The oracle bound of a replay (docs/replay.md, "The oracle bound"): per
// check period, the fewest switch-link directions that carry the traffic the
// period offered with none above a target utilization, keeping the minimal
// tree on; instant transitions and perfect knowledge of the period's traffic.
//
// Switches at one level with the same hosts below form a group (a pod); the
// traffic from a group's hosts to hosts outside it must leave the group over
// its up directions, and the traffic to them enters over the down
// directions into the group. So a group needs at least
//   max(its minimal-tree links, ceil(load / (target x capacity)))
// directions each way, and the sum over groups bounds any policy from below
// (routing may spread a group's load over its up links as it likes).
class OracleBound {
 public:
  // `capacityBytes`: what one direction carries in a period at full rate.
  // E_INVALID when some leaf's ancestors at a level are not one group (a
  // tree the bound does not cover).
  static Result<OracleBound> make(const fabric::Topology& topo, const fabric::MinimalTree& mt,
                                  double targetUtilization, double capacityBytes);

  // A message offered in the current period.
  void offer(fabric::HostId src, fabric::HostId dst, std::int64_t bytes);
  // Ends the period: the bound's switch-link directions on, relative to all.
  double closePeriod();

  // Means over the periods closed so far (1 when none was).
  double switchLinkPower() const;
  double allLinkPower() const;
  double targetUtilization() const { return target_; }

 private:
  OracleBound() = default;
  std::uint32_t leafLevel_ = 0;
  std::uint32_t levels_ = 0;
  // ancestor_[leafIndex * levels_ + level]: the group above that leaf there.
  std::vector<std::uint32_t> ancestor_;
  std::vector<std::uint32_t> leafIndexOfHost_;
  std::vector<std::uint32_t> minimalLinks_;  // per group: minimal-tree up links
  std::vector<std::uint32_t> upLinks_;       // per group: switch up links
  std::vector<double> up_, down_;            // per group: bytes this period
  double target_ = 0;
  double capacity_ = 0;
  double switchDirections_ = 0;
  double hostDirections_ = 0;
  double sumPower_ = 0;
  std::uint64_t periods_ = 0;
};

}  // namespace ebb::replay
