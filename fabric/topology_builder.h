#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "fabric/topology.h"

namespace ebb::fabric {

// GUIDs of generated fabrics (KAryNTree, Xgft): switch id s gets
// kGeneratedSwitchGuidBase + s + 1, host id h kGeneratedHostGuidBase + h + 1.
inline constexpr std::uint64_t kGeneratedSwitchGuidBase = 0x0002c90000000000ULL;
inline constexpr std::uint64_t kGeneratedHostGuidBase = 0x0002c90100000000ULL;

// Collects switches, hosts and cables in any order, then build() assigns levels
// from the hosts upward, orients every port and checks that the graph is a fat
// tree. Cabling errors are reported at once; structural ones by build().
class TopologyBuilder {
 public:
  SwitchId addSwitch(std::string name, std::uint64_t guid, int numPorts);
  HostId addHost(std::string name, std::uint64_t guid);
  // Cables two switch ports. Fails if a port is out of range or already cabled.
  Status connectSwitches(PortId a, PortId b);
  // Cables a host's port to a switch port.
  Status connectHost(HostId host, std::uint16_t hostPortIndex, PortId swPort);
  // Marks the result as a k-ary n-tree with the given per-switch labels.
  void setKAry(int k, int n, std::vector<KAryLabel> labels);
  // Names the generated shape (Topology::shape).
  void setShape(std::string shape) { topo_.shape_ = std::move(shape); }

  // The switches of the top level, by name or GUID (0x...), for a fabric whose
  // hosts cannot tell: levels are then counted down from them, where by
  // default they count up from the switches with hosts (so a leaf switch
  // without hosts would be taken for the one root). `field` names the
  // setting in errors. Call after every switch is added.
  Status setRoots(const std::vector<std::string>& roots, const std::string& field);

  std::size_t numSwitches() const { return topo_.switches_.size(); }
  std::size_t numHosts() const { return topo_.hosts_.size(); }

  // Levels, orientation and validation. E_NOT_FAT_TREE names the offending
  // switches, ports or hosts.
  Result<Topology> build();

 private:
  struct Cable {
    bool hostCable;
    HostId host;
    std::uint16_t hostPort = 0;
    PortId a;  // a switch port (for host cables: the switch end)
    PortId b;  // the other switch port (switch cables only)
  };
  Status checkFree(PortId p) const;
  Status assignLevels(std::vector<int>& level);
  Status levelsFromRoots(std::vector<int>& level, const std::vector<bool>& hasHosts);

  Topology topo_;
  std::vector<Cable> cables_;
  std::vector<std::vector<PortId>> peers_;  // per switch, per port: the cabled peer
  std::vector<int> hostCables_;             // per host: number of cables
  std::vector<SwitchId> roots_;             // given by setRoots; empty: levels from the hosts
};

}  // namespace ebb::fabric
