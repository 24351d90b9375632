// IbBackend's core: construction, the per-link records, directed-route SMPs
// (with their read-modify-write of PortInfo), link changes and the callbacks,
// and the agents' view (ports, link states). The other concerns have their
// own files: ib_discovery.cpp, ib_counters.cpp, ib_gating.cpp, ib_restore.cpp,
// ib_reread.cpp and the two gating strategies.
#include "ib_backend/ib_backend.h"

#include <fmt/format.h>

#include <algorithm>

#include "ib_backend/gating_disable_port.h"
#include "ib_backend/gating_reduce_width.h"

namespace ebb::ib {

using agent::LinkPowerState;
using fabric::LinkId;
using fabric::PortId;
using fabric::SwitchId;

const char* gatingActionName(GatingAction a) {
  return a == GatingAction::kReduceWidth ? "reduce_width" : "disable_port";
}

IbBackend::IbBackend(const fabric::Topology& topo, MadTransport& transport,
                     agent::Scheduler& scheduler, IbBackendOptions opts)
    : topo_(topo),
      mad_(transport),
      sched_(scheduler),
      opts_(std::move(opts)),
      sw_(topo.numSwitches()),
      links_(topo.numLinks()),
      disable_(std::make_unique<DisablePortGating>(*this)),
      width_(std::make_unique<ReduceWidthGating>(*this)) {
  for (std::size_t s = 0; s < sw_.size(); ++s) {
    sw_[s].ports.resize(topo.switches()[s].ports.size());
  }
}

IbBackend::~IbBackend() = default;

MadAddress IbBackend::drTo(SwitchId s) const {
  MadAddress a;
  a.mgmtClass = MgmtClass::kSmiDirect;
  a.path = sw_[s.value()].path;
  return a;
}

bool IbBackend::allowed(SwitchId s) const {
  return opts_.allowGuids.count(topo_.sw(s).guid) > 0;
}

std::vector<fabric::PortId> IbBackend::foundDisabledEnds() const {
  std::vector<fabric::PortId> out;
  for (const LinkRecord& r : links_) {
    if (r.foundDisabledAt && !r.up) out.push_back(*r.foundDisabledAt);
  }
  return out;
}

fabric::LinkStates IbBackend::linkStates() const {
  fabric::LinkStates ls(topo_.numLinks(), true);
  for (std::size_t l = 0; l < links_.size(); ++l) {
    const LinkId id(static_cast<std::uint32_t>(l));
    ls.setLink(id, usable(id));
  }
  return ls;
}

std::vector<LinkId> IbBackend::gatedLinks() const {
  std::vector<LinkId> out = disabled_;
  for (std::size_t l = 0; l < links_.size(); ++l) {
    if (links_[l].narrowed && links_[l].narrowed->bySelf) {
      out.emplace_back(static_cast<std::uint32_t>(l));
    }
  }
  return out;
}

std::map<std::uint32_t, IbBackend::Narrowed> IbBackend::narrowedLinks() const {
  std::map<std::uint32_t, Narrowed> out;
  for (std::size_t l = 0; l < links_.size(); ++l) {
    if (links_[l].narrowed) out.emplace(static_cast<std::uint32_t>(l), *links_[l].narrowed);
  }
  return out;
}

std::optional<SwitchId> IbBackend::switchByLid(std::uint16_t lid) const {
  if (lid == 0) return std::nullopt;
  for (std::size_t i = 0; i < sw_.size(); ++i) {
    if (sw_[i].lid == lid) return SwitchId(static_cast<std::uint32_t>(i));
  }
  return std::nullopt;
}

Result<double> IbBackend::activeGbps(SwitchId s, std::uint16_t port) const {
  Result<double> r = sw_[s.value()].ports[port].dataGbps(sw_[s.value()].extSpeeds);
  if (!r) {
    return Status(r.status().code(),
                  fmt::format("{}: {}", topo_.describePort(PortId{s, port}), r.status().message()));
  }
  return r;
}

// A LinkUp port at full width runs at the speed it reads. A port that is
// down or at reduced width (ebb's own doing, or a cable out) runs at the
// fastest full-width LinkUp port of its switch when it comes back, else of
// the fabric: the IBA gives a down port no active speed to read.
Result<double> IbBackend::bandwidthOf(SwitchId s, std::uint16_t port) const {
  auto readsActive = [&](SwitchId sw, std::size_t p) {
    const fabric::Port& pt = topo_.sw(sw).ports[p];
    return pt.role != fabric::PortRole::kUnused && sw_[sw.value()].reachable &&
           sw_[sw.value()].ports[p].phys == PhysState::kLinkUp && !rec(pt.link).narrowed;
  };
  if (readsActive(s, port)) {
    Result<double> g = activeGbps(s, port);
    if (!g) return g.status();
    return *g / 8000.0;  // Gb/s -> bytes per picosecond
  }
  auto fastestOf = [&](SwitchId sw) {
    double best = 0;
    for (std::size_t p = 0; p < topo_.sw(sw).ports.size(); ++p) {
      if (!readsActive(sw, p)) continue;
      if (auto g = activeGbps(sw, static_cast<std::uint16_t>(p))) best = std::max(best, *g);
    }
    return best;
  };
  double gbps = fastestOf(s);
  for (std::size_t o = 0; gbps <= 0 && o < sw_.size(); ++o) {
    gbps = std::max(gbps, fastestOf(SwitchId(static_cast<std::uint32_t>(o))));
  }
  if (gbps <= 0) {
    return Status(ErrorCode::kUnavailable,
                  fmt::format("{}: its link is not up and no LinkUp port of the fabric reads a "
                              "known speed to take for it",
                              topo_.describePort(PortId{s, port})));
  }
  return gbps / 8000.0;
}

void IbBackend::discoverPorts(SwitchId sw, Done<std::vector<agent::PortDescription>> done) {
  std::vector<agent::PortDescription> out;
  const fabric::Switch& me = topo_.sw(sw);
  for (std::uint16_t p = 0; p < me.ports.size(); ++p) {
    if (me.ports[p].role == fabric::PortRole::kUnused) continue;
    const LinkPowerState st = usable(me.ports[p].link) ? LinkPowerState::kOn : LinkPowerState::kOff;
    Result<double> bw = bandwidthOf(sw, p);
    if (!bw) return later<std::vector<agent::PortDescription>>(std::move(done), bw.status());
    out.push_back({p, me.ports[p].role, *bw, st, st});
  }
  later<std::vector<agent::PortDescription>>(std::move(done), std::move(out));
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

void IbBackend::writePort(PortId end, std::function<Result<PortInfoEdit>(const PortInfo&)> modify,
                          Done<PortInfoChange> done) {
  PortInfoWrite w;
  w.send = [this, s = end.sw](std::function<MadBytes(const MadAddress&)> build,
                              MadTransport::Done d) { sendSmp(s, build, std::move(d)); };
  w.portNumber = static_cast<std::uint8_t>(end.index + 1);
  w.mKey = opts_.mKey;
  w.where = topo_.describePort(end);
  w.modify = std::move(modify);
  w.onSet = [this] { ++stats_.setsSent; };
  // A Set that fails may have met a failed cable on its route: read the
  // links along the route from their far ends, so it is taken in as a fault.
  writePortInfo(std::move(w), [this, s = end.sw, done = std::move(done)](Result<PortInfoChange> r) {
    if (!r) probeRoute(s);
    done(std::move(r));
  });
}

void IbBackend::probeRoute(SwitchId s) {
  if (!first_ || !sw_[s.value()].reachable) return probeLinksOf(s, [](auto&&) {});
  // The switches the directed route to `s` passes, from the attach switch.
  SwitchId at = *first_;
  const std::vector<std::uint8_t>& hops = sw_[s.value()].path.hops;
  const std::size_t skip = attach_.hops.size();
  probeLinksOf(at, [](auto&&) {});
  for (std::size_t i = skip; i < hops.size(); ++i) {
    const std::size_t index = hops[i] - 1u;
    const auto& ports = topo_.sw(at).ports;
    if (index >= ports.size() || ports[index].role == fabric::PortRole::kUnused) return;
    const fabric::Link& L = topo_.link(ports[index].link);
    if (L.lowerIsHost) return;
    at = L.lower.sw == at ? L.upper.sw : L.lower.sw;
    probeLinksOf(at, [](auto&&) {});
  }
}

void IbBackend::linkChanged(LinkId l, bool up) {
  rec(l).up = up;
  rec(l).enabling = false;
  recomputeRoutes();
  // A link up may bring the end of a pending re-enable back in reach: it
  // goes now, not when its backoff comes round (up to 5 s later).
  if (up && !pending_.empty()) {
    for (const auto& [pl, p] : pending_) {
      const std::optional<fabric::PortId> end = rec(pl).heldEnd();
      if (end && sw_[end->sw.value()].reachable) retryReenableNow(pl);
    }
  }
  heldChanged();
  if (!callback_) return;
  const fabric::Link& L = topo_.link(l);
  const LinkPowerState st = up ? LinkPowerState::kOn : LinkPowerState::kOff;
  if (!L.lowerIsHost) callback_->onLinkStateChanged(L.lower, st);
  callback_->onLinkStateChanged(L.upper, st);
}

void IbBackend::linkFault(LinkId l, bool up) {
  linkChanged(l, up);
  if (!callback_) return;
  const fabric::Link& L = topo_.link(l);
  for (const PortId end : {L.lower, L.upper}) {
    if (end == L.lower && L.lowerIsHost) continue;  // hosts have no agent
    if (up) {
      callback_->onPortUp(end);
    } else {
      callback_->onPortDown(end);
    }
  }
}

}  // namespace ebb::ib
