#include "fabric/connectivity.h"

#include <algorithm>

#include <fmt/format.h>

namespace ebb::fabric {

Connectivity::Connectivity(const Topology& topo) : topo_(topo), now_(topo), surviving_(topo) {
  const std::size_t nl = now_.numLeaves();
  firstHostOfLeaf_.assign(nl, HostId{});
  hostStart_.assign(nl + 1, 0);
  for (const Host& h : topo.hosts())
    ++hostStart_[now_.leafIndex(topo.link(h.link).upper.sw) + 1];
  for (std::size_t i = 0; i < nl; ++i)
    hostStart_[i + 1] += hostStart_[i];
  hostsByLeaf_.assign(topo.numHosts(), HostId{});
  std::vector<std::uint32_t> next(hostStart_.begin(), hostStart_.end() - 1);
  for (std::size_t h = 0; h < topo.numHosts(); ++h) {
    const HostId id(static_cast<std::uint32_t>(h));
    const std::size_t i = now_.leafIndex(topo.leafOf(id));
    hostsByLeaf_[next[i]++] = id;
    if (!firstHostOfLeaf_[i].valid()) firstHostOfLeaf_[i] = id;
  }
  // A leaf switch without hosts (a file fabric with roots given) joins no pair.
  hostLeaves_.assign(now_.words(), 0);
  for (std::size_t i = 0; i < nl; ++i) {
    if (firstHostOfLeaf_[i].valid()) LeafReach::setBit(hostLeaves_.data(), i);
  }
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
  now_.compute([&](LinkId l, Direction d) { return states.isOn(l, d); });
  const std::size_t nl = now_.numLeaves();
  for (std::size_t i = 0; i < nl; ++i) {
    if (!firstHostOfLeaf_[i].valid()) continue;
    const Word* r = now_.reach(now_.leaf(i));
    for (std::size_t w = 0; w < now_.words(); ++w) {
      const Word missing = hostLeaves_[w] & ~r[w];
      if (missing != 0) {
        const auto j = w * 64 + static_cast<std::size_t>(__builtin_ctzll(missing));
        return HostPair{firstHostOfLeaf_[i], firstHostOfLeaf_[j]};
      }
    }
  }
  return std::nullopt;
}

const LeafReach& Connectivity::surviving(const FaultSet& faults) {
  if (survivingFor_ && *survivingFor_ == faults) return surviving_;
  survivingFor_ = faults;
  surviving_.compute([&](LinkId l, Direction d) { return faults.usable(l, d); });
  const std::size_t nl = surviving_.numLeaves();
  recvLeaves_.assign(surviving_.words(), 0);
  numSenders_.assign(nl, 0);
  numReceivers_.assign(nl, 0);
  numSendAndReceive_ = 0;
  for (std::size_t i = 0; i < nl; ++i) {
    for (std::uint32_t k = hostStart_[i]; k < hostStart_[i + 1]; ++k) {
      const LinkId l = topo_.host(hostsByLeaf_[k]).link;
      const bool up = faults.usable(l, Direction::kUp);
      const bool down = faults.usable(l, Direction::kDown);
      numSenders_[i] += up;
      numReceivers_[i] += down;
      numSendAndReceive_ += up && down;
    }
    if (numReceivers_[i] > 0) LeafReach::setBit(recvLeaves_.data(), i);
  }
  return surviving_;
}

HostId Connectivity::receiverOn(std::size_t j, HostId other) const {
  for (std::uint32_t k = hostStart_[j]; k < hostStart_[j + 1]; ++k) {
    const HostId h = hostsByLeaf_[k];
    if (h != other && survivingFor_->usable(topo_.host(h).link, Direction::kDown)) return h;
  }
  return HostId{};
}

HostId Connectivity::senderOn(std::size_t j, HostId other) const {
  for (std::uint32_t k = hostStart_[j]; k < hostStart_[j + 1]; ++k) {
    const HostId h = hostsByLeaf_[k];
    if (h != other && survivingFor_->usable(topo_.host(h).link, Direction::kUp)) return h;
  }
  return HostId{};
}

std::optional<HostPair> Connectivity::findDisconnectedPair(const LinkStates& states,
                                                           const FaultSet& faults) {
  const LeafReach& phys = surviving(faults);
  const std::size_t nl = phys.numLeaves();
  const std::size_t words = phys.words();
  // 1. Host links: a usable direction that is off breaks every pair that needs
  //    it; name one such pair if the host has a connectable partner at all.
  for (std::size_t h = 0; h < topo_.numHosts(); ++h) {
    const HostId id(static_cast<std::uint32_t>(h));
    const LinkId l = topo_.host(id).link;
    const std::size_t i = phys.leafIndex(topo_.leafOf(id));
    if (faults.usable(l, Direction::kUp) && !states.isOn(l, Direction::kUp)) {
      const Word* r = phys.reach(phys.leaf(i));
      for (std::size_t j = 0; j < nl; ++j) {
        if (!LeafReach::test(r, j) || !LeafReach::test(recvLeaves_.data(), j)) continue;
        if (const HostId b = receiverOn(j, id); b.valid()) return HostPair{id, b};
      }
    }
    if (faults.usable(l, Direction::kDown) && !states.isOn(l, Direction::kDown)) {
      for (std::size_t j = 0; j < nl; ++j) {
        if (numSenders_[j] == 0 || !phys.leafReaches(j, i)) continue;
        if (const HostId a = senderOn(j, id); a.valid()) return HostPair{a, id};
      }
    }
  }
  // 2. Leaves: every host link a connectable pair needs is on now, so pair
  //    (a, b) on leaves i != j is broken iff j is in R_surviving(i) but not in
  //    R_now(i). (i is always in R_now(i).)
  now_.compute([&](LinkId l, Direction d) { return states.isOn(l, d) && faults.usable(l, d); });
  for (std::size_t i = 0; i < nl; ++i) {
    if (numSenders_[i] == 0) continue;
    const Word* rp = phys.reach(phys.leaf(i));
    const Word* rn = now_.reach(now_.leaf(i));
    for (std::size_t w = 0; w < words; ++w) {
      const Word missing = rp[w] & ~rn[w] & recvLeaves_[w];
      if (missing != 0) {
        const auto j = w * 64 + static_cast<std::size_t>(__builtin_ctzll(missing));
        return HostPair{senderOn(i, HostId{}), receiverOn(j, HostId{})};
      }
    }
  }
  return std::nullopt;
}

bool Connectivity::connectable(HostId a, HostId b, const FaultSet& faults) {
  if (a == b) return true;
  if (!faults.usable(topo_.host(a).link, Direction::kUp) ||
      !faults.usable(topo_.host(b).link, Direction::kDown)) {
    return false;
  }
  const LeafReach& phys = surviving(faults);
  return phys.leafReaches(phys.leafIndex(topo_.leafOf(a)), phys.leafIndex(topo_.leafOf(b)));
}

std::uint64_t Connectivity::connectablePairs() {
  const LeafReach& phys = surviving_;
  const std::size_t nl = phys.numLeaves();
  // Connectable ordered pairs, self-pairs included, then minus the self-pairs.
  std::uint64_t pairs = 0;
  for (std::size_t i = 0; i < nl; ++i) {
    if (numSenders_[i] == 0) continue;
    std::uint64_t receivers = 0;
    for (std::size_t j = 0; j < nl; ++j) {
      if (phys.leafReaches(i, j)) receivers += numReceivers_[j];
    }
    pairs += std::uint64_t{numSenders_[i]} * receivers;
  }
  return pairs - numSendAndReceive_;
}

std::uint64_t Connectivity::countCutPairs(const FaultSet& faults) {
  surviving(faults);
  const std::uint64_t n = topo_.numHosts();
  return n * (n - (n > 0 ? 1 : 0)) - connectablePairs();
}

std::uint64_t Connectivity::countDisconnectedPairs(const LinkStates& states,
                                                   const FaultSet& faults) {
  surviving(faults);
  const std::uint64_t connectable = connectablePairs();
  // Pairs with a path: a's up and b's down usable and on, leaf(b) in R_now(leaf(a)).
  now_.compute([&](LinkId l, Direction d) { return states.isOn(l, d) && faults.usable(l, d); });
  const std::size_t nl = now_.numLeaves();
  std::vector<std::uint64_t> senders(nl, 0), receivers(nl, 0);
  std::uint64_t both = 0;
  for (std::size_t i = 0; i < nl; ++i) {
    for (std::uint32_t k = hostStart_[i]; k < hostStart_[i + 1]; ++k) {
      const LinkId l = topo_.host(hostsByLeaf_[k]).link;
      const bool up = faults.usable(l, Direction::kUp) && states.isOn(l, Direction::kUp);
      const bool down = faults.usable(l, Direction::kDown) && states.isOn(l, Direction::kDown);
      senders[i] += up;
      receivers[i] += down;
      both += up && down;
    }
  }
  std::uint64_t connected = 0;
  for (std::size_t i = 0; i < nl; ++i) {
    if (senders[i] == 0) continue;
    std::uint64_t r = 0;
    for (std::size_t j = 0; j < nl; ++j) {
      if (now_.leafReaches(i, j)) r += receivers[j];
    }
    connected += senders[i] * r;
  }
  connected -= both;
  return connectable - connected;
}

std::string Connectivity::describe(const HostPair& pair) const {
  return fmt::format("no up*/down* path from {} to {}", topo_.host(pair.src).name,
                     topo_.host(pair.dst).name);
}

}  // namespace ebb::fabric
