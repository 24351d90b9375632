#include "fabric/ibsim_netfile.h"

#include <fmt/format.h>

#include <unordered_set>
#include <vector>

#include "fabric/topology_builder.h"

namespace ebb::fabric {

namespace {

// The GUID each node gets in the file. ibsim needs one per node, unique and
// non-zero ("node Ca guid 0 already exists"), but a topology read from a file
// without GUID lines has GUID 0 ("none") on its nodes. Those get one in the
// style of a generated fabric (switch s: kGeneratedSwitchGuidBase + s + 1,
// host h: kGeneratedHostGuidBase + h + 1), moved up to the next free value
// past any GUID the topology already has, so the result is deterministic and
// collides with nothing.
struct NetfileGuids {
  std::vector<std::uint64_t> switches;
  std::vector<std::uint64_t> hosts;
};

NetfileGuids netfileGuids(const Topology& t) {
  std::unordered_set<std::uint64_t> used;
  for (const Switch& sw : t.switches())
    if (sw.guid != 0) used.insert(sw.guid);
  for (const Host& h : t.hosts())
    if (h.guid != 0) used.insert(h.guid);
  const auto synthesize = [&](std::uint64_t candidate) {
    while (candidate == 0 || !used.insert(candidate).second)
      ++candidate;
    return candidate;
  };
  NetfileGuids g;
  for (std::size_t s = 0; s < t.numSwitches(); ++s) {
    const std::uint64_t own = t.switches()[s].guid;
    g.switches.push_back(own != 0 ? own : synthesize(kGeneratedSwitchGuidBase + s + 1));
  }
  for (std::size_t h = 0; h < t.numHosts(); ++h) {
    const std::uint64_t own = t.hosts()[h].guid;
    g.hosts.push_back(own != 0 ? own : synthesize(kGeneratedHostGuidBase + h + 1));
  }
  return g;
}

// "<peer>"[port] of the far end of a switch port's cable.
std::string farEnd(const Topology& t, PortId p) {
  const Link& l = t.link(t.sw(p.sw).ports[p.index].link);
  if (l.lowerIsHost && l.upper == p) {
    const Host& h = t.host(l.host);
    return fmt::format("\"{}\"[{}]", h.name, h.portIndex + 1);
  }
  const PortId peer = l.upper == p ? l.lower : l.upper;
  return fmt::format("\"{}\"[{}]", t.sw(peer.sw).name, peer.ibPortNumber());
}

}  // namespace

Status writeIbsimNetfile(const Topology& t, std::ostream& out) {
  for (const Switch& sw : t.switches()) {
    if (sw.ports.size() > kMaxNetfilePorts) {
      return invalidArgument(fmt::format(
          "switch {} has {} ports: a net file (InfiniBand) numbers at most {} ports per node",
          sw.name, sw.ports.size(), kMaxNetfilePorts));
    }
  }
  out << fmt::format("# ibsim net file written by ebb: {} hosts, {} switches, {} links\n\n",
                     t.numHosts(), t.numSwitches(), t.numLinks());
  const NetfileGuids guids = netfileGuids(t);
  for (std::size_t i = 0; i < t.numHosts(); ++i) {
    const Host& h = t.hosts()[i];
    const Link& l = t.link(h.link);
    out << fmt::format("caguid={:#018x}\nHca\t{} \"{}\"\n", guids.hosts[i], h.portIndex + 1,
                       h.name);
    out << fmt::format("[{}]\t\"{}\"[{}]\t# lid 0 4xQDR\n\n", h.portIndex + 1,
                       t.sw(l.upper.sw).name, l.upper.ibPortNumber());
  }
  for (std::size_t s = 0; s < t.numSwitches(); ++s) {
    const SwitchId id(static_cast<std::uint32_t>(s));
    const Switch& sw = t.sw(id);
    out << fmt::format("switchguid={:#018x}\nSwitch\t{} \"{}\"\n", guids.switches[s],
                       sw.ports.size(), sw.name);
    for (std::size_t p = 0; p < sw.ports.size(); ++p) {
      if (!sw.ports[p].link.valid()) continue;
      const PortId port{id, static_cast<std::uint16_t>(p)};
      out << fmt::format("[{}]\t{}\t# lid 0 4xQDR\n", port.ibPortNumber(), farEnd(t, port));
    }
    out << "\n";
  }
  return Status::ok();
}

}  // namespace ebb::fabric
