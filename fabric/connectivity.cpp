#include "fabric/connectivity.h"

#include <algorithm>

#include <fmt/format.h>

namespace ebb::fabric {

Connectivity::Connectivity(const Topology& topo) : topo_(topo) {
  leaves_ = topo.switchesAtLevel(topo.depth() - 1);
  leafIndex_.assign(topo.numSwitches(), 0);
  for (std::size_t i = 0; i < leaves_.size(); ++i) {
    leafIndex_[leaves_[i].value()] = static_cast<std::uint32_t>(i);
  }
  firstHostOfLeaf_.assign(leaves_.size(), HostId{});
  for (std::size_t h = topo.numHosts(); h-- > 0;) {
    const HostId id(static_cast<std::uint32_t>(h));
    firstHostOfLeaf_[leafIndex_[topo.leafOf(id).value()]] = id;
  }
  words_ = (leaves_.size() + 63) / 64;
  down_.assign(topo.numSwitches() * words_, 0);
  reach_.assign(topo.numSwitches() * words_, 0);
}

std::optional<HostPair> Connectivity::findDisconnectedPair(const LinkStates& states) {
  const std::size_t nh = topo_.numHosts();
  // Host links: a host that cannot send, or cannot receive, breaks a pair.
  for (std::size_t h = 0; h < nh && nh > 1; ++h) {
    const HostId id(static_cast<std::uint32_t>(h));
    const HostId other(static_cast<std::uint32_t>(h == 0 ? 1 : 0));
    const LinkId l = topo_.host(id).link;
    if (!states.isOn(l, Direction::kUp)) return HostPair{id, other};
    if (!states.isOn(l, Direction::kDown)) return HostPair{other, id};
  }
  const int leafLevel = topo_.depth() - 1;
  // D bottom-up: the leaves a switch reaches descending.
  std::fill(down_.begin(), down_.end(), 0);
  for (std::size_t i = 0; i < leaves_.size(); ++i) {
    down(leaves_[i].value())[i / 64] |= Word{1} << (i % 64);
  }
  for (int level = leafLevel - 1; level >= 0; --level) {
    for (SwitchId s : topo_.switchesAtLevel(level)) {
      Word* d = down(s.value());
      for (std::uint16_t p : topo_.sw(s).downPorts) {
        const LinkId l = topo_.sw(s).ports[p].link;
        if (!states.isOn(l, Direction::kDown)) continue;
        const Word* c = down(topo_.link(l).lower.sw.value());
        for (std::size_t w = 0; w < words_; ++w)
          d[w] |= c[w];
      }
    }
  }
  // R top-down: D of the switch itself and of everything it reaches ascending.
  for (int level = 0; level <= leafLevel; ++level) {
    for (SwitchId s : topo_.switchesAtLevel(level)) {
      Word* r = reach(s.value());
      std::copy_n(down(s.value()), words_, r);
      for (std::uint16_t p : topo_.sw(s).upPorts) {
        const LinkId l = topo_.sw(s).ports[p].link;
        if (!states.isOn(l, Direction::kUp)) continue;
        const Word* pr = reach(topo_.link(l).upper.sw.value());
        for (std::size_t w = 0; w < words_; ++w)
          r[w] |= pr[w];
      }
    }
  }
  for (std::size_t i = 0; i < leaves_.size(); ++i) {
    const Word* r = reach(leaves_[i].value());
    for (std::size_t w = 0; w < words_; ++w) {
      const std::size_t bitsHere = std::min<std::size_t>(64, leaves_.size() - w * 64);
      const Word full = bitsHere == 64 ? ~Word{0} : ((Word{1} << bitsHere) - 1);
      const Word missing = full & ~r[w];
      if (missing != 0) {
        const auto j = w * 64 + static_cast<std::size_t>(__builtin_ctzll(missing));
        return HostPair{firstHostOfLeaf_[i], firstHostOfLeaf_[j]};
      }
    }
  }
  return std::nullopt;
}

std::string Connectivity::describe(const HostPair& pair) const {
  return fmt::format("no up*/down* path from {} to {}", topo_.host(pair.src).name,
                     topo_.host(pair.dst).name);
}

}  // namespace ebb::fabric
