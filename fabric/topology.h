#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabric/ids.h"

namespace ebb::fabric {

enum class PortRole : std::uint8_t {
  kUnused,  // not cabled
  kUp,      // to a parent switch (one level closer to the roots)
  kDown,    // to a child switch or a host
};

struct Port {
  PortRole role = PortRole::kUnused;
  LinkId link;  // invalid when unused
};

struct Switch {
  std::string name;
  std::uint64_t guid = 0;
  int level = -1;                        // 0 = root level; hosts hang off level depth()-1
  std::vector<Port> ports;               // indexed by port label (0-based)
  std::vector<std::uint16_t> upPorts;    // labels of cabled up ports, ascending
  std::vector<std::uint16_t> downPorts;  // labels of cabled down ports, ascending
};

struct Host {
  std::string name;
  std::uint64_t guid = 0;
  std::uint16_t portIndex = 0;  // the host's own port label (IB port number - 1)
  LinkId link;                  // the link to its leaf switch
};

// A link is oriented: `lower` is the child end (a switch up port, or a host),
// `upper` the parent switch's down port.
struct Link {
  bool lowerIsHost = false;
  HostId host;   // valid iff lowerIsHost
  PortId lower;  // valid iff !lowerIsHost: the child switch's up port
  PortId upper;  // the parent switch's down port
};

// k-ary n-tree labels of a switch, present when the topology was generated as one.
struct KAryLabel {
  int level = 0;
  std::vector<int> w;  // w_0 .. w_{n-2}
};

// A fat tree: switches with levels (0 = roots), hosts at the leaf level, and
// oriented links. Immutable once built (see TopologyBuilder).
class Topology {
 public:
  std::size_t numSwitches() const { return switches_.size(); }
  std::size_t numHosts() const { return hosts_.size(); }
  std::size_t numLinks() const { return links_.size(); }
  // Number of switch levels (leaf level = depth() - 1).
  int depth() const { return depth_; }

  const Switch& sw(SwitchId id) const { return switches_[id.value()]; }
  const Host& host(HostId id) const { return hosts_[id.value()]; }
  const Link& link(LinkId id) const { return links_[id.value()]; }
  const std::vector<Switch>& switches() const { return switches_; }
  const std::vector<Host>& hosts() const { return hosts_; }
  const std::vector<Link>& links() const { return links_; }

  // The switch a host is attached to.
  SwitchId leafOf(HostId h) const { return link(host(h).link).upper.sw; }
  // The switch at the parent end of an up port.
  PortId peerOf(PortId p) const;
  bool isSwitchLink(LinkId l) const { return !link(l).lowerIsHost; }
  // Switches of one level, ascending by id.
  const std::vector<SwitchId>& switchesAtLevel(int level) const {
    return byLevel_[static_cast<std::size_t>(level)];
  }

  std::optional<SwitchId> findSwitch(const std::string& name) const;
  std::optional<HostId> findHost(const std::string& name) const;
  std::optional<SwitchId> findSwitchByGuid(std::uint64_t guid) const;

  // Present when built by KAryNTree.
  bool isKAry() const { return kary_.has_value(); }
  int k() const { return kary_ ? kary_->first : 0; }
  int n() const { return kary_ ? kary_->second : 0; }
  const KAryLabel& label(SwitchId id) const { return labels_[id.value()]; }
  // How the generator that built it names its shape ("XGFT(2; 8,4; 1,2)"),
  // empty when read from a file or built as a k-ary n-tree.
  const std::string& shape() const { return shape_; }

  // "S1_0_3[5]" or "H7[1]": a port named for humans (IB port numbers).
  std::string describePort(PortId p) const;
  std::string describeLink(LinkId l) const;

 private:
  friend class TopologyBuilder;
  std::vector<Switch> switches_;
  std::vector<Host> hosts_;
  std::vector<Link> links_;
  std::vector<std::vector<SwitchId>> byLevel_;
  int depth_ = 0;
  std::optional<std::pair<int, int>> kary_;
  std::vector<KAryLabel> labels_;
  std::string shape_;
};

}  // namespace ebb::fabric
