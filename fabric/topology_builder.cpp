#include "fabric/topology_builder.h"

#include <algorithm>
#include <charconv>
#include <deque>

#include <fmt/format.h>

#include "common/guid.h"

namespace ebb::fabric {

namespace {
Status notFatTree(std::string msg) {
  return {ErrorCode::kNotFatTree, std::move(msg)};
}
}  // namespace

SwitchId TopologyBuilder::addSwitch(std::string name, std::uint64_t guid, int numPorts) {
  SwitchId id(static_cast<std::uint32_t>(topo_.switches_.size()));
  Switch s;
  s.name = std::move(name);
  s.guid = guid;
  s.ports.resize(static_cast<std::size_t>(std::max(numPorts, 0)));
  topo_.switches_.push_back(std::move(s));
  peers_.emplace_back(static_cast<std::size_t>(std::max(numPorts, 0)), PortId{});
  return id;
}

HostId TopologyBuilder::addHost(std::string name, std::uint64_t guid) {
  HostId id(static_cast<std::uint32_t>(topo_.hosts_.size()));
  Host h;
  h.name = std::move(name);
  h.guid = guid;
  topo_.hosts_.push_back(std::move(h));
  hostCables_.push_back(0);
  return id;
}

Status TopologyBuilder::checkFree(PortId p) const {
  if (!p.sw.valid() || p.sw.value() >= topo_.switches_.size()) {
    return {ErrorCode::kInvalidArgument, fmt::format("unknown switch id {}", p.sw.value())};
  }
  const Switch& s = topo_.switches_[p.sw.value()];
  if (p.index >= s.ports.size()) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("switch {} has {} ports; port {} is out of range", s.name, s.ports.size(),
                        p.ibPortNumber())};
  }
  if (peers_[p.sw.value()][p.index].sw.valid() || s.ports[p.index].link.valid()) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("port {}[{}] is cabled twice", s.name, p.ibPortNumber())};
  }
  return Status::ok();
}

Status TopologyBuilder::connectSwitches(PortId a, PortId b) {
  if (Status s = checkFree(a); !s.isOk()) return s;
  if (Status s = checkFree(b); !s.isOk()) return s;
  if (a.sw == b.sw) {
    return notFatTree(fmt::format("switch {} is cabled to itself (ports {} and {})",
                                  topo_.switches_[a.sw.value()].name, a.ibPortNumber(),
                                  b.ibPortNumber()));
  }
  peers_[a.sw.value()][a.index] = b;
  peers_[b.sw.value()][b.index] = a;
  cables_.push_back({false, HostId{}, 0, a, b});
  return Status::ok();
}

Status TopologyBuilder::connectHost(HostId host, std::uint16_t hostPortIndex, PortId swPort) {
  if (!host.valid() || host.value() >= topo_.hosts_.size()) {
    return {ErrorCode::kInvalidArgument, fmt::format("unknown host id {}", host.value())};
  }
  if (Status s = checkFree(swPort); !s.isOk()) return s;
  // Mark the switch port as taken by a host (peer switch id stays invalid).
  topo_.switches_[swPort.sw.value()].ports[swPort.index].link =
      LinkId(static_cast<std::uint32_t>(cables_.size()));
  cables_.push_back({true, host, hostPortIndex, swPort, PortId{}});
  ++hostCables_[host.value()];
  return Status::ok();
}

void TopologyBuilder::setKAry(int k, int n, std::vector<KAryLabel> labels) {
  topo_.kary_ = std::make_pair(k, n);
  topo_.labels_ = std::move(labels);
}

Status TopologyBuilder::setRoots(const std::vector<std::string>& roots, const std::string& field) {
  roots_.clear();
  for (const std::string& r : roots) {
    if (r.empty()) return invalidArgument(fmt::format("{}: an empty switch name", field));
    // A root named by GUID has its 0x (a name may look like hex digits).
    const bool prefixed = r.size() > 2 && r[0] == '0' && (r[1] == 'x' || r[1] == 'X');
    const std::optional<std::uint64_t> guid = prefixed ? parseGuid(r) : std::nullopt;
    const auto named = [&](const auto& node) {
      return node.name == r || (guid && *guid != 0 && node.guid == *guid);  // 0: no GUID
    };
    const auto& sws = topo_.switches_;
    const auto it = std::find_if(sws.begin(), sws.end(), named);
    if (it == sws.end()) {
      const bool host = std::any_of(topo_.hosts_.begin(), topo_.hosts_.end(), named);
      return invalidArgument(fmt::format(
          "{}: \"{}\" {}", field, r,
          host ? "is a host, not a switch" : "names no switch of the fabric (by name or GUID)"));
    }
    const SwitchId id(static_cast<std::uint32_t>(it - sws.begin()));
    if (std::find(roots_.begin(), roots_.end(), id) != roots_.end()) {
      return invalidArgument(fmt::format("{}: switch {} is given twice", field, it->name));
    }
    roots_.push_back(id);
  }
  return Status::ok();
}

// Given roots: level = hops below the nearest root; every switch with hosts
// must be on the lowest level (a leaf switch may have none).
Status TopologyBuilder::levelsFromRoots(std::vector<int>& level,
                                        const std::vector<bool>& hasHosts) {
  const std::size_t ns = topo_.switches_.size();
  level.assign(ns, -1);
  std::deque<std::uint32_t> queue;
  for (SwitchId r : roots_) {
    level[r.value()] = 0;
    queue.push_back(r.value());
  }
  while (!queue.empty()) {
    const std::uint32_t s = queue.front();
    queue.pop_front();
    for (const PortId& peer : peers_[s]) {
      if (peer.sw.valid() && level[peer.sw.value()] < 0) {
        level[peer.sw.value()] = level[s] + 1;
        queue.push_back(peer.sw.value());
      }
    }
  }
  const int lowest = *std::max_element(level.begin(), level.end());  // connected: all reached
  for (const Cable& c : cables_) {
    if (c.hostCable) continue;
    const std::uint32_t a = c.a.sw.value(), b = c.b.sw.value();
    if (level[a] != level[b]) continue;
    const auto& sa = topo_.switches_[a];
    const auto& sb = topo_.switches_[b];
    return notFatTree(fmt::format(
        "cable {}[{}] - {}[{}] joins two switches of level {} (level 0: the given roots): a "
        "cycle within a level, or a root that is not at the top",
        sa.name, c.a.ibPortNumber(), sb.name, c.b.ibPortNumber(), level[a]));
  }
  for (std::size_t s = 0; s < ns; ++s) {
    if (!hasHosts[s] || level[s] == lowest) continue;
    const auto low = std::find(level.begin(), level.end(), lowest) - level.begin();
    return notFatTree(fmt::format(
        "switch {} has hosts at level {} (level 0: the given roots), but switch {} is at level "
        "{}: hosts hang off the lowest level only (are the roots the top switches?)",
        topo_.switches_[s].name, level[s], topo_.switches_[static_cast<std::size_t>(low)].name,
        lowest));
  }
  topo_.depth_ = lowest + 1;
  return Status::ok();
}

// Height = hops above the nearest switch with hosts; level = maxHeight - height.
Status TopologyBuilder::assignLevels(std::vector<int>& level) {
  const std::size_t ns = topo_.switches_.size();
  std::vector<int> height(ns, -1);
  std::vector<bool> hasHosts(ns, false);
  std::deque<std::uint32_t> queue;
  for (const Cable& c : cables_) {
    if (c.hostCable && !hasHosts[c.a.sw.value()]) {
      hasHosts[c.a.sw.value()] = true;
      height[c.a.sw.value()] = 0;
      queue.push_back(c.a.sw.value());
    }
  }
  if (!roots_.empty()) return levelsFromRoots(level, hasHosts);
  // Per switch above the hosts: its port on the cable its height came by.
  std::vector<PortId> via(ns);
  while (!queue.empty()) {
    std::uint32_t s = queue.front();
    queue.pop_front();
    for (const PortId& peer : peers_[s]) {
      if (peer.sw.valid() && height[peer.sw.value()] < 0) {
        height[peer.sw.value()] = height[s] + 1;
        via[peer.sw.value()] = peer;
        queue.push_back(peer.sw.value());
      }
    }
  }
  // "S0_0[1] - S1_0[3]": the cable through which switch s got its height.
  const auto cameBy = [&](std::uint32_t s) {
    const PortId mine = via[s];
    const PortId below = peers_[s][mine.index];
    return fmt::format("{}[{}] - {}[{}]", topo_.switches_[s].name, mine.ibPortNumber(),
                       topo_.switches_[below.sw.value()].name, below.ibPortNumber());
  };
  int maxHeight = 0;
  for (std::size_t s = 0; s < ns; ++s) {
    if (height[s] < 0) {
      return notFatTree(fmt::format("switch {} has no path to any host", topo_.switches_[s].name));
    }
    maxHeight = std::max(maxHeight, height[s]);
  }
  for (const Cable& c : cables_) {
    if (c.hostCable) continue;
    const std::uint32_t a = c.a.sw.value(), b = c.b.sw.value();
    if (height[a] == height[b]) {
      const auto& sa = topo_.switches_[a];
      const auto& sb = topo_.switches_[b];
      if (hasHosts[a] && hasHosts[b]) {
        return notFatTree(fmt::format(
            "hosts at different depths: switches {} and {} both have hosts and are cabled to "
            "each other ({}[{}] - {}[{}])",
            sa.name, sb.name, sa.name, c.a.ibPortNumber(), sb.name, c.b.ibPortNumber()));
      }
      // Each end's level comes from its shortest way down to hosts: a cable
      // that skips a level shows up as the cable it made look lateral.
      return notFatTree(fmt::format(
          "cable {}[{}] - {}[{}] joins two switches of the same level ({} hop{} above the "
          "hosts: {} by cable {}, {} by cable {}): a cycle within a level, hosts at different "
          "depths, or one of those cables skips a level",
          sa.name, c.a.ibPortNumber(), sb.name, c.b.ibPortNumber(), height[a],
          height[a] == 1 ? "" : "s", sa.name, cameBy(a), sb.name, cameBy(b)));
    }
  }
  for (std::size_t s = 0; s < ns; ++s) {
    if (height[s] == maxHeight) continue;
    bool hasUp = false;
    for (const PortId& peer : peers_[s]) {
      if (peer.sw.valid() && height[peer.sw.value()] == height[s] + 1) hasUp = true;
    }
    if (!hasUp) {
      return notFatTree(fmt::format(
          "switch {} has no path up: it has no up link but sits {} levels below the roots",
          topo_.switches_[s].name, maxHeight - height[s]));
    }
  }
  level.resize(ns);
  for (std::size_t s = 0; s < ns; ++s)
    level[s] = maxHeight - height[s];
  topo_.depth_ = maxHeight + 1;
  return Status::ok();
}

Result<Topology> TopologyBuilder::build() {
  if (topo_.hosts_.empty()) return notFatTree("the topology has no hosts");
  for (std::size_t h = 0; h < topo_.hosts_.size(); ++h) {
    if (hostCables_[h] == 0) {
      return notFatTree(fmt::format("host {} is not cabled to any switch", topo_.hosts_[h].name));
    }
    if (hostCables_[h] > 1) {
      return notFatTree(
          fmt::format("host {} is cabled to {} switch ports; ebb supports single-homed hosts only",
                      topo_.hosts_[h].name, hostCables_[h]));
    }
  }
  // One connected component (switch graph; every host hangs off a switch).
  {
    std::vector<bool> seen(topo_.switches_.size(), false);
    std::deque<std::uint32_t> queue{0};
    seen[0] = true;
    while (!queue.empty()) {
      std::uint32_t s = queue.front();
      queue.pop_front();
      for (const PortId& peer : peers_[s]) {
        if (peer.sw.valid() && !seen[peer.sw.value()]) {
          seen[peer.sw.value()] = true;
          queue.push_back(peer.sw.value());
        }
      }
    }
    for (std::size_t s = 0; s < seen.size(); ++s) {
      if (!seen[s]) {
        return notFatTree(fmt::format("the fabric is not connected: switch {} cannot reach {}",
                                      topo_.switches_[s].name, topo_.switches_[0].name));
      }
    }
  }
  std::vector<int> level;
  if (Status s = assignLevels(level); !s.isOk()) return s;

  Topology t = topo_;
  t.links_.clear();
  t.links_.reserve(cables_.size());
  for (std::size_t i = 0; i < t.switches_.size(); ++i)
    t.switches_[i].level = level[i];
  for (std::size_t ci = 0; ci < cables_.size(); ++ci) {
    const Cable& c = cables_[ci];
    const LinkId id(static_cast<std::uint32_t>(ci));
    Link link;
    if (c.hostCable) {
      link.lowerIsHost = true;
      link.host = c.host;
      link.upper = c.a;
      t.hosts_[c.host.value()].link = id;
      t.hosts_[c.host.value()].portIndex = c.hostPort;
    } else {
      const bool aIsParent = level[c.a.sw.value()] < level[c.b.sw.value()];
      link.upper = aIsParent ? c.a : c.b;
      link.lower = aIsParent ? c.b : c.a;
      t.switches_[link.lower.sw.value()].ports[link.lower.index] = {PortRole::kUp, id};
    }
    t.switches_[link.upper.sw.value()].ports[link.upper.index] = {PortRole::kDown, id};
    t.links_.push_back(link);
  }
  t.byLevel_.assign(static_cast<std::size_t>(t.depth_), {});
  for (std::size_t i = 0; i < t.switches_.size(); ++i) {
    Switch& s = t.switches_[i];
    for (std::size_t p = 0; p < s.ports.size(); ++p) {
      if (s.ports[p].role == PortRole::kUp) s.upPorts.push_back(static_cast<std::uint16_t>(p));
      if (s.ports[p].role == PortRole::kDown) s.downPorts.push_back(static_cast<std::uint16_t>(p));
    }
    t.byLevel_[static_cast<std::size_t>(s.level)].push_back(
        SwitchId(static_cast<std::uint32_t>(i)));
  }
  return t;
}

}  // namespace ebb::fabric
