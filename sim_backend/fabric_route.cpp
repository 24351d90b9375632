// Up*/down* routing as the emulator applies it at each hop (docs/emulator.md,
// "Routing"): the FabricEmulator members that pick a packet's next direction,
// down over the down table's ports, up by the up-routing strategy among the
// links that can still reach the destination.
#include <algorithm>

#include "sim_backend/fabric_emulator.h"

namespace ebb::sim {

using fabric::Direction;
using fabric::HostId;
using fabric::LinkId;
using fabric::SwitchId;

std::uint32_t FabricEmulator::route(SwitchId sw, HostId dst) {
  const SwitchId leaf = topo_.leafOf(dst);
  if (leaf == sw) return index(topo_.host(dst).link, Direction::kDown);
  const std::uint16_t down = downRoutes_.port(sw, leaf);
  if (down != DownRoutes::kNoPort) {
    if (downRoutes_.anyAlternates()) return chooseDown(sw, leaf, dst);
    return index(topo_.sw(sw).ports[down].link, Direction::kDown);
  }
  return chooseUp(sw, dst);
}

// The next direction of a packet that arrived at `sw` over `inCh`. A packet
// still climbing (it came up `inCh`) whose way down from here is broken by a
// failure (an irregular tree where the destination leaf hangs below this
// switch by one cable, a failed cable below a middle switch) climbs on where
// the destination is reachable, as a subnet manager's new routes would send
// it. Under whole-link gating (in-band) a way down can also go off after the
// packet chose to climb towards it, and no agent turns a link on for a
// packet waiting there: it goes on up where the destination is reachable
// over what is on; one that cannot is dropped (kNone), as an InfiniBand
// switch discards packets for a disabled port (marked Packet::gatedDrop, so
// its loss is counted as gating's, not a fault's). A draining direction
// still takes it.
std::uint32_t FabricEmulator::routeHop(SwitchId sw, std::uint32_t inCh, std::uint32_t p) {
  const HostId dst = packets_[p].dst;
  const std::uint32_t out = route(sw, dst);
  if (out == kNone) return out;
  const Channel& c = channels_[out];
  const bool climbing = inCh % 2 == static_cast<std::uint32_t>(Direction::kUp);
  if (failedDirections_ > 0 && climbing && !c.toHost &&
      out % 2 == static_cast<std::uint32_t>(Direction::kDown) &&
      (c.failed || !reach_.reachesDown(c.receiver, topo_.leafOf(dst)))) {
    const std::uint32_t up = chooseUp(sw, dst);
    if (up != kNone && !channels_[up].failed &&
        (!routeAroundGated_ || channels_[up].enabled || channels_[up].offPending)) {
      ++stats_.packetsRerouted;
      return up;
    }
    return out;
  }
  if (!routeAroundGated_) return out;
  if (c.enabled || c.offPending || c.failed) return out;
  if (climbing) {
    refreshGatedReach();
    const std::uint32_t up = chooseUpAmong(sw, dst, &gatedReach_);
    if (up != kNone && channels_[up].enabled) {
      ++stats_.packetsReascended;
      return up;
    }
  }
  packets_[p].gatedDrop = true;
  return kNone;
}

void FabricEmulator::refreshGatedReach() {
  if (!gatedReachDirty_) return;
  gatedReach_.recompute([this](LinkId l, Direction d) {
    const Channel& c = channels_[index(l, d)];
    return c.failed || !c.enabled;
  });
  gatedReachDirty_ = false;
}

// Ports that are on and lead to the leaf over what is on; else those no
// failure took that lead there (the packet waits for one to turn on); else
// the lowest (faults left no way: the caller's failure handling applies).
// Spread by destination host, so parallel cables share a leaf's traffic.
std::uint32_t FabricEmulator::chooseDown(SwitchId sw, SwitchId leaf, HostId dst) {
  const std::span<const std::uint16_t> ports = downRoutes_.ports(sw, leaf);
  const auto channelOf = [&](std::uint16_t port) {
    return index(topo_.sw(sw).ports[port].link, Direction::kDown);
  };
  if (ports.size() == 1) return channelOf(ports.front());
  const bool checkGated = failedDirections_ > 0 || routeAroundGated_ || irregularReach_;
  if (checkGated) refreshGatedReach();
  for (int pass = 0; pass < 2; ++pass) {
    downScratch_.clear();
    for (std::uint16_t port : ports) {
      const std::uint32_t ch = channelOf(port);
      const SwitchId child = channels_[ch].receiver;
      if (channels_[ch].failed) continue;
      if (pass == 0 && (!chUsable(ch) || (checkGated && !gatedReach_.reachesDown(child, leaf)))) {
        continue;
      }
      if (pass == 1 && !reach_.reachesDown(child, leaf)) continue;
      downScratch_.push_back(ch);
    }
    if (!downScratch_.empty()) return downScratch_[dst.value() % downScratch_.size()];
  }
  return channelOf(ports.front());
}

// With faults (or whole-link gating, as a subnet manager routes), a packet
// goes up only where the destination stays reachable over directions that
// are on: a cable failure can leave an upper switch whose one way on gating
// keeps off, and its agent would never turn that on for a packet waiting
// there. When gating leaves no such way, the packet waits where the faults
// allow one (the agents' recovery turns a way on); gating alone never leaves
// a packet without a way up.
std::uint32_t FabricEmulator::chooseUp(SwitchId sw, HostId dst) {
  if (failedDirections_ == 0 && !routeAroundGated_ && !irregularReach_) {
    return chooseUpAmong(sw, dst, nullptr);
  }
  refreshGatedReach();
  const std::uint32_t out = chooseUpAmong(sw, dst, &gatedReach_);
  if (out != kNone) return out;
  return chooseUpAmong(sw, dst, failedDirections_ > 0 || irregularReach_ ? &reach_ : nullptr);
}

// The usable up links with their load, for the up-routing strategy; with none
// usable, the packet waits where it will move soonest (routing.h).
std::uint32_t FabricEmulator::chooseUpAmong(SwitchId sw, HostId dst, const FaultReach* reach) {
  const SwitchId dstLeaf = topo_.leafOf(dst);
  const auto& ups = topo_.sw(sw).upPorts;
  const bool load = upRouting_->needsLoad();
  const auto reaches = [&](std::uint32_t ch) {
    return reach == nullptr ||
           (!channels_[ch].failed && reach->reaches(channels_[ch].receiver, dstLeaf));
  };
  // Where no up link leads down the tables' way (in-band: no up link that is
  // on, since no agent turns one on for a waiting packet), one that climbs on
  // past a broken way down (routeHop) will do.
  const bool climbOn =
      reach != nullptr && std::none_of(ups.begin(), ups.end(), [&](std::uint16_t port) {
        const std::uint32_t ch = index(topo_.sw(sw).ports[port].link, Direction::kUp);
        return (!routeAroundGated_ || chUsable(ch)) && reaches(ch);
      });
  const auto reachesEither = [&](std::uint32_t ch) {
    return climbOn
               ? !channels_[ch].failed && reach->reachesClimbing(channels_[ch].receiver, dstLeaf)
               : reaches(ch);
  };
  upScratch_.clear();
  for (std::uint32_t i = 0; i < ups.size(); ++i) {
    const std::uint32_t ch = index(topo_.sw(sw).ports[ups[i]].link, Direction::kUp);
    if (!chUsable(ch) || !reachesEither(ch)) continue;
    UpCandidate cand{ch, 0, 0, i};
    if (load && iqModel()) {
      cand.freeCredit = iqFreeCredit(ch);
      cand.queue = iqOwned(ch);
    } else if (load) {
      const Channel& c = channels_[ch];
      for (std::int64_t v : c.credits)
        cand.freeCredit += v;
      cand.queue = c.queued + (c.busy ? 1u : 0u);
    }
    upScratch_.push_back(cand);
  }
  if (!upScratch_.empty()) {
    std::uint32_t preferred = 0;
    if (upRouting_->needsDestination()) {
      // D-mod-K: digit c of the destination in base u, c levels above the leaves.
      const auto u = static_cast<std::uint32_t>(ups.size());
      std::uint32_t key = dst.value();
      for (int c = topo_.depth() - 1 - topo_.sw(sw).level; c > 0; --c)
        key /= u;
      preferred = key % u;
    }
    return upRouting_->choose(upScratch_, preferred, rng_);
  }
  std::vector<UpLinkState> states;
  states.reserve(ups.size());
  for (std::uint16_t port : ups) {
    const std::uint32_t ch = index(topo_.sw(sw).ports[port].link, Direction::kUp);
    if (reachesEither(ch)) states.push_back({ch, channels_[ch].offPending, channels_[ch].enabled});
  }
  return states.empty() ? kNone : fallbackUp(states);
}

}  // namespace ebb::sim
