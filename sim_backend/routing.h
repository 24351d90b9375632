#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <unordered_map>
#include <vector>

#include "fabric/ids.h"
#include "fabric/topology.h"
#include "sim_backend/emulator_config.h"

namespace ebb::sim {

// Up*/down* routing in a fat tree, as the emulator applies it at each hop: a
// packet whose destination leaf is below the current switch goes down the
// port the down table names; otherwise it goes up, on a link the up-routing
// strategy picks among the usable ones (docs/design.md, "emulator routing").

// The down table: for every switch and leaf, the down ports of the switch that
// lead to that leaf, built once from the topology. In a k-ary n-tree there is
// one; parallel cables to a child, or several children above the leaf (an
// irregular tree), give more, and the emulator spreads over those that work.
class DownRoutes {
 public:
  static constexpr std::uint16_t kNoPort = 0xFFFF;

  explicit DownRoutes(const fabric::Topology& topo);
  // The lowest down port of `sw` toward `leaf`, or kNoPort when `leaf` is not below `sw`.
  std::uint16_t port(fabric::SwitchId sw, fabric::SwitchId leaf) const {
    return table_[entry(sw, leaf)];
  }
  // Whether some switch has more than one down port toward some leaf.
  bool anyAlternates() const { return !alternates_.empty(); }
  // Every down port of `sw` toward `leaf`, lowest first (empty: not below).
  std::span<const std::uint16_t> ports(fabric::SwitchId sw, fabric::SwitchId leaf) const;

 private:
  static constexpr std::uint32_t kNotALeaf = 0xFFFFFFFF;
  std::size_t entry(fabric::SwitchId sw, fabric::SwitchId leaf) const {
    return sw.value() * numLeaves_ + leafIndex_[leaf.value()];
  }
  std::vector<std::uint32_t> leafIndex_;  // per switch: its index among the leaves
  std::vector<std::uint16_t> table_;      // [switch * leaves + leaf] -> lowest down port label
  // The entries with more than one port: all of them, lowest first.
  std::unordered_map<std::size_t, std::vector<std::uint16_t>> alternates_;
  std::size_t numLeaves_ = 0;
};

// Which switches can still reach each leaf over link directions that have not
// failed, the up*/down* way: up over any non-failed up direction, then down
// over any of the down table's ports. Recomputed after each failure or
// repair; the emulator consults it while some direction is failed, and always
// on a tree where some switch cannot reach every leaf the up*/down* way (an
// irregular tree), so a packet never climbs to a switch with no way down.
class FaultReach {
 public:
  using Failed = std::function<bool(fabric::LinkId, fabric::Direction)>;

  FaultReach(const fabric::Topology& topo, const DownRoutes& down);
  void recompute(const Failed& failed);
  // A packet at `sw` still climbing reaches `leaf` over what is intact,
  // going down wherever the leaf is below (the down tables' way).
  bool reaches(fabric::SwitchId sw, fabric::SwitchId leaf) const {
    return reach_[sw.value() * numLeaves_ + leafIndex_[leaf.value()]] != 0;
  }
  // The same, where a switch with the leaf below may also climb on when its
  // way down is broken (irregular trees, a failed cable below a middle
  // switch): the way a climbing packet takes after routeHop climbs on.
  bool reachesClimbing(fabric::SwitchId sw, fabric::SwitchId leaf) const {
    return reachClimbing_[sw.value() * numLeaves_ + leafIndex_[leaf.value()]] != 0;
  }
  // A packet at `sw` already going down reaches `leaf` (down only).
  bool reachesDown(fabric::SwitchId sw, fabric::SwitchId leaf) const {
    return downOk_[sw.value() * numLeaves_ + leafIndex_[leaf.value()]] != 0;
  }

 private:
  const fabric::Topology& topo_;
  const DownRoutes& down_;
  std::vector<std::uint32_t> leafIndex_;  // per switch: its index among the leaves
  std::size_t numLeaves_ = 0;
  std::vector<std::uint8_t> downOk_;         // [switch * leaves + leaf]: the down path is intact
  std::vector<std::uint8_t> reach_;          // [switch * leaves + leaf]: some intact up*/down* path
  std::vector<std::uint8_t> reachClimbing_;  // the same, climbing on past a broken way down
};

// One usable up link of a switch as the up-routing strategy sees it.
struct UpCandidate {
  std::uint32_t channel = 0;    // the emulator's channel of the up direction
  std::int64_t freeCredit = 0;  // free bytes over the receiver's VC buffers
  std::uint32_t queue = 0;      // packets queued plus the one on the wire
  std::uint32_t upIndex = 0;    // its place among the switch's up ports
};

// Picks the up link a packet takes among the usable ones. Named strategies,
// chosen by EmulatorConfig::upRouting; each draws from the emulator's seeded
// RNG only to break ties among more than one candidate, so runs stay
// deterministic.
class UpRoutingStrategy {
 public:
  virtual ~UpRoutingStrategy() = default;
  virtual const char* name() const = 0;
  // Whether choose() reads freeCredit and queue (else they are left 0).
  virtual bool needsLoad() const = 0;
  // Whether choose() reads `preferred` (the D-mod-K up index of the packet's
  // destination; else it is 0).
  virtual bool needsDestination() const { return false; }
  // `usable` is not empty, in up-port order.
  virtual std::uint32_t choose(const std::vector<UpCandidate>& usable, std::uint32_t preferred,
                               std::mt19937_64& rng) const = 0;
};

// "adaptive": the most free credit bytes, then the shortest queue, then random.
// "random": uniformly random (BookSim's nca picks this way).
// "destination": the usable up port at or cyclically after `preferred`.
std::unique_ptr<UpRoutingStrategy> makeUpRouting(UpRouting kind);

// An up link of a switch when none is usable, in up-port order.
struct UpLinkState {
  std::uint32_t channel = 0;
  bool draining = false;  // turning off, still sending what it holds
  bool enabled = false;   // turning on
};

// Where a packet waits when no up link is usable: the one that will move it
// soonest: a link still draining before it turns off, else one turning on,
// else the first (the upward propagation rule of gating turns one on).
std::uint32_t fallbackUp(const std::vector<UpLinkState>& ups);

}  // namespace ebb::sim
