#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabric/faults.h"
#include "fabric/leaf_reach.h"
#include "fabric/link_states.h"
#include "fabric/topology.h"

namespace ebb::fabric {

struct HostPair {
  HostId src;
  HostId dst;
  bool operator==(const HostPair&) const = default;
};

// Proves that every host pair has an up*/down* path over the link directions
// that are on, or names a pair that has none. Cost per check is
// O(links x leaves / 64): per switch it keeps the set of leaf switches it can
// reach descending (D) and the union of D over everything it reaches ascending
// (R); a pair (s, d) is connected iff leaf(d) is in R(leaf(s)) and both host
// links are on (see LeafReach). No all-pairs search; reusable buffers, no
// allocation per check.
//
// With a FaultSet (docs/mechanisms.md §3.1) the proof only asks for the pairs
// the surviving cables can still connect. Ordered pair (a, b) is *connectable*
// iff an up*/down* path from a to b exists over the directions the faults leave
// usable, with every link on. Up*/down* (valley-free) and not mere graph
// connectivity, because that is the only kind of path the routing (and the
// emulator) can use: two leaves joined only through a valley (up, down, up,
// down) cannot talk. It is also a relation, not a partition: leaves A and B
// may share a spine, and B and C another, while A and C share none.
class Connectivity {
 public:
  explicit Connectivity(const Topology& topo);

  // nullopt when every pair is connected; otherwise one pair without a path.
  std::optional<HostPair> findDisconnectedPair(const LinkStates& states);
  bool allConnected(const LinkStates& states) { return !findDisconnectedPair(states); }

  // nullopt when every connectable pair has an up*/down* path over the
  // directions that are on and usable; otherwise one connectable pair that has
  // none. Physically cut pairs are not reported.
  std::optional<HostPair> findDisconnectedPair(const LinkStates& states, const FaultSet& faults);
  bool allConnected(const LinkStates& states, const FaultSet& faults) {
    return !findDisconnectedPair(states, faults);
  }
  // Ordered pair (a, b) connectable despite `faults` (a == b is connectable).
  bool connectable(HostId a, HostId b, const FaultSet& faults);
  // Number of ordered pairs (a, b), a != b, that are not connectable. With
  // whole-cable faults connectability is symmetric and this is twice the
  // number of unordered cut pairs.
  std::uint64_t countCutPairs(const FaultSet& faults);

  // Number of ordered pairs (a, b), a != b, that are connectable despite
  // `faults` but have no up*/down* path over the directions on and usable:
  // zero exactly when findDisconnectedPair(states, faults) finds none.
  // O(hosts + leaves^2).
  std::uint64_t countDisconnectedPairs(const LinkStates& states, const FaultSet& faults);

  // The reach over the usable directions (every link on) for `faults`; cached
  // until a different FaultSet is passed.
  const LeafReach& surviving(const FaultSet& faults);
  // The reach over the links on, as computed by the last findDisconnectedPair
  // that got as far as comparing leaves (every host link it needed was on).
  const LeafReach& lastReach() const { return now_; }

  // "no up*/down* path from H3 to H60" for logs and errors.
  std::string describe(const HostPair& pair) const;

 private:
  using Word = LeafReach::Word;
  // A host other than `other` on leaf index j that can receive (send) over
  // usable directions, or invalid. Needs surviving() to be current.
  HostId receiverOn(std::size_t j, HostId other) const;
  HostId senderOn(std::size_t j, HostId other) const;

  const Topology& topo_;
  LeafReach now_;
  LeafReach surviving_;
  std::vector<HostId> firstHostOfLeaf_;   // leaf index -> a host on it (invalid: none)
  std::vector<Word> hostLeaves_;          // leaves with a host
  std::vector<std::uint32_t> hostStart_;  // leaf index -> first slot in hostsByLeaf_
  std::vector<HostId> hostsByLeaf_;       // hosts grouped by leaf, ascending

  // Derived from the cached FaultSet.
  std::optional<FaultSet> survivingFor_;
  std::vector<Word> recvLeaves_;           // leaves with a host whose down direction is usable
  std::vector<std::uint32_t> numSenders_;  // per leaf: hosts whose up direction is usable
  std::vector<std::uint32_t> numReceivers_;
  std::uint64_t numSendAndReceive_ = 0;  // hosts usable both ways
  // Connectable ordered pairs, self-pairs excluded, for the cached FaultSet.
  std::uint64_t connectablePairs();
};

}  // namespace ebb::fabric
