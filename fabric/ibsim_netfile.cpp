#include "fabric/ibsim_netfile.h"

#include <fmt/format.h>

namespace ebb::fabric {

namespace {

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
  for (const Host& h : t.hosts()) {
    const Link& l = t.link(h.link);
    out << fmt::format("caguid={:#018x}\nHca\t{} \"{}\"\n", h.guid, h.portIndex + 1, h.name);
    out << fmt::format("[{}]\t\"{}\"[{}]\t# lid 0 4xQDR\n\n", h.portIndex + 1,
                       t.sw(l.upper.sw).name, l.upper.ibPortNumber());
  }
  for (std::size_t s = 0; s < t.numSwitches(); ++s) {
    const SwitchId id(static_cast<std::uint32_t>(s));
    const Switch& sw = t.sw(id);
    out << fmt::format("switchguid={:#018x}\nSwitch\t{} \"{}\"\n", sw.guid, sw.ports.size(),
                       sw.name);
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
