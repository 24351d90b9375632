#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fabric/topology.h"

namespace ebb::fabric {

// Up*/down* reachability between leaf switches, as bitsets over the leaves
// (docs/mechanisms.md §3). For each switch s, D(s) is the set of leaves s
// reaches descending, computed bottom-up; R(s) = D(s) ∪ R(p) for every parent
// p reached by an usable up direction, computed top-down. A leaf i reaches a
// leaf j by an up*/down* (valley-free) path iff j ∈ R(i). Cost per compute():
// O(links × leaves / 64), no allocation. Shared by the connectivity proof and
// the re-homing of the minimal tree.
class LeafReach {
 public:
  using Word = std::uint64_t;

  explicit LeafReach(const Topology& t);

  // usable(LinkId, Direction) -> bool says which link directions may be used.
  template <class Usable>
  void compute(const Usable& usable);

  std::size_t numLeaves() const { return leaves_.size(); }
  std::size_t words() const { return words_; }
  SwitchId leaf(std::size_t i) const { return leaves_[i]; }
  std::size_t leafIndex(SwitchId leaf) const { return leafIndex_[leaf.value()]; }

  const Word* down(SwitchId s) const { return &down_[s.value() * words_]; }
  const Word* reach(SwitchId s) const { return &reach_[s.value() * words_]; }
  // Whether leaf index `to` is reachable up*/down* from leaf index `from`.
  bool leafReaches(std::size_t from, std::size_t to) const {
    return test(reach(leaves_[from]), to);
  }
  static bool test(const Word* set, std::size_t i) { return ((set[i / 64] >> (i % 64)) & 1u) != 0; }
  static void setBit(Word* set, std::size_t i) { set[i / 64] |= Word{1} << (i % 64); }

 private:
  Word* downMut(SwitchId s) { return &down_[s.value() * words_]; }
  Word* reachMut(SwitchId s) { return &reach_[s.value() * words_]; }

  const Topology& topo_;
  std::vector<SwitchId> leaves_;          // leaf index -> switch
  std::vector<std::uint32_t> leafIndex_;  // per switch (leaf level only)
  std::size_t words_ = 0;
  std::vector<Word> down_;
  std::vector<Word> reach_;
};

template <class Usable>
void LeafReach::compute(const Usable& usable) {
  const int leafLevel = topo_.depth() - 1;
  std::fill(down_.begin(), down_.end(), 0);
  for (std::size_t i = 0; i < leaves_.size(); ++i)
    setBit(downMut(leaves_[i]), i);
  for (int level = leafLevel - 1; level >= 0; --level) {
    for (SwitchId s : topo_.switchesAtLevel(level)) {
      Word* d = downMut(s);
      for (std::uint16_t p : topo_.sw(s).downPorts) {
        const LinkId l = topo_.sw(s).ports[p].link;
        if (!usable(l, Direction::kDown)) continue;
        const Word* c = down(topo_.link(l).lower.sw);
        for (std::size_t w = 0; w < words_; ++w)
          d[w] |= c[w];
      }
    }
  }
  for (int level = 0; level <= leafLevel; ++level) {
    for (SwitchId s : topo_.switchesAtLevel(level)) {
      Word* r = reachMut(s);
      std::copy_n(down(s), words_, r);
      for (std::uint16_t p : topo_.sw(s).upPorts) {
        const LinkId l = topo_.sw(s).ports[p].link;
        if (!usable(l, Direction::kUp)) continue;
        const Word* pr = reach(topo_.link(l).upper.sw);
        for (std::size_t w = 0; w < words_; ++w)
          r[w] |= pr[w];
      }
    }
  }
}

}  // namespace ebb::fabric
