#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
// links are on. No all-pairs search; reusable buffers, no allocation per check.
class Connectivity {
 public:
  explicit Connectivity(const Topology& topo);

  // nullopt when every pair is connected; otherwise one pair without a path.
  std::optional<HostPair> findDisconnectedPair(const LinkStates& states);
  bool allConnected(const LinkStates& states) { return !findDisconnectedPair(states); }
  // "no up*/down* path from H3 to H60" for logs and errors.
  std::string describe(const HostPair& pair) const;

 private:
  using Word = std::uint64_t;
  Word* down(std::size_t s) { return &down_[s * words_]; }
  Word* reach(std::size_t s) { return &reach_[s * words_]; }

  const Topology& topo_;
  std::size_t words_ = 0;
  std::vector<std::uint32_t> leafIndex_;  // per switch (leaf level only)
  std::vector<SwitchId> leaves_;          // leaf index -> switch
  std::vector<HostId> firstHostOfLeaf_;   // leaf index -> a host on it
  std::vector<Word> down_;
  std::vector<Word> reach_;
};

}  // namespace ebb::fabric
