// Re-reads: an OpenSM event names a switch; every cabled port's PortInfo is
// read again at once and what changed without ebb is taken in.
#include <fmt/format.h>

#include "ib_backend/gating_reduce_width.h"
#include "ib_backend/ib_backend.h"

namespace ebb::ib {

using fabric::LinkId;
using fabric::PortId;
using fabric::SwitchId;

void IbBackend::rereadPorts(SwitchId s, Done<std::vector<PortChange>> done) {
  ++stats_.rereads;
  const fabric::Switch& me = topo_.sw(s);
  if (!sw_[s.value()].reachable) {
    return later<std::vector<PortChange>>(
        std::move(done),
        Status(ErrorCode::kUnavailable,
               fmt::format("{} is out of reach over the links that are up", me.name)));
  }
  std::vector<std::uint16_t> ports;
  for (std::uint16_t p = 0; p < me.ports.size(); ++p) {
    if (me.ports[p].role != fabric::PortRole::kUnused) ports.push_back(p);
  }
  if (ports.empty()) {
    return later<std::vector<PortChange>>(std::move(done), std::vector<PortChange>{});
  }
  const std::uint64_t mKey = opts_.mKey;
  fanIn<std::vector<PortChange>>(
      ports.size(),
      [this, s, ports, mKey](std::size_t i,
                             std::function<void(Result<std::vector<PortChange>>)> answer) {
        const PortId port{s, ports[i]};
        const auto mod = static_cast<std::uint32_t>(port.index + 1);
        sendSmp(
            s,
            [mod, mKey](const MadAddress& to) {
              return buildRequest(to, Method::kGet, Attr::kPortInfo, mod, mKey);
            },
            [this, port, answer](Result<MadBytes> r) {
              if (!r) {
                return answer(Status(r.status().code(),
                                     topo_.describePort(port) + ": " + r.status().message()));
              }
              answer(takeIn(port, parsePortInfo(*r)));
            });
      },
      [this, done = std::move(done)](Gathered<std::vector<PortChange>> g) {
        std::vector<PortChange> changes;
        for (const auto& r : g.results) {
          if (r) changes.insert(changes.end(), r->begin(), r->end());
        }
        stats_.portChanges += changes.size();
        if (!g.firstError.isOk() && changes.empty()) return done(g.firstError);
        done(changes);
      });
}

void IbBackend::probeLinksOf(SwitchId s, std::function<void(std::vector<PortChange>)> done) {
  std::vector<PortId> farEnds;
  for (const fabric::Port& p : topo_.sw(s).ports) {
    if (p.role == fabric::PortRole::kUnused || !topo_.isSwitchLink(p.link)) continue;
    if (!rec(p.link).up || rec(p.link).absent) continue;
    const fabric::Link& L = topo_.link(p.link);
    const PortId far = L.lower.sw == s ? L.upper : L.lower;
    if (far.sw != s && sw_[far.sw.value()].reachable) farEnds.push_back(far);
  }
  if (farEnds.empty() || sw_[s.value()].probing) {
    sched_.after(0, agent::Phase::kBackend, [done = std::move(done)] { done({}); });
    return;
  }
  sw_[s.value()].probing = true;
  ++stats_.rereads;
  readPortsAndTakeIn(std::move(farEnds),
                     [this, s, done = std::move(done)](std::vector<PortChange> changes) {
                       sw_[s.value()].probing = false;
                       done(std::move(changes));
                     });
}

// Reads PortInfo of every port in `ports` (by directed route), takes each in
// (takeIn) and gives the changes together; a port that does not answer adds none.
void IbBackend::readPortsAndTakeIn(std::vector<PortId> ports,
                                   std::function<void(std::vector<PortChange>)> done) {
  const std::uint64_t mKey = opts_.mKey;
  fanIn<std::vector<PortChange>>(
      ports.size(),
      [this, ports, mKey](std::size_t i,
                          std::function<void(Result<std::vector<PortChange>>)> answer) {
        const PortId port = ports[i];
        const auto mod = static_cast<std::uint32_t>(port.index + 1);
        sendSmp(
            port.sw,
            [mod, mKey](const MadAddress& to) {
              return buildRequest(to, Method::kGet, Attr::kPortInfo, mod, mKey);
            },
            [this, port, answer](Result<MadBytes> r) {
              if (!r) return answer(r.status());
              answer(takeIn(port, parsePortInfo(*r)));
            });
      },
      [this, done = std::move(done)](Gathered<std::vector<PortChange>> g) {
        std::vector<PortChange> changes;
        for (const auto& r : g.results) {
          if (r) changes.insert(changes.end(), r->begin(), r->end());
        }
        stats_.portChanges += changes.size();
        done(changes);
      });
}

// A link that came up or went down without ebb is a fault (the agents hear
// onPortUp/onPortDown); one ebb is enabling that came up is its completion
// (onLinkStateChanged alone); what ebb is doing itself is not a change.
std::vector<PortChange> IbBackend::takeIn(PortId port, const PortInfo& pi) {
  sw_[port.sw.value()].ports[port.index] = pi;
  const LinkId l = topo_.sw(port.sw).ports[port.index].link;
  LinkRecord& r = rec(l);
  if (r.absent) return {};  // not the configured cable: its state says nothing of the link
  const bool up = pi.phys == PhysState::kLinkUp;
  const bool ebbDisabled = r.disabledEnd.has_value();
  std::vector<PortChange> out;
  if (up && !r.up && (r.enabling || (!r.disabling && !ebbDisabled))) {
    ++r.gen;  // no more polls for it
    out.push_back({port, "LinkUp"});
    if (r.enabling) {
      linkChanged(l, true);
    } else {
      linkFault(l, true);
    }
  } else if (!up && r.up && !r.disabling) {
    ++r.gen;
    out.push_back({port, physStateName(pi.phys)});
    linkFault(l, false);
  }
  if (auto c = width_->takeIn(port, pi)) out.push_back(std::move(*c));
  return out;
}

}  // namespace ebb::ib
