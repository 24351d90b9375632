#include "fabric/topology.h"

#include <fmt/format.h>

namespace ebb::fabric {

PortId Topology::peerOf(PortId p) const {
  const Port& port = sw(p.sw).ports[p.index];
  if (!port.link.valid()) return {};
  const Link& l = link(port.link);
  if (l.lowerIsHost) return {};
  return l.upper == p ? l.lower : l.upper;
}

std::optional<SwitchId> Topology::findSwitch(const std::string& name) const {
  for (std::size_t i = 0; i < switches_.size(); ++i) {
    if (switches_[i].name == name) return SwitchId(static_cast<std::uint32_t>(i));
  }
  return std::nullopt;
}

std::optional<HostId> Topology::findHost(const std::string& name) const {
  for (std::size_t i = 0; i < hosts_.size(); ++i) {
    if (hosts_[i].name == name) return HostId(static_cast<std::uint32_t>(i));
  }
  return std::nullopt;
}

// GUID 0 is "no GUID" (a node read from a file without one): it names no switch.
std::optional<SwitchId> Topology::findSwitchByGuid(std::uint64_t guid) const {
  if (guid == 0) return std::nullopt;
  for (std::size_t i = 0; i < switches_.size(); ++i) {
    if (switches_[i].guid == guid) return SwitchId(static_cast<std::uint32_t>(i));
  }
  return std::nullopt;
}

std::string Topology::describePort(PortId p) const {
  return fmt::format("{}[{}]", sw(p.sw).name, p.ibPortNumber());
}

std::string Topology::describeLink(LinkId id) const {
  const Link& l = link(id);
  if (l.lowerIsHost) {
    const Host& h = host(l.host);
    return fmt::format("{}[{}] - {}", h.name, h.portIndex + 1, describePort(l.upper));
  }
  return fmt::format("{} - {}", describePort(l.lower), describePort(l.upper));
}

}  // namespace ebb::fabric
