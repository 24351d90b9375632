// Discovery: the local node, then a walk by directed route over the links
// that are up, checking every switch's GUID and reading every cabled port;
// and the directed routes that follow the links that are up.
#include <fmt/format.h>

#include <deque>
#include <memory>

#include "ib_backend/gating_reduce_width.h"
#include "ib_backend/ib_backend.h"

namespace ebb::ib {

using fabric::SwitchId;

struct IbBackend::Walk {
  std::function<void(Status)> done;
  int inFlight = 0;
  Status error;
};

void IbBackend::initialize(std::function<void(Status)> done) {
  MadAddress local;
  local.path.hops = {0};
  mad_.send(local, buildRequest(local, Method::kGet, Attr::kNodeInfo, 0, opts_.mKey),
            [this, done = std::move(done)](Result<MadBytes> r) {
              if (!r) {
                return done(Status(r.status().code(),
                                   "reading the local node's NodeInfo: " + r.status().message()));
              }
              const NodeInfo n = parseNodeInfo(*r);
              if (n.isSwitch) {
                first_ = topo_.findSwitchByGuid(n.nodeGuid);
                attach_.hops = {0};
              } else {
                for (std::size_t h = 0; h < topo_.numHosts(); ++h) {
                  if (topo_.hosts()[h].guid != n.nodeGuid) continue;
                  first_ = topo_.leafOf(fabric::HostId(static_cast<std::uint32_t>(h)));
                  attach_.hops = {0, n.localPort};
                }
              }
              if (!first_) {
                return done(Status(
                    ErrorCode::kNotFound,
                    fmt::format("the local node (GUID 0x{:016x}) is not in the topology: give ebb "
                                "the topology of this fabric (ibnetdiscover output)",
                                n.nodeGuid)));
              }
              auto w = std::make_shared<Walk>();
              w->done = done;
              sw_[first_->value()].path = attach_;
              visit(w, *first_);
            });
}

// Reads one switch (NodeInfo, then PortInfo of port 0 and every cabled port)
// and walks on through the switch links that are up.
void IbBackend::visit(std::shared_ptr<Walk> w, SwitchId s) {
  sw_[s.value()].visited = true;
  ++w->inFlight;
  const MadAddress to = drTo(s);
  auto finishOne = [this, w] {
    if (--w->inFlight > 0) return;
    if (w->error.isOk()) {
      for (std::size_t l = 0; l < topo_.numLinks(); ++l) {
        const fabric::Link& L = topo_.links()[l];
        if (!L.lowerIsHost && !sw_[L.lower.sw.value()].visited &&
            !sw_[L.upper.sw.value()].visited) {
          links_[l].up = false;  // both ends out of reach: nothing can be up there
        }
      }
      recomputeRoutes();
      if (opts_.action == GatingAction::kReduceWidth) width_->recover();
      for (std::size_t i = 0; i < sw_.size(); ++i) {
        if (sw_[i].reachable && sw_[i].lid == 0) {
          w->error = Status(ErrorCode::kUnavailable,
                            fmt::format("switch {} has no LID yet: is OpenSM running and has the "
                                        "subnet come up?",
                                        topo_.switches()[i].name));
          break;
        }
      }
    }
    w->done(w->error);
  };
  mad_.send(
      to, buildRequest(to, Method::kGet, Attr::kNodeInfo, 0, opts_.mKey),
      [this, w, s, to, finishOne](Result<MadBytes> r) {
        const fabric::Switch& sw = topo_.sw(s);
        if (!r) {
          if (w->error.isOk()) {
            w->error = Status(r.status().code(), fmt::format("switch {} at {}: {}", sw.name,
                                                             to.toString(), r.status().message()));
          }
          return finishOne();
        }
        const NodeInfo n = parseNodeInfo(*r);
        if (!n.isSwitch || n.nodeGuid != sw.guid) {
          if (w->error.isOk()) {
            w->error = Status(
                ErrorCode::kInvalidArgument,
                fmt::format("topology mismatch at {}: the topology has switch {} (GUID "
                            "0x{:016x}) there, the fabric has {} GUID 0x{:016x}",
                            to.toString(), sw.name, sw.guid,
                            n.isSwitch ? "a switch with" : "a non-switch node with", n.nodeGuid));
          }
          return finishOne();
        }
        // Port 0 (the LID) and every cabled port, all at once.
        std::vector<std::uint16_t> ports{0};
        for (std::size_t p = 1; p <= sw.ports.size(); ++p) {
          if (sw.ports[p - 1].role != fabric::PortRole::kUnused) {
            ports.push_back(static_cast<std::uint16_t>(p));
          }
        }
        fanIn<PortInfo>(
            ports.size(),
            [this, w, s, to, ports](std::size_t i, std::function<void(Result<PortInfo>)> answer) {
              const std::uint16_t p = ports[i];
              mad_.send(to, buildRequest(to, Method::kGet, Attr::kPortInfo, p, opts_.mKey),
                        [this, w, s, p, to, answer](Result<MadBytes> pr) {
                          if (!pr) {
                            if (w->error.isOk()) {
                              w->error =
                                  Status(pr.status().code(),
                                         fmt::format("{} port {} at {}: {}", topo_.sw(s).name, p,
                                                     to.toString(), pr.status().message()));
                            }
                            return answer(pr.status());
                          }
                          const PortInfo pi = parsePortInfo(*pr);
                          if (p == 0) {
                            sw_[s.value()].lid = pi.lid;
                            sw_[s.value()].extSpeeds = pi.extendedSpeeds();
                          } else {
                            sw_[s.value()].ports[p - 1] = pi;
                            const fabric::Port& port = topo_.sw(s).ports[p - 1];
                            if (pi.phys != PhysState::kLinkUp) rec(port.link).up = false;
                          }
                          answer(pi);
                        });
            },
            [this, w, s, finishOne](Gathered<PortInfo>) {
              // Every LinkUp port must read a speed ebb knows (no default).
              const fabric::Switch& me = topo_.sw(s);
              for (std::uint16_t q = 0; w->error.isOk() && q < me.ports.size(); ++q) {
                if (me.ports[q].role == fabric::PortRole::kUnused ||
                    sw_[s.value()].ports[q].phys != PhysState::kLinkUp) {
                  continue;
                }
                if (auto g = activeGbps(s, q); !g) w->error = g.status();
              }
              if (w->error.isOk()) {
                for (std::uint16_t q = 0; q < me.ports.size(); ++q) {
                  const fabric::Port& port = me.ports[q];
                  if (port.role == fabric::PortRole::kUnused) continue;
                  const fabric::Link& L = topo_.link(port.link);
                  if (L.lowerIsHost || !rec(port.link).up) continue;
                  const SwitchId peer = L.lower.sw == s ? L.upper.sw : L.lower.sw;
                  if (sw_[peer.value()].visited) continue;
                  sw_[peer.value()].path =
                      sw_[s.value()].path.extended(static_cast<std::uint8_t>(q + 1));
                  visit(w, peer);
                }
              }
              finishOne();
            });
      });
}

// Directed routes: breadth first from the switch we attach at, over switch
// links that are up, so a route never crosses a link ebb turned off.
void IbBackend::recomputeRoutes() {
  for (SwitchState& st : sw_)
    st.reachable = false;
  if (!first_) return;
  std::deque<SwitchId> q{*first_};
  sw_[first_->value()].reachable = true;
  sw_[first_->value()].path = attach_;
  while (!q.empty()) {
    const SwitchId s = q.front();
    q.pop_front();
    const fabric::Switch& me = topo_.sw(s);
    for (std::uint16_t p = 0; p < me.ports.size(); ++p) {
      if (me.ports[p].role == fabric::PortRole::kUnused) continue;
      const fabric::Link& L = topo_.link(me.ports[p].link);
      if (L.lowerIsHost || !rec(me.ports[p].link).up) continue;
      const SwitchId peer = L.lower.sw == s ? L.upper.sw : L.lower.sw;
      if (sw_[peer.value()].reachable) continue;
      sw_[peer.value()].reachable = true;
      sw_[peer.value()].path = sw_[s.value()].path.extended(static_cast<std::uint8_t>(p + 1));
      q.push_back(peer);
    }
  }
}

}  // namespace ebb::ib
