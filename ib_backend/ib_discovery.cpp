// Discovery: the local node, then a walk by directed route over the cables
// that are up as configured, checking every switch's GUID, reading every
// port and the far end of every LinkUp one; the comparison of those cables
// with the topology (topology_survey.h); and the directed routes that follow
// the links that are up.
#include <fmt/format.h>

#include <deque>
#include <memory>

#include "common/plural.h"
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

// Reads one switch: NodeInfo (its GUID must be the topology's: the walk only
// goes where a cable of the topology leads), then every port, then walks on.
void IbBackend::visit(std::shared_ptr<Walk> w, SwitchId s) {
  sw_[s.value()].visited = true;
  ++w->inFlight;
  const MadAddress to = drTo(s);
  auto finishOne = [this, w] {
    if (--w->inFlight > 0) return;
    if (w->error.isOk()) w->error = takeInSurvey();
    if (w->error.isOk()) {
      recomputeRoutes();
      if (opts_.action == GatingAction::kReduceWidth) width_->recover();
      // Without LIDs no counter can be read (PMA goes by LID). The agent may
      // start before an SM assigned them (it turns nothing off without a
      // master SM and reads the LIDs again once one answers); a sweep may not.
      for (std::size_t i = 0; i < sw_.size() && !opts_.allowMissingLids; ++i) {
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
        readPorts(w, s, n.numPorts, finishOne);
      });
}

// PortInfo of port 0 (the LID) and of every port the switch has, all at
// once; then the far end of every LinkUp port.
void IbBackend::readPorts(std::shared_ptr<Walk> w, SwitchId s, std::uint16_t numPorts,
                          std::function<void()> finishOne) {
  const MadAddress to = drTo(s);
  sw_[s.value()].seen.assign(numPorts, PortSighting{});
  fanIn<PortInfo>(
      numPorts + 1u,
      [this, w, s, to](std::size_t i, std::function<void(Result<PortInfo>)> answer) {
        const auto p = static_cast<std::uint16_t>(i);
        mad_.send(to, buildRequest(to, Method::kGet, Attr::kPortInfo, p, opts_.mKey),
                  [this, w, s, p, to, answer](Result<MadBytes> pr) {
                    if (!pr) {
                      if (w->error.isOk()) {
                        w->error = Status(pr.status().code(),
                                          fmt::format("{} port {} at {}: {}", topo_.sw(s).name, p,
                                                      to.toString(), pr.status().message()));
                      }
                      return answer(pr.status());
                    }
                    const PortInfo pi = parsePortInfo(*pr);
                    SwitchState& st = sw_[s.value()];
                    if (p == 0) {
                      st.lid = pi.lid;
                      st.extSpeeds = pi.extendedSpeeds();
                      return answer(pi);
                    }
                    PortSighting& x = st.seen[p - 1u];
                    x.state = physStateName(pi.phys);
                    x.kind = pi.phys == PhysState::kLinkUp     ? PortSighting::Kind::kSilent
                             : pi.phys == PhysState::kDisabled ? PortSighting::Kind::kDisabled
                                                               : PortSighting::Kind::kNoPeer;
                    if (p <= st.ports.size()) st.ports[p - 1u] = pi;
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
        if (!w->error.isOk()) return finishOne();
        std::vector<std::uint16_t> linked;
        const auto& seen = sw_[s.value()].seen;
        for (std::size_t q = 0; q < seen.size(); ++q) {
          if (seen[q].kind == PortSighting::Kind::kSilent) {
            linked.push_back(static_cast<std::uint16_t>(q + 1));
          }
        }
        fanIn<bool>(
            linked.size(),
            [this, s, linked](std::size_t i, std::function<void(Result<bool>)> answer) {
              probePeer(s, linked[i], [answer] { answer(true); });
            },
            [this, w, s, finishOne](Gathered<bool>) {
              if (w->error.isOk()) walkOn(w, s);
              finishOne();
            });
      });
}

// NodeInfo by directed route through `port`: the node on the far end and
// the port its cable enters by. No answer leaves the port kSilent (ibsim
// drops SMPs into a port ebb disabled while the far end still reads LinkUp).
void IbBackend::probePeer(SwitchId s, std::uint16_t port, std::function<void()> then) {
  MadAddress to = drTo(s);
  to.path = to.path.extended(static_cast<std::uint8_t>(port));
  mad_.send(to, buildRequest(to, Method::kGet, Attr::kNodeInfo, 0, opts_.mKey),
            [this, s, port, then = std::move(then)](Result<MadBytes> r) {
              if (r) {
                const NodeInfo n = parseNodeInfo(*r);
                PortSighting& x = sw_[s.value()].seen[port - 1u];
                x.kind = PortSighting::Kind::kPeer;
                x.peerGuid = n.nodeGuid;
                x.peerIsSwitch = n.isSwitch;
                x.peerPort = n.localPort;
              }
              then();
            });
}

// Walks on through the cables of the topology that the fabric has as
// configured (the far end answered with the right GUID and port).
void IbBackend::walkOn(std::shared_ptr<Walk> w, SwitchId s) {
  const fabric::Switch& me = topo_.sw(s);
  const auto& seen = sw_[s.value()].seen;
  for (std::uint16_t q = 0; q < me.ports.size() && q < seen.size(); ++q) {
    const fabric::Port& port = me.ports[q];
    if (port.role == fabric::PortRole::kUnused) continue;
    const fabric::Link& L = topo_.link(port.link);
    if (L.lowerIsHost) continue;
    const fabric::PortId far = L.lower.sw == s ? L.upper : L.lower;
    const PortSighting& x = seen[q];
    if (x.kind != PortSighting::Kind::kPeer || x.peerGuid != topo_.sw(far.sw).guid ||
        x.peerPort != far.index + 1) {
      continue;
    }
    if (sw_[far.sw.value()].visited) continue;
    sw_[far.sw.value()].path = sw_[s.value()].path.extended(static_cast<std::uint8_t>(q + 1));
    visit(w, far.sw);
  }
}

Status IbBackend::takeInSurvey() {
  std::vector<std::vector<PortSighting>> seen(sw_.size());
  for (std::size_t i = 0; i < sw_.size(); ++i)
    seen[i] = sw_[i].seen;
  survey_ = compareWithFabric(topo_, seen);
  for (std::size_t l = 0; l < links_.size(); ++l) {
    const LinkFinding f = survey_.links[l];
    LinkRecord& r = links_[l];
    r.up = f == LinkFinding::kUp;
    r.absent = isAbsent(f);
    if (f != LinkFinding::kDisabled) continue;
    const fabric::Link& L = topo_.links()[l];
    for (const fabric::PortId e : {L.lower, L.upper}) {
      if (e == L.lower && L.lowerIsHost) continue;
      const auto& ports = sw_[e.sw.value()].seen;
      if (e.index < ports.size() && ports[e.index].kind == PortSighting::Kind::kDisabled) {
        r.foundDisabledAt = e;
      }
    }
  }
  if (survey_.matches() || opts_.topologyMismatch == TopologyMismatch::kWarn) return Status::ok();
  return Status(
      ErrorCode::kInvalidArgument,
      fmt::format("the fabric's cables differ from the topology in {} "
                  "(topology_mismatch REFUSE; WARN would start, leaving those links "
                  "alone):\n{}",
                  counted(survey_.differences.size(), "place", "places"), survey_.listing("  ")));
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
