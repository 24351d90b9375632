#pragma once
// A subnet in a MAD responder, for IbBackend tests over FakeMadTransport:
// directed routes walk the topology's cables and stop at a port that is not
// LinkUp (as hardware and ibsim do); NodeInfo, PortInfo Get/Set and
// PortCountersExtended answer from per-port state the test can change. A
// route may end at a host (NodeInfo of its CA). Uncabled ports read Polling.
// The topology given here is the fabric's cabling: a test may give the
// backend another one (same switches and GUIDs) to script a mismatch.
// Widths as the IBA has them: LinkWidthActive is the widest width enabled at
// both ends (a Set of LinkWidthEnabled takes effect at once: no retraining).
#include <infiniband/mad.h>

#include <map>
#include <optional>
#include <vector>

#include "fabric/topology.h"
#include "ib_backend/fake_mad_transport.h"

namespace ebb::ib::testing {

class FakeFabric {
 public:
  FakeFabric(const fabric::Topology& topo, fabric::HostId local) : topo_(topo), local_(local) {
    for (std::size_t s = 0; s < topo.numSwitches(); ++s) {
      phys_.emplace_back();
      for (const fabric::Port& p : topo.switches()[s].ports) {
        phys_.back().push_back(p.role == fabric::PortRole::kUnused ? PhysState::kPolling
                                                                   : PhysState::kLinkUp);
      }
      widthEnabled_.emplace_back(topo.switches()[s].ports.size(), kWidth1x | kWidth4x);
      xmitWords_.emplace_back(topo.switches()[s].ports.size(), 0);
    }
  }

  PhysState& phys(fabric::PortId p) { return phys_[p.sw.value()][p.index]; }
  std::uint64_t& xmitWords(fabric::PortId p) { return xmitWords_[p.sw.value()][p.index]; }
  std::uint8_t& widthEnabled(fabric::PortId p) { return widthEnabled_[p.sw.value()][p.index]; }
  std::uint8_t widthSupported = kWidth1x | kWidth4x | kWidth12x;
  // The widest width enabled at both ends of the link at `p` (a host port
  // enables 1x|4x).
  std::uint8_t widthActive(fabric::PortId p) const {
    const fabric::Link& L = topo_.link(topo_.sw(p.sw).ports[p.index].link);
    const std::uint8_t lower = L.lowerIsHost ? std::uint8_t{kWidth1x | kWidth4x}
                                             : widthEnabled_[L.lower.sw.value()][L.lower.index];
    const auto common =
        static_cast<std::uint8_t>(widthEnabled_[L.upper.sw.value()][L.upper.index] & lower);
    for (std::uint8_t w : {kWidth12x, kWidth8x, kWidth4x, kWidth2x, kWidth1x}) {
      if (common & w) return w;
    }
    return 0;
  }
  int widthSets = 0;
  bool linkUp(fabric::LinkId l) const {
    const fabric::Link& L = topo_.link(l);
    const bool upper = phys_[L.upper.sw.value()][L.upper.index] == PhysState::kLinkUp;
    return L.lowerIsHost ? upper
                         : upper && phys_[L.lower.sw.value()][L.lower.index] == PhysState::kLinkUp;
  }
  // Link training: a port set Polling comes back LinkUp after this many
  // MADs to anything (0: never, as under ibsim).
  int trainAfter = 0;
  // LinkSpeedActive of every port, and per (switch, port index) overrides.
  std::uint8_t speedActive = 4;  // QDR
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint8_t> speedActiveAt;
  bool dead = false;               // nothing answers (the fabric is gone)
  bool pmaBlocked = false;         // PMA gets no LID route (the SM's up/down rule)
  std::uint64_t wrongGuidFor = 0;  // a switch reporting another GUID
  int sets = 0;
  // PhysPortState=Polling Sets per (switch, port index): "one per link".
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> pollingSets;

  FakeMadTransport::Responder responder() {
    return [this](const MadAddress& to, const MadBytes& m) { return answer(to, m); };
  }

 private:
  using Reply = std::optional<std::vector<std::uint8_t>>;

  Reply answer(const MadAddress& to, const MadBytes& m) {
    train();
    if (dead) return std::nullopt;
    auto* raw = const_cast<std::uint8_t*>(m.data());
    const auto attr = static_cast<Attr>(mad_get_field(raw, 0, IB_MAD_ATTRID_F));
    const auto mod = mad_get_field(raw, 0, IB_MAD_ATTRMOD_F);
    if (to.mgmtClass == MgmtClass::kPerf) {
      if (pmaBlocked || to.lid == 0 || to.lid > topo_.numSwitches()) return std::nullopt;
      const fabric::SwitchId s(static_cast<std::uint32_t>(to.lid - 1));
      const auto port = mad_get_field(raw + 64, 0, IB_PC_EXT_PORT_SELECT_F);
      auto r = replyTo(m);
      mad_set_field64(r.data() + 64, 0, IB_PC_EXT_XMT_BYTES_F, xmitWords_[s.value()][port - 1]);
      return r;
    }
    // Walk the directed route from the local host.
    std::optional<fabric::SwitchId> at;
    std::optional<fabric::HostId> atHost;  // the route ended at a host
    std::uint8_t entered = 0;
    for (std::size_t i = 1; i < to.path.hops.size(); ++i) {
      if (atHost) return std::nullopt;  // through a host: not modelled
      fabric::LinkId l;
      if (!at) {
        l = topo_.host(local_).link;
      } else {
        const auto& ports = topo_.sw(*at).ports;
        const std::size_t p = to.path.hops[i] - 1u;
        if (p >= ports.size() || ports[p].role == fabric::PortRole::kUnused) return std::nullopt;
        l = ports[p].link;
      }
      if (!linkUp(l)) return std::nullopt;
      const fabric::Link& L = topo_.link(l);
      if (L.lowerIsHost && at) {
        atHost = L.host;
        continue;
      }
      const fabric::PortId in = !at || L.lower.sw == *at ? L.upper : L.lower;
      if (at && L.lower.sw == *at && L.upper.sw == *at) return std::nullopt;
      at = in.sw;
      entered = static_cast<std::uint8_t>(in.index + 1);
    }
    auto r = replyTo(m);
    std::uint8_t* d = r.data() + 64;
    if (atHost) {
      if (attr != Attr::kNodeInfo) return std::nullopt;
      mad_set_field(d, 0, IB_NODE_TYPE_F, 1);
      mad_set_field64(d, 0, IB_NODE_GUID_F, topo_.host(*atHost).guid);
      mad_set_field(d, 0, IB_NODE_LOCAL_PORT_F, topo_.host(*atHost).portIndex + 1u);
      mad_set_field(d, 0, IB_NODE_NPORTS_F, 1);
      return r;
    }
    if (attr == Attr::kNodeInfo) {
      if (!at) {
        mad_set_field(d, 0, IB_NODE_TYPE_F, 1);
        mad_set_field64(d, 0, IB_NODE_GUID_F, topo_.host(local_).guid);
        mad_set_field(d, 0, IB_NODE_LOCAL_PORT_F, topo_.host(local_).portIndex + 1u);
        mad_set_field(d, 0, IB_NODE_NPORTS_F, 1);
      } else {
        const std::uint64_t guid = topo_.sw(*at).guid;
        mad_set_field(d, 0, IB_NODE_TYPE_F, 2);
        mad_set_field64(d, 0, IB_NODE_GUID_F, guid == wrongGuidFor ? guid + 0x1000 : guid);
        mad_set_field(d, 0, IB_NODE_LOCAL_PORT_F, entered);
        mad_set_field(d, 0, IB_NODE_NPORTS_F,
                      static_cast<std::uint32_t>(topo_.sw(*at).ports.size()));
      }
      return r;
    }
    if (attr != Attr::kPortInfo || !at) return std::nullopt;
    const bool set =
        mad_get_field(raw, 0, IB_MAD_METHOD_F) == static_cast<std::uint32_t>(Method::kSet);
    if (set && mod > 0) {
      ++sets;
      const auto want = mad_get_field(raw + 64, 0, IB_PORT_PHYS_STATE_F);
      if (want != 0) phys_[at->value()][mod - 1] = static_cast<PhysState>(want);
      if (want == static_cast<std::uint32_t>(PhysState::kPolling)) {
        pollingSince_[{at->value(), mod - 1}] = 0;
        ++pollingSets[{at->value(), mod - 1}];
      }
      const auto width = mad_get_field(raw + 64, 0, IB_PORT_LINK_WIDTH_ENABLED_F);
      if (width != 0) {
        ++widthSets;
        widthEnabled_[at->value()][mod - 1] =
            width == 255 ? widthSupported : static_cast<std::uint8_t>(width);
      }
    }
    const PhysState ps = mod == 0 ? PhysState::kLinkUp : phys_[at->value()][mod - 1];
    mad_set_field(d, 0, IB_PORT_LID_F, at->value() + 1);
    mad_set_field(d, 0, IB_PORT_PHYS_STATE_F, static_cast<std::uint32_t>(ps));
    mad_set_field(d, 0, IB_PORT_STATE_F, ps == PhysState::kLinkUp ? 4u : 1u);
    if (mod == 0) {
      mad_set_field(d, 0, IB_PORT_LINK_WIDTH_ACTIVE_F, kWidth4x);
    } else {
      const fabric::PortId here{*at, static_cast<std::uint16_t>(mod - 1)};
      mad_set_field(d, 0, IB_PORT_LINK_WIDTH_ENABLED_F, widthEnabled(here));
      mad_set_field(d, 0, IB_PORT_LINK_WIDTH_SUPPORTED_F, widthSupported);
      mad_set_field(d, 0, IB_PORT_LINK_WIDTH_ACTIVE_F,
                    topo_.sw(*at).ports[mod - 1].role == fabric::PortRole::kUnused
                        ? kWidth4x
                        : widthActive(here));
    }
    std::uint8_t speed = speedActive;
    if (auto it = speedActiveAt.find({at->value(), mod == 0 ? 0 : mod - 1});
        mod > 0 && it != speedActiveAt.end()) {
      speed = it->second;
    }
    mad_set_field(d, 0, IB_PORT_LINK_SPEED_ACTIVE_F, speed);
    return r;
  }

  void train() {
    if (trainAfter <= 0) return;
    for (auto it = pollingSince_.begin(); it != pollingSince_.end();) {
      if (++it->second >= trainAfter) {
        phys_[it->first.first][it->first.second] = PhysState::kLinkUp;
        it = pollingSince_.erase(it);
      } else {
        ++it;
      }
    }
  }

  const fabric::Topology& topo_;
  fabric::HostId local_;
  std::vector<std::vector<PhysState>> phys_;
  std::vector<std::vector<std::uint64_t>> xmitWords_;
  std::vector<std::vector<std::uint8_t>> widthEnabled_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> pollingSince_;
};

}  // namespace ebb::ib::testing
