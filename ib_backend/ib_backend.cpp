#include "ib_backend/ib_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <set>

namespace ebb::ib {

using agent::LinkPowerState;
using fabric::LinkId;
using fabric::PortId;
using fabric::SwitchId;

const char* gatingActionName(GatingAction a) {
  return a == GatingAction::kReduceWidth ? "reduce_width" : "disable_port";
}

struct IbBackend::Walk {
  std::function<void(Status)> done;
  int inFlight = 0;
  Status error;
};

IbBackend::IbBackend(const fabric::Topology& topo, MadTransport& transport,
                     agent::Scheduler& scheduler, IbBackendOptions opts)
    : topo_(topo),
      mad_(transport),
      sched_(scheduler),
      opts_(std::move(opts)),
      sw_(topo.numSwitches()),
      linkUp_(topo.numLinks(), 1),
      gen_(topo.numLinks(), 0) {
  for (std::size_t s = 0; s < sw_.size(); ++s) {
    sw_[s].ports.resize(topo.switches()[s].ports.size());
  }
}

template <class T>
void IbBackend::later(Done<T> done, Result<T> r) {
  sched_.after(0, agent::Phase::kBackend,
               [done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
}

MadAddress IbBackend::drTo(SwitchId s) const {
  MadAddress a;
  a.mgmtClass = MgmtClass::kSmiDirect;
  a.path = sw_[s.value()].path;
  return a;
}

bool IbBackend::allowed(SwitchId s) const {
  return opts_.allowGuids.count(topo_.sw(s).guid) > 0;
}

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
          linkUp_[l] = 0;  // both ends out of reach: nothing can be up there
        }
      }
      recomputeRoutes();
      if (opts_.action == GatingAction::kReduceWidth) recoverWidths();
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
        auto left = std::make_shared<std::size_t>(sw.ports.size() + 1);
        for (std::size_t p = 0; p <= sw.ports.size(); ++p) {
          const bool cabled = p == 0 || sw.ports[p - 1].role != fabric::PortRole::kUnused;
          if (!cabled) {
            --*left;
            continue;
          }
          const auto mod = static_cast<std::uint32_t>(p);
          mad_.send(to, buildRequest(to, Method::kGet, Attr::kPortInfo, mod, opts_.mKey),
                    [this, w, s, p, left, to, finishOne](Result<MadBytes> pr) {
                      SwitchState& st = sw_[s.value()];
                      if (!pr && w->error.isOk()) {
                        w->error = Status(pr.status().code(),
                                          fmt::format("{} port {} at {}: {}", topo_.sw(s).name, p,
                                                      to.toString(), pr.status().message()));
                      }
                      if (pr) {
                        const PortInfo pi = parsePortInfo(*pr);
                        if (p == 0) {
                          st.lid = pi.lid;
                        } else {
                          st.ports[p - 1] = pi;
                          const fabric::Port& port = topo_.sw(s).ports[p - 1];
                          if (pi.phys != PhysState::kLinkUp) linkUp_[port.link.value()] = 0;
                        }
                      }
                      if (--*left > 0) return;
                      if (w->error.isOk()) {
                        const fabric::Switch& me = topo_.sw(s);
                        for (std::uint16_t q = 0; q < me.ports.size(); ++q) {
                          const fabric::Port& port = me.ports[q];
                          if (port.role == fabric::PortRole::kUnused) continue;
                          const fabric::Link& L = topo_.link(port.link);
                          if (L.lowerIsHost || !linkUp_[port.link.value()]) continue;
                          const SwitchId peer = L.lower.sw == s ? L.upper.sw : L.lower.sw;
                          if (sw_[peer.value()].visited) continue;
                          sw_[peer.value()].path =
                              st.path.extended(static_cast<std::uint8_t>(q + 1));
                          visit(w, peer);
                        }
                      }
                      finishOne();
                    });
        }
        if (*left == 0) finishOne();
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
      if (L.lowerIsHost || !linkUp_[me.ports[p].link.value()]) continue;
      const SwitchId peer = L.lower.sw == s ? L.upper.sw : L.lower.sw;
      if (sw_[peer.value()].reachable) continue;
      sw_[peer.value()].reachable = true;
      sw_[peer.value()].path = sw_[s.value()].path.extended(static_cast<std::uint8_t>(p + 1));
      q.push_back(peer);
    }
  }
}

fabric::LinkStates IbBackend::linkStates() const {
  fabric::LinkStates ls(topo_.numLinks(), true);
  for (std::size_t l = 0; l < linkUp_.size(); ++l) {
    ls.setLink(LinkId(static_cast<std::uint32_t>(l)),
               linkUp_[l] != 0 && narrowed_.count(static_cast<std::uint32_t>(l)) == 0);
  }
  return ls;
}

std::vector<LinkId> IbBackend::gatedLinks() const {
  std::vector<LinkId> out = disabled_;
  for (const auto& [l, n] : narrowed_) {
    if (n.bySelf) out.emplace_back(l);
  }
  return out;
}

double IbBackend::bandwidthOf(SwitchId s, std::uint16_t port) const {
  const auto& ports = sw_[s.value()].ports;
  const fabric::Switch& me = topo_.sw(s);
  auto narrowed = [&](std::size_t p) {
    return me.ports[p].role != fabric::PortRole::kUnused &&
           narrowed_.count(me.ports[p].link.value()) > 0;
  };
  // A link at reduced width counts at the width of its full-width neighbours.
  double gbps = narrowed(port) ? 0.0 : ports[port].gbps();
  if (gbps <= 0) {
    for (std::size_t p = 0; p < ports.size(); ++p) {
      if (!narrowed(p)) gbps = std::max(gbps, ports[p].gbps());
    }
  }
  if (gbps <= 0) gbps = 32.0;  // 4x QDR
  return gbps / 8000.0;        // Gb/s -> bytes per picosecond
}

void IbBackend::discoverPorts(SwitchId sw, Done<std::vector<agent::PortDescription>> done) {
  std::vector<agent::PortDescription> out;
  const fabric::Switch& me = topo_.sw(sw);
  for (std::uint16_t p = 0; p < me.ports.size(); ++p) {
    if (me.ports[p].role == fabric::PortRole::kUnused) continue;
    const LinkId l = me.ports[p].link;
    const LinkPowerState st = linkUp_[l.value()] && narrowed_.count(l.value()) == 0
                                  ? LinkPowerState::kOn
                                  : LinkPowerState::kOff;
    out.push_back({p, me.ports[p].role, bandwidthOf(sw, p), st, st});
  }
  later<std::vector<agent::PortDescription>>(std::move(done), std::move(out));
}

void IbBackend::requestCounters(SwitchId sw, Done<agent::CounterSample> done) {
  SwitchState& st = sw_[sw.value()];
  const fabric::Switch& me = topo_.sw(sw);
  bool anyUp = false;
  bool upLinkOn = me.upPorts.empty();  // a root needs none
  for (const fabric::Port& p : me.ports) {
    if (p.role == fabric::PortRole::kUnused || !linkUp_[p.link.value()]) continue;
    anyUp = true;
    upLinkOn = upLinkOn || p.role == fabric::PortRole::kUp;
  }
  if (!anyUp) {  // a dark switch: nothing can have moved, and it cannot be reached
    agent::CounterSample s{sched_.now(), false, st.last};
    return later<agent::CounterSample>(std::move(done), std::move(s));
  }
  if (!upLinkOn) {
    // Reached only from below (an up link is coming back): up*/down* routing
    // gives its LID no route from the management port yet. Hold.
    agent::CounterSample s{sched_.now(), true, st.last};
    return later<agent::CounterSample>(std::move(done), std::move(s));
  }
  if (!st.reachable || st.lid == 0) {
    return later<agent::CounterSample>(
        std::move(done),
        Status(ErrorCode::kUnavailable, fmt::format("switch {} is not reachable", me.name)));
  }
  if (st.sweepInFlight) {
    // The last read is still waiting on timeouts: do not pile up more.
    agent::CounterSample stale{sched_.now(), true, st.last};
    return later<agent::CounterSample>(std::move(done), std::move(stale));
  }
  st.sweepInFlight = true;
  struct Sweep {
    agent::CounterSample sample;
    std::size_t left = 0;
    Status error;
    TimePs start = 0;
    Done<agent::CounterSample> done;
  };
  auto sweep = std::make_shared<Sweep>();
  sweep->start = sched_.now();
  sweep->done = std::move(done);
  MadAddress to;
  to.mgmtClass = MgmtClass::kPerf;
  to.lid = st.lid;
  for (std::uint16_t p = 0; p < me.ports.size(); ++p) {
    if (me.ports[p].role != fabric::PortRole::kUnused) ++sweep->left;
  }
  for (std::uint16_t p = 0; p < me.ports.size(); ++p) {
    if (me.ports[p].role == fabric::PortRole::kUnused) continue;
    MadBytes req = buildRequest(to, Method::kGet, Attr::kPortCountersExt, 0);
    setCounterPortSelect(req, static_cast<std::uint8_t>(p + 1));
    mad_.send(to, req, [this, sweep, sw, p](Result<MadBytes> r) {
      if (r) {
        const PortCountersExt c = parsePortCountersExt(*r);
        sweep->sample.ports.push_back({p, c.xmitDataWords * 4, c.xmitPkts, 0});
      } else if (sweep->error.isOk()) {
        sweep->error = Status(
            r.status().code(),
            fmt::format("counters of {}: {}", topo_.describePort({sw, p}), r.status().message()));
      }
      if (--sweep->left > 0) return;
      ++stats_.counterSweeps;
      stats_.lastSweepPs = sched_.now() - sweep->start;
      SwitchState& state = sw_[sw.value()];
      state.sweepInFlight = false;
      if (!sweep->error.isOk()) {
        // A re-sweep by the SM can make LID routes fail for a moment.
        if (state.missed++ == 0) state.firstMissAt = sweep->start;
        if (sched_.now() - state.firstMissAt < opts_.lostContactPs) {
          agent::CounterSample stale{sched_.now(), true, state.last};
          return sweep->done(stale);
        }
        // Counters go by LID, along the SM's routes; under up*/down* routing a
        // gated fabric can leave a live switch with no LID route from the
        // management port. Contact is lost only if the switch does not
        // answer by directed route either; otherwise the agent holds.
        const std::string why =
            fmt::format("{} ({} reads in a row failed over {} ms)", sweep->error.message(),
                        state.missed, (sched_.now() - state.firstMissAt) / 1'000'000'000);
        if (!state.reachable) {
          // Out of reach in ebb's own view: a link toward it is still
          // training. Hold; the probe would not even be sent.
          ++stats_.countersHeld;
          agent::CounterSample stale{sched_.now(), true, state.last};
          return sweep->done(stale);
        }
        const std::uint64_t mKey = opts_.mKey;
        return sendSmp(
            sw,
            [mKey](const MadAddress& dr) {
              return buildRequest(dr, Method::kGet, Attr::kNodeInfo, 0, mKey);
            },
            [this, sw, sweep, why, code = sweep->error.code()](Result<MadBytes> probe) {
              if (!probe) {
                return sweep->done(
                    Status(code, fmt::format("{}; no answer by directed route either: {}", why,
                                             probe.status().message())));
              }
              ++stats_.countersHeld;
              agent::CounterSample stale{sched_.now(), true, sw_[sw.value()].last};
              sweep->done(stale);
            });
      }
      state.missed = 0;
      auto& ports = sweep->sample.ports;
      std::sort(ports.begin(), ports.end(),
                [](const agent::PortCounters& a, const agent::PortCounters& b) {
                  return a.index < b.index;
                });
      sweep->sample.sampledAt = sched_.now();
      state.last = ports;
      sweep->done(sweep->sample);
    });
  }
}

// Directed-route SMP to `s` on the route of the moment. Other links go down
// while a request is in flight (their Sets land first); when a request times
// out and the route has changed since, it goes again on the new one.
void IbBackend::sendSmp(SwitchId s, const std::function<MadBytes(const MadAddress&)>& build,
                        MadTransport::Done done, int reroutes) {
  if (!sw_[s.value()].reachable) {
    return later<MadBytes>(
        std::move(done),
        Status(ErrorCode::kUnavailable,
               fmt::format("{} is out of reach over the links that are up", topo_.sw(s).name)));
  }
  const MadAddress to = drTo(s);
  mad_.send(
      to, build(to),
      [this, s, build, to, reroutes, done = std::move(done)](Result<MadBytes> r) mutable {
        const bool moved = !sw_[s.value()].reachable || drTo(s).path.hops != to.path.hops;
        if (!r && r.status().code() == ErrorCode::kTimeout && moved && reroutes > 0) {
          ++stats_.reroutes;
          return sendSmp(s, build, std::move(done), reroutes - 1);
        }
        done(std::move(r));
      },
      /*urgent=*/true);
}

void IbBackend::setPhys(PortId end, PhysState phys, std::function<void(Status)> done) {
  const auto mod = static_cast<std::uint32_t>(end.index + 1);
  const std::string where = topo_.describePort(end);
  const std::uint64_t mKey = opts_.mKey;
  sendSmp(
      end.sw,
      [mod, mKey](const MadAddress& to) {
        return buildRequest(to, Method::kGet, Attr::kPortInfo, mod, mKey);
      },
      [this, end, phys, where, mKey, done = std::move(done)](Result<MadBytes> r) {
        if (!r) return done(Status(r.status().code(), where + ": " + r.status().message()));
        ++stats_.setsSent;
        const MadBytes current = *r;
        sendSmp(
            end.sw,
            [end, phys, mKey, current](const MadAddress& to) {
              return buildPortInfoSet(to, static_cast<std::uint8_t>(end.index + 1), current, phys,
                                      0, mKey);
            },
            [this, end, phys, where, done](Result<MadBytes> sr) {
              if (!sr) {
                return done(Status(sr.status().code(),
                                   fmt::format("setting {} {}: {}", where, physStateName(phys),
                                               sr.status().message())));
              }
              const PortInfo now = parsePortInfo(*sr);
              if (phys == PhysState::kDisabled && now.phys != PhysState::kDisabled) {
                return done(Status(
                    ErrorCode::kInvalidArgument,
                    fmt::format("{} reads {} after Set Disabled", where, physStateName(now.phys))));
              }
              if (setObserver_) setObserver_(PortSetEvent{end, phys, 0, 0});
              done(Status::ok());
            });
      });
}

void IbBackend::applyLinkState(PortId port, bool on, Done<LinkPowerState> done) {
  if (port.sw.value() >= topo_.numSwitches() || port.index >= topo_.sw(port.sw).ports.size()) {
    return later<LinkPowerState>(
        std::move(done),
        Status(ErrorCode::kInvalidArgument, fmt::format("switch {} port {} is not in the topology",
                                                        port.sw.value(), port.index + 1)));
  }
  const fabric::Port& pp = topo_.sw(port.sw).ports.at(port.index);
  if (pp.role != fabric::PortRole::kUp) {
    return later<LinkPowerState>(
        std::move(done),
        Status(
            ErrorCode::kInvalidArgument,
            fmt::format("{} is not an up port: InfiniBand gates whole links from their lower end",
                        topo_.describePort(port))));
  }
  const LinkId l = pp.link;
  // Width reduction keeps the link up; a link found down is enabled as in
  // the disable mode.
  if (opts_.action == GatingAction::kReduceWidth &&
      (linkUp_[l.value()] || narrowed_.count(l.value()))) {
    return applyWidth(l, on, std::move(done));
  }
  if (!on && !linkUp_[l.value()])
    return later<LinkPowerState>(std::move(done), LinkPowerState::kOff);
  if (on && linkUp_[l.value()]) return later<LinkPowerState>(std::move(done), LinkPowerState::kOn);
  if (opts_.dryRun) {
    ++stats_.setsSuppressed;
    return later<LinkPowerState>(std::move(done), on ? LinkPowerState::kOn : LinkPowerState::kOff);
  }
  if (on) return enableLink(l, sched_.now() + opts_.restoreTimeoutPs, std::move(done));
  // The end to set must stay reachable once the link is down: a switch that
  // loses its last link is set from the far end.
  linkUp_[l.value()] = 0;  // no route through it from now on, even before the reply
  recomputeRoutes();
  const fabric::Link& L = topo_.link(l);
  std::optional<PortId> end;
  for (PortId e : {L.lower, L.upper}) {
    if (!end && sw_[e.sw.value()].reachable && allowed(e.sw)) end = e;
  }
  if (!end) {
    linkUp_[l.value()] = 1;
    recomputeRoutes();
    return later<LinkPowerState>(
        std::move(done),
        Status(ErrorCode::kUnavailable,
               fmt::format("link {}: neither end is both reachable and allow-listed",
                           topo_.describeLink(l))));
  }
  const std::uint64_t gen = ++gen_[l.value()];
  disabling_.insert(l.value());
  setPhys(*end, PhysState::kDisabled, [this, l, end, gen, done = std::move(done)](Status st) {
    disabling_.erase(l.value());
    if (!st.isOk()) return done(st);
    disabledEnd_[l.value()] = *end;  // only this end can bring the link back
    if (std::find(disabled_.begin(), disabled_.end(), l) == disabled_.end()) disabled_.push_back(l);
    if (gen != gen_[l.value()]) return done(LinkPowerState::kOff);
    if (callback_) callback_->onLinkStateChanged(topo_.link(l).upper, LinkPowerState::kOff);
    done(LinkPowerState::kOff);
  });
}

// The end to re-enable: the one ebb disabled (the other end cannot undo a
// Disabled port), or for a link found down, the first reachable end.
std::optional<PortId> IbBackend::enableEnd(LinkId l) const {
  if (auto it = disabledEnd_.find(l.value()); it != disabledEnd_.end()) return it->second;
  const fabric::Link& L = topo_.link(l);
  for (PortId e : {L.lower, L.upper}) {
    if (sw_[e.sw.value()].reachable) return e;
  }
  return std::nullopt;
}

// Sets Polling on the end of `l` ebb disabled. When that switch has gone
// dark, first re-enables its links that were disabled from their far ends
// (the last one it lost is always such a link), then waits until it is
// reachable again, up to `deadline`.
void IbBackend::enableLink(LinkId l, TimePs deadline, Done<LinkPowerState> done) {
  const std::optional<PortId> end = enableEnd(l);
  if (end && sw_[end->sw.value()].reachable) {
    if (!allowed(end->sw)) {
      return later<LinkPowerState>(
          std::move(done), Status(ErrorCode::kUnavailable,
                                  fmt::format("link {}: {} is not allow-listed",
                                              topo_.describeLink(l), topo_.sw(end->sw).name)));
    }
    const std::uint64_t gen = ++gen_[l.value()];
    return setPhys(
        *end, PhysState::kPolling, [this, l, end = *end, gen, done = std::move(done)](Status st) {
          if (!st.isOk()) return done(st);
          disabled_.erase(std::remove(disabled_.begin(), disabled_.end(), l), disabled_.end());
          disabledEnd_.erase(l.value());
          done(LinkPowerState::kTurningOn);
          if (gen == gen_[l.value()]) pollUntilUp(l, end);
        });
  }
  if (!end || sched_.now() >= deadline) {
    return later<LinkPowerState>(
        std::move(done),
        Status(ErrorCode::kUnavailable, fmt::format("link {}: the end to re-enable is out of reach",
                                                    topo_.describeLink(l))));
  }
  for (LinkId m : std::vector<LinkId>(disabled_)) {
    const auto gate = disabledEnd_.find(m.value());
    if (m == l || gate == disabledEnd_.end() || gate->second.sw == end->sw) continue;
    const fabric::Link& M = topo_.link(m);
    if (M.lower.sw != end->sw && M.upper.sw != end->sw) continue;
    if (!sw_[gate->second.sw.value()].reachable || pendingGate_.count(m.value())) continue;
    pendingGate_.insert(m.value());
    enableLink(m, deadline, [this, m](Result<LinkPowerState>) { pendingGate_.erase(m.value()); });
  }
  sched_.after(opts_.linkPollPs, agent::Phase::kBackend,
               [this, l, deadline, done = std::move(done)]() mutable {
                 enableLink(l, deadline, std::move(done));
               });
}

// A link retrains on its own after Polling (under ibsim: after the harness's
// ReLink); ebb re-reads the port until it is LinkUp.
void IbBackend::pollUntilUp(LinkId l, PortId end) {
  const std::uint64_t gen = gen_[l.value()];
  enabling_.insert(l.value());
  sched_.after(opts_.linkPollPs, agent::Phase::kBackend, [this, l, end, gen] {
    if (gen != gen_[l.value()]) return;
    if (!sw_[end.sw.value()].reachable) return pollUntilUp(l, end);
    const auto mod = static_cast<std::uint32_t>(end.index + 1);
    const std::uint64_t mKey = opts_.mKey;
    sendSmp(
        end.sw,
        [mod, mKey](const MadAddress& to) {
          return buildRequest(to, Method::kGet, Attr::kPortInfo, mod, mKey);
        },
        [this, l, end, gen](Result<MadBytes> r) {
          if (gen != gen_[l.value()]) return;
          if (r && parsePortInfo(*r).phys == PhysState::kLinkUp) return linkChanged(l, true);
          pollUntilUp(l, end);
        });
  });
}

void IbBackend::linkChanged(LinkId l, bool up) {
  linkUp_[l.value()] = up ? 1 : 0;
  enabling_.erase(l.value());
  recomputeRoutes();
  if (!callback_) return;
  const fabric::Link& L = topo_.link(l);
  const LinkPowerState st = up ? LinkPowerState::kOn : LinkPowerState::kOff;
  if (!L.lowerIsHost) callback_->onLinkStateChanged(L.lower, st);
  callback_->onLinkStateChanged(L.upper, st);
}

struct IbBackend::Restore {
  std::function<void(Status)> done;
  RestoreObserver onSet;
  TimePs deadline = 0;
  std::set<std::uint32_t> inFlight;  // links with a Set on the wire
  Status firstError;
};

void IbBackend::restoreAll(std::function<void(Status)> done, RestoreObserver onSet) {
  auto r = std::make_shared<Restore>();
  r->done = std::move(done);
  r->onSet = std::move(onSet);
  r->deadline = sched_.now() + opts_.restoreTimeoutPs;
  // Links at reduced width first (they stay up: no waves needed), then the
  // disabled ones.
  std::vector<LinkId> narrow;
  for (const auto& [l, n] : narrowed_) {
    if (n.bySelf) narrow.emplace_back(l);
  }
  auto left = std::make_shared<std::size_t>(narrow.size());
  if (narrow.empty()) {
    sched_.after(0, agent::Phase::kBackend, [this, r] { restoreWave(r); });
    return;
  }
  for (LinkId l : narrow) {
    const PortId first = narrowed_.at(l.value()).ends.front().end;
    widenLink(l, [this, r, l, first, left](Status s) {
      if (!s.isOk() && r->firstError.isOk()) r->firstError = s;
      if (s.isOk() && r->onSet) r->onSet(l, first);
      if (--*left == 0) restoreWave(r);
    });
  }
}

// One wave: Set Polling on every disabled link with a reachable end; links
// out of reach wait for the next wave, after pollUntilUp has seen earlier
// ones train (linkChanged re-routes).
void IbBackend::restoreWave(std::shared_ptr<Restore> r) {
  for (LinkId l : std::vector<LinkId>(disabled_)) {
    if (r->inFlight.count(l.value())) continue;
    const std::optional<PortId> end = enableEnd(l);
    if (!end || !sw_[end->sw.value()].reachable) continue;  // a later wave
    r->inFlight.insert(l.value());
    ++gen_[l.value()];
    setPhys(*end, PhysState::kPolling, [this, r, l, end = *end](Status s) {
      r->inFlight.erase(l.value());
      if (!s.isOk()) {
        if (r->firstError.isOk()) r->firstError = s;
        return;
      }
      disabled_.erase(std::remove(disabled_.begin(), disabled_.end(), l), disabled_.end());
      disabledEnd_.erase(l.value());
      if (r->onSet) r->onSet(l, end);
      pollUntilUp(l, end);
    });
  }
  if (disabled_.empty() && r->inFlight.empty()) {
    if (!r->firstError.isOk()) {
      return r->done(
          Status(r->firstError.code(), "could not restore every link: " + r->firstError.message()));
    }
    return r->done(Status::ok());
  }
  if (sched_.now() >= r->deadline && r->inFlight.empty()) {
    std::string left;
    for (LinkId l : disabled_)
      left += (left.empty() ? "" : ", ") + topo_.describeLink(l);
    return r->done(Status(
        r->firstError.isOk() ? ErrorCode::kUnavailable : r->firstError.code(),
        fmt::format("{} links still disabled after {} s ({}){}", disabled_.size(),
                    opts_.restoreTimeoutPs / 1'000'000'000'000, left,
                    r->firstError.isOk() ? "" : "; first error: " + r->firstError.message())));
  }
  sched_.after(opts_.linkPollPs, agent::Phase::kBackend, [this, r] { restoreWave(r); });
}

std::optional<SwitchId> IbBackend::switchByLid(std::uint16_t lid) const {
  if (lid == 0) return std::nullopt;
  for (std::size_t i = 0; i < sw_.size(); ++i) {
    if (sw_[i].lid == lid) return SwitchId(static_cast<std::uint32_t>(i));
  }
  return std::nullopt;
}

void IbBackend::rereadPorts(SwitchId s, Done<std::vector<PortChange>> done) {
  ++stats_.rereads;
  const fabric::Switch& me = topo_.sw(s);
  if (!sw_[s.value()].reachable) {
    return later<std::vector<PortChange>>(
        std::move(done),
        Status(ErrorCode::kUnavailable,
               fmt::format("{} is out of reach over the links that are up", me.name)));
  }
  struct Read {
    std::size_t left = 0;
    std::vector<PortChange> changes;
    Status error;
    Done<std::vector<PortChange>> done;
  };
  auto rd = std::make_shared<Read>();
  rd->done = std::move(done);
  for (const fabric::Port& p : me.ports)
    rd->left += p.role == fabric::PortRole::kUnused ? 0u : 1u;
  if (rd->left == 0) return later<std::vector<PortChange>>(std::move(rd->done), rd->changes);
  const std::uint64_t mKey = opts_.mKey;
  for (std::uint16_t p = 0; p < me.ports.size(); ++p) {
    if (me.ports[p].role == fabric::PortRole::kUnused) continue;
    const auto mod = static_cast<std::uint32_t>(p + 1);
    sendSmp(
        s,
        [mod, mKey](const MadAddress& to) {
          return buildRequest(to, Method::kGet, Attr::kPortInfo, mod, mKey);
        },
        [this, s, p, rd](Result<MadBytes> r) {
          const PortId port{s, p};
          if (!r) {
            if (rd->error.isOk()) {
              rd->error =
                  Status(r.status().code(), topo_.describePort(port) + ": " + r.status().message());
            }
          } else {
            const PortInfo pi = parsePortInfo(*r);
            sw_[s.value()].ports[p] = pi;
            const LinkId l = topo_.sw(s).ports[p].link;
            const bool up = pi.phys == PhysState::kLinkUp;
            const bool ebbDisabled =
                std::find(disabled_.begin(), disabled_.end(), l) != disabled_.end();
            if (up && !linkUp_[l.value()] &&
                (enabling_.count(l.value()) || (!disabling_.count(l.value()) && !ebbDisabled))) {
              ++gen_[l.value()];  // no more polls for it
              rd->changes.push_back({port, "LinkUp"});
              linkChanged(l, true);
            } else if (!up && linkUp_[l.value()] && !disabling_.count(l.value())) {
              ++gen_[l.value()];
              rd->changes.push_back({port, physStateName(pi.phys)});
              linkChanged(l, false);
            }
            auto n = narrowed_.find(l.value());
            if (n != narrowed_.end() && !widthBusy_.count(l.value())) {
              for (const NarrowEnd& e : n->second.ends) {
                if (e.end != port || pi.widthEnabled == e.widthEnabled) continue;
                rd->changes.push_back(
                    {port,
                     fmt::format("LinkWidthEnabled {} (was {}: reset by someone else)",
                                 linkWidthName(pi.widthEnabled), linkWidthName(e.widthEnabled))});
                narrowed_.erase(n);
                if (callback_) {
                  const fabric::Link& L = topo_.link(l);
                  if (!L.lowerIsHost) callback_->onLinkStateChanged(L.lower, LinkPowerState::kOn);
                  callback_->onLinkStateChanged(L.upper, LinkPowerState::kOn);
                }
                break;
              }
            }
          }
          if (--rd->left > 0) return;
          stats_.portChanges += rd->changes.size();
          if (!rd->error.isOk() && rd->changes.empty()) return rd->done(rd->error);
          rd->done(rd->changes);
        });
  }
}

// ---- Width reduction (GatingAction::kReduceWidth) ----
//
// A link is gated by writing its narrowest supported width into
// PortInfo.LinkWidthEnabled at each end ebb may set (lower end first), after
// reading the width enabled there: that value, never an assumed one, is what
// brings the link back. The link stays up, so no route changes.

namespace {
// A port someone narrowed: only the narrowest width enabled while it supports wider.
bool readsNarrowed(const PortInfo& pi) {
  const std::uint8_t narrowest = narrowestWidth(pi.widthSupported);
  return pi.widthEnabled == narrowest && (pi.widthSupported & ~narrowest) != 0;
}
}  // namespace

// At start: links found at reduced width count as gated (off for the
// agents). The width to restore an end to is the far end's, when that one was
// not reduced, else its LinkWidthSupported (what OpenSM's default
// force_link_width 255 writes on real hardware).
void IbBackend::recoverWidths() {
  for (std::size_t i = 0; i < topo_.numLinks(); ++i) {
    const fabric::Link& L = topo_.links()[i];
    if (L.lowerIsHost || !linkUp_[i]) continue;
    if (!sw_[L.lower.sw.value()].visited || !sw_[L.upper.sw.value()].visited) continue;
    const PortInfo& lo = sw_[L.lower.sw.value()].ports[L.lower.index];
    const PortInfo& up = sw_[L.upper.sw.value()].ports[L.upper.index];
    Narrowed n;
    if (readsNarrowed(lo)) {
      n.ends.push_back(
          {L.lower, lo.widthEnabled, readsNarrowed(up) ? lo.widthSupported : up.widthEnabled});
    }
    if (readsNarrowed(up)) {
      n.ends.push_back(
          {L.upper, up.widthEnabled, readsNarrowed(lo) ? up.widthSupported : lo.widthEnabled});
    }
    if (!n.ends.empty()) narrowed_[static_cast<std::uint32_t>(i)] = std::move(n);
  }
}

void IbBackend::applyWidth(LinkId l, bool on, Done<LinkPowerState> done) {
  const bool narrow = narrowed_.count(l.value()) > 0;
  if (!on && narrow) return later<LinkPowerState>(std::move(done), LinkPowerState::kOff);
  if (on && !narrow) return later<LinkPowerState>(std::move(done), LinkPowerState::kOn);
  if (widthBusy_.count(l.value())) {
    return later<LinkPowerState>(
        std::move(done),
        Status(ErrorCode::kUnavailable,
               fmt::format("link {}: a width Set is still on the wire", topo_.describeLink(l))));
  }
  if (opts_.dryRun) {
    ++stats_.setsSuppressed;
    return later<LinkPowerState>(std::move(done), on ? LinkPowerState::kOn : LinkPowerState::kOff);
  }
  const fabric::Link& L = topo_.link(l);
  widthBusy_.insert(l.value());
  if (on) {
    return widenLink(l, [this, l, done = std::move(done)](Status st) {
      widthBusy_.erase(l.value());
      if (!st.isOk()) return done(st);
      if (callback_) callback_->onLinkStateChanged(topo_.link(l).upper, LinkPowerState::kOn);
      done(LinkPowerState::kOn);
    });
  }
  std::vector<PortId> ends;
  for (PortId e : {L.lower, L.upper}) {
    if (sw_[e.sw.value()].reachable && allowed(e.sw)) ends.push_back(e);
  }
  if (ends.empty()) {
    widthBusy_.erase(l.value());
    return later<LinkPowerState>(
        std::move(done),
        Status(ErrorCode::kUnavailable,
               fmt::format("link {}: neither end is both reachable and allow-listed",
                           topo_.describeLink(l))));
  }
  narrowEnds(l, std::move(ends), {}, [this, l, done = std::move(done)](Status st) {
    widthBusy_.erase(l.value());
    if (!st.isOk()) return done(st);
    if (callback_) callback_->onLinkStateChanged(topo_.link(l).upper, LinkPowerState::kOff);
    done(LinkPowerState::kOff);
  });
}

// Narrows the ends one after the other. What was narrowed is recorded even
// when a later end fails, so that turning the link on (or a fail-safe)
// restores it.
void IbBackend::narrowEnds(LinkId l, std::vector<PortId> ends, std::vector<NarrowEnd> did,
                           std::function<void(Status)> done) {
  if (ends.empty()) {
    narrowed_[l.value()] = Narrowed{std::move(did), true};
    return done(Status::ok());
  }
  const PortId end = ends.front();
  ends.erase(ends.begin());
  setWidth(end, 0,
           [this, l, ends = std::move(ends), did = std::move(did),
            done = std::move(done)](Result<NarrowEnd> r) mutable {
             if (!r) {
               if (!did.empty()) narrowed_[l.value()] = Narrowed{std::move(did), true};
               return done(r.status());
             }
             ++stats_.widthReduced;
             did.push_back(*r);
             narrowEnds(l, std::move(ends), std::move(did), std::move(done));
           });
}

// Restores every reduced end of `l` to its width before; ends that fail stay
// recorded (a later attempt or the exit restore tries again).
void IbBackend::widenLink(LinkId l, std::function<void(Status)> done) {
  auto it = narrowed_.find(l.value());
  if (it == narrowed_.end()) return done(Status::ok());
  struct State {
    std::size_t left = 0;
    std::vector<NarrowEnd> failed;
    Status firstError;
    bool bySelf = false;
    std::function<void(Status)> done;
  };
  auto st = std::make_shared<State>();
  st->left = it->second.ends.size();
  st->bySelf = it->second.bySelf;
  st->done = std::move(done);
  const std::vector<NarrowEnd> ends = it->second.ends;
  for (const NarrowEnd& e : ends) {
    setWidth(e.end, e.restoreTo, [this, l, e, st](Result<NarrowEnd> r) {
      if (r) {
        ++stats_.widthRestored;
      } else {
        st->failed.push_back(e);
        if (st->firstError.isOk()) st->firstError = r.status();
      }
      if (--st->left > 0) return;
      if (st->failed.empty()) {
        narrowed_.erase(l.value());
        return st->done(Status::ok());
      }
      narrowed_[l.value()] = Narrowed{st->failed, st->bySelf};
      st->done(st->firstError);
    });
  }
}

// Read-modify-write of one port's LinkWidthEnabled (0: its narrowest
// supported width). Completes with the width written and the one read before.
void IbBackend::setWidth(PortId end, std::uint8_t width, Done<NarrowEnd> done) {
  const auto mod = static_cast<std::uint32_t>(end.index + 1);
  const std::string where = topo_.describePort(end);
  const std::uint64_t mKey = opts_.mKey;
  sendSmp(
      end.sw,
      [mod, mKey](const MadAddress& to) {
        return buildRequest(to, Method::kGet, Attr::kPortInfo, mod, mKey);
      },
      [this, end, width, where, mKey, done = std::move(done)](Result<MadBytes> r) {
        if (!r) return done(Status(r.status().code(), where + ": " + r.status().message()));
        const PortInfo before = parsePortInfo(*r);
        const std::uint8_t want = width != 0 ? width : narrowestWidth(before.widthSupported);
        if (before.widthSupported != 0 && (want & ~before.widthSupported) != 0) {
          return done(Status(
              ErrorCode::kInvalidArgument,
              fmt::format("{}: LinkWidthEnabled {} is not within LinkWidthSupported {}", where,
                          linkWidthName(want), linkWidthName(before.widthSupported))));
        }
        ++stats_.setsSent;
        const MadBytes current = *r;
        sendSmp(
            end.sw,
            [end, want, mKey, current](const MadAddress& to) {
              return buildPortInfoSet(to, static_cast<std::uint8_t>(end.index + 1), current,
                                      PhysState::kNoChange, want, mKey);
            },
            [this, end, want, before, where, done](Result<MadBytes> sr) {
              if (!sr) {
                return done(Status(sr.status().code(),
                                   fmt::format("setting {} LinkWidthEnabled {}: {}", where,
                                               linkWidthName(want), sr.status().message())));
              }
              const PortInfo now = parsePortInfo(*sr);
              if (now.widthEnabled != want) {
                return done(
                    Status(ErrorCode::kInvalidArgument,
                           fmt::format("{} reads LinkWidthEnabled {} after Set {}", where,
                                       linkWidthName(now.widthEnabled), linkWidthName(want))));
              }
              sw_[end.sw.value()].ports[end.index] = now;
              if (setObserver_) {
                setObserver_(PortSetEvent{end, PhysState::kNoChange, want, before.widthEnabled});
              }
              done(NarrowEnd{end, want, before.widthEnabled});
            });
      });
}

void IbBackend::applyLpiEnabled(PortId port, bool, Done<bool> done) {
  later<bool>(std::move(done),
              Status(ErrorCode::kInvalidArgument,
                     fmt::format("{}: InfiniBand has no low-power idle (width reduction is the "
                                 "alternative)",
                                 topo_.describePort(port))));
}

}  // namespace ebb::ib
