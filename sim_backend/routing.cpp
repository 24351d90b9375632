#include "sim_backend/routing.h"

namespace ebb::sim {

using fabric::SwitchId;

DownRoutes::DownRoutes(const fabric::Topology& topo) {
  const auto& leaves = topo.switchesAtLevel(topo.depth() - 1);
  numLeaves_ = leaves.size();
  leafIndex_.assign(topo.numSwitches(), kNotALeaf);
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    leafIndex_[leaves[i].value()] = static_cast<std::uint32_t>(i);
  }
  table_.assign(topo.numSwitches() * numLeaves_, kNoPort);
  // Bottom-up: a switch reaches a leaf through each down port whose child is
  // that leaf or reaches it; the table keeps the lowest, alternates_ all.
  const auto add = [&](std::size_t e, std::uint16_t port) {
    if (table_[e] == kNoPort) {
      table_[e] = port;
      return;
    }
    std::vector<std::uint16_t>& all = alternates_[e];
    if (all.empty()) all.push_back(table_[e]);
    all.push_back(port);
  };
  for (int level = topo.depth() - 2; level >= 0; --level) {
    for (SwitchId s : topo.switchesAtLevel(level)) {
      const std::size_t row = s.value() * numLeaves_;
      for (std::uint16_t port : topo.sw(s).downPorts) {
        const fabric::Link& l = topo.link(topo.sw(s).ports[port].link);
        if (l.lowerIsHost) continue;
        const SwitchId child = l.lower.sw;
        if (leafIndex_[child.value()] != kNotALeaf) {
          add(row + leafIndex_[child.value()], port);
          continue;
        }
        const std::uint16_t* childRow = &table_[child.value() * numLeaves_];
        for (std::size_t leaf = 0; leaf < numLeaves_; ++leaf) {
          if (childRow[leaf] != kNoPort) add(row + leaf, port);
        }
      }
    }
  }
}

std::span<const std::uint16_t> DownRoutes::ports(SwitchId sw, SwitchId leaf) const {
  const std::size_t e = entry(sw, leaf);
  if (table_[e] == kNoPort) return {};
  if (!alternates_.empty()) {
    if (const auto it = alternates_.find(e); it != alternates_.end()) return it->second;
  }
  return {&table_[e], 1};
}

FaultReach::FaultReach(const fabric::Topology& topo, const DownRoutes& down)
    : topo_(topo), down_(down) {
  const auto& leaves = topo.switchesAtLevel(topo.depth() - 1);
  numLeaves_ = leaves.size();
  leafIndex_.assign(topo.numSwitches(), 0);
  for (std::size_t i = 0; i < leaves.size(); ++i)
    leafIndex_[leaves[i].value()] = static_cast<std::uint32_t>(i);
  downOk_.assign(topo.numSwitches() * numLeaves_, 0);
  reach_.assign(topo.numSwitches() * numLeaves_, 0);
  reachClimbing_.assign(topo.numSwitches() * numLeaves_, 0);
}

void FaultReach::recompute(const Failed& failed) {
  const auto& leaves = topo_.switchesAtLevel(topo_.depth() - 1);
  // Bottom-up: the down path from a switch to a leaf is intact when its first
  // down direction is and the child's path is.
  for (int level = topo_.depth() - 1; level >= 0; --level) {
    for (SwitchId s : topo_.switchesAtLevel(level)) {
      std::uint8_t* row = &downOk_[s.value() * numLeaves_];
      for (std::size_t leaf = 0; leaf < numLeaves_; ++leaf) {
        if (leaves[leaf] == s) {
          row[leaf] = 1;
          continue;
        }
        row[leaf] = 0;
        for (std::uint16_t port : down_.ports(s, leaves[leaf])) {
          const fabric::LinkId link = topo_.sw(s).ports[port].link;
          const SwitchId child = topo_.link(link).lower.sw;
          if (!failed(link, fabric::Direction::kDown) &&
              downOk_[child.value() * numLeaves_ + leaf] != 0) {
            row[leaf] = 1;
            break;
          }
        }
      }
    }
  }
  // Top-down: a leaf not below a switch is reached through some intact up
  // direction whose upper switch reaches it; climbing on, also a leaf below
  // whose way down is broken.
  for (int level = 0; level < topo_.depth(); ++level) {
    for (SwitchId s : topo_.switchesAtLevel(level)) {
      std::uint8_t* row = &reach_[s.value() * numLeaves_];
      std::uint8_t* climbing = &reachClimbing_[s.value() * numLeaves_];
      for (std::size_t leaf = 0; leaf < numLeaves_; ++leaf) {
        const std::uint8_t down = downOk_[s.value() * numLeaves_ + leaf];
        const bool below = leaves[leaf] == s || down_.port(s, leaves[leaf]) != DownRoutes::kNoPort;
        row[leaf] = below ? down : 0;
        climbing[leaf] = down;
        if (leaves[leaf] == s) continue;
        for (std::uint16_t up : topo_.sw(s).upPorts) {
          const fabric::LinkId link = topo_.sw(s).ports[up].link;
          const SwitchId upper = topo_.link(link).upper.sw;
          if (failed(link, fabric::Direction::kUp)) continue;
          if (!below && reach_[upper.value() * numLeaves_ + leaf] != 0) row[leaf] = 1;
          if (reachClimbing_[upper.value() * numLeaves_ + leaf] != 0) climbing[leaf] = 1;
        }
      }
    }
  }
}

namespace {

std::uint32_t pickOne(const std::vector<std::uint32_t>& tied, std::mt19937_64& rng) {
  if (tied.size() == 1) return tied.front();
  std::uniform_int_distribution<std::size_t> pick(0, tied.size() - 1);
  return tied[pick(rng)];
}

class AdaptiveUpRouting final : public UpRoutingStrategy {
 public:
  const char* name() const override { return "adaptive"; }
  bool needsLoad() const override { return true; }
  std::uint32_t choose(const std::vector<UpCandidate>& usable, std::uint32_t /*preferred*/,
                       std::mt19937_64& rng) const override {
    tied_.clear();
    std::int64_t bestCredit = -1;
    std::uint32_t bestQueue = 0xFFFFFFFF;
    for (const UpCandidate& c : usable) {
      if (c.freeCredit > bestCredit || (c.freeCredit == bestCredit && c.queue < bestQueue)) {
        bestCredit = c.freeCredit;
        bestQueue = c.queue;
        tied_.assign(1, c.channel);
      } else if (c.freeCredit == bestCredit && c.queue == bestQueue) {
        tied_.push_back(c.channel);
      }
    }
    return pickOne(tied_, rng);
  }

 private:
  mutable std::vector<std::uint32_t> tied_;  // scratch, kept to avoid allocating per packet
};

class RandomUpRouting final : public UpRoutingStrategy {
 public:
  const char* name() const override { return "random"; }
  bool needsLoad() const override { return false; }
  std::uint32_t choose(const std::vector<UpCandidate>& usable, std::uint32_t /*preferred*/,
                       std::mt19937_64& rng) const override {
    if (usable.size() == 1) return usable.front().channel;
    std::uniform_int_distribution<std::size_t> pick(0, usable.size() - 1);
    return usable[pick(rng)].channel;
  }
};

// Deterministic: the same destination always climbs through the same port
// while it is usable, and destinations spread evenly over the ports.
class DestinationUpRouting final : public UpRoutingStrategy {
 public:
  const char* name() const override { return "destination"; }
  bool needsLoad() const override { return false; }
  bool needsDestination() const override { return true; }
  std::uint32_t choose(const std::vector<UpCandidate>& usable, std::uint32_t preferred,
                       std::mt19937_64& /*rng*/) const override {
    // `usable` is in up-port order: the first at or after `preferred`, else
    // the first of all (wrapping around).
    for (const UpCandidate& c : usable) {
      if (c.upIndex >= preferred) return c.channel;
    }
    return usable.front().channel;
  }
};

}  // namespace

std::unique_ptr<UpRoutingStrategy> makeUpRouting(UpRouting kind) {
  switch (kind) {
    case UpRouting::kRandom:
      return std::make_unique<RandomUpRouting>();
    case UpRouting::kDestination:
      return std::make_unique<DestinationUpRouting>();
    case UpRouting::kAdaptive:
      break;
  }
  return std::make_unique<AdaptiveUpRouting>();
}

std::uint32_t fallbackUp(const std::vector<UpLinkState>& ups) {
  const UpLinkState* turningOn = nullptr;
  for (const UpLinkState& u : ups) {
    if (u.draining) return u.channel;
    if (u.enabled && turningOn == nullptr) turningOn = &u;
  }
  return turningOn ? turningOn->channel : ups.front().channel;
}

}  // namespace ebb::sim
