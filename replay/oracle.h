#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "fabric/minimal_tree.h"
#include "fabric/topology.h"

namespace ebb::replay {

// The oracle bound of a replay (docs/replay.md, "The oracle bound"): per
// check period, the fewest switch-link directions that carry the traffic the
// period offered with none above a target utilization, under the rules every
// policy keeps (the minimal tree on; per direction, the down-link rule; in
// band, whole links); instant transitions and perfect knowledge of the
// period's traffic.
//
// Switches at one level with the same hosts below form a group (a pod); the
// traffic from a group's hosts to hosts outside it must leave the group over
// its up directions, and the traffic to them enters over the down
// directions into the group. So a group needs at least
//   max(its minimal-tree links, ceil(load / (target x capacity)))
// directions each way (routing may spread a group's load over its up links as
// it likes). Per direction, the down-link rule then decides the down
// directions: a switch with any input on has all its down links on, so a
// parent group needs as many active switches as any child group's up
// directions land on or its descending load needs, and an active switch's
// down directions make the switches below them active in turn.
class OracleBound {
 public:
  // How links are gated: per direction with the down-link rule (the agents'
  // backends), or whole links (in-band mode: both directions together).
  enum class Rules { kPerDirection, kWholeLinks };

  // `capacityBytes`: what one direction carries in a period at full rate.
  // E_INVALID when some leaf's ancestors at a level are not one group (a
  // tree the bound does not cover).
  static Result<OracleBound> make(const fabric::Topology& topo, const fabric::MinimalTree& mt,
                                  double targetUtilization, double capacityBytes,
                                  Rules rules = Rules::kPerDirection);

  // A message offered in the current period.
  void offer(fabric::HostId src, fabric::HostId dst, std::int64_t bytes);
  // Ends the period: the bound's switch-link directions on, relative to all.
  // `periods` > 1 closes that many equal periods at once: the runner's idle
  // fast-forward, where nothing was offered after the first.
  double closePeriod(std::uint64_t periods = 1);

  // Means over the periods closed so far (1 when none was).
  double switchLinkPower() const;
  double allLinkPower() const;
  // The same bound with every direction chosen on its own (no down-link rule,
  // no whole links): what a policy free of those rules could reach.
  double freeDirectionsPower() const;
  double targetUtilization() const { return target_; }

 private:
  // What the bound needs of one group, worked out once.
  struct Group {
    std::uint32_t parent = 0xFFFFFFFF;  // the group above (none at the roots)
    std::uint32_t level = 0;
    std::uint32_t size = 0;               // member switches
    std::uint32_t upLinks = 0;            // switch up links of the members
    std::uint32_t minimalLinks = 0;       // of which in the minimal tree
    std::uint32_t minimalSwitches = 0;    // members in the minimal tree
    std::uint32_t upPerSwitch = 1;        // most up links of one member
    std::uint32_t landing = 1;            // most of its up links on one parent switch
    std::uint32_t intoMax = 1;            // most links from one parent switch into it
    std::uint32_t intoMin = 1;            // fewest links from one parent switch into it
    std::vector<std::uint32_t> downCost;  // members' switch down links, ascending
  };

  OracleBound() = default;
  double directionsOn();
  double freeDirectionsOn() const;

  Rules rules_ = Rules::kPerDirection;
  std::uint32_t leafLevel_ = 0;
  std::uint32_t levels_ = 0;
  // ancestor_[leafIndex * levels_ + level]: the group above that leaf there.
  std::vector<std::uint32_t> ancestor_;
  std::vector<std::uint32_t> leafIndexOfHost_;
  std::vector<Group> groups_;
  std::vector<std::uint32_t> byLevel_;   // group indices, roots first
  std::vector<double> up_, down_;        // per group: bytes this period
  std::vector<std::uint32_t> active_;    // scratch: active switches per group
  std::vector<std::uint32_t> downNeed_;  // scratch: down directions its children need
  double target_ = 0;
  double capacity_ = 0;
  double switchDirections_ = 0;
  double hostDirections_ = 0;
  double sumPower_ = 0;
  double sumFreePower_ = 0;
  std::uint64_t periods_ = 0;
};

}  // namespace ebb::replay
