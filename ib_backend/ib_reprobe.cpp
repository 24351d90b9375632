// Re-probes: a cable that failed and was repaired tells ebb only by a trap
// (OpenSM's, through the event plugin). When that trap is lost, nothing else
// reads the link again: no counter read crosses a link ebb believes down,
// and a switch it cut off stays out of reach for good. So the links that went
// down without ebb are read again, now and then, from an end in reach
// (docs/ib_agent.md, *Lost contact*); restoreAll does the same before it
// gives up on a link whose end is out of reach.
#include <fmt/format.h>

#include "ib_backend/ib_backend.h"

namespace ebb::ib {

using fabric::LinkId;
using fabric::PortId;
using fabric::SwitchId;

namespace {
// Down without ebb: not disabled by it (now or found so), nothing of ebb's
// on the wire, and a cable of the fabric as configured.
bool failedRecord(bool up, bool absent, bool disabled, bool busy) {
  return !up && !absent && !disabled && !busy;
}
}  // namespace

std::vector<LinkId> IbBackend::failedLinks() const {
  std::vector<LinkId> out;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const LinkRecord& r = links_[i];
    if (failedRecord(r.up, r.absent, r.heldEnd().has_value(),
                     r.disabling || r.enabling || r.pollingSet)) {
      out.push_back(LinkId(static_cast<std::uint32_t>(i)));
    }
  }
  return out;
}

std::size_t IbBackend::failedLinkCount() const {
  return failedLinks().size();
}

std::vector<SwitchId> IbBackend::switchesCutOff() const {
  std::vector<SwitchId> out;
  for (std::uint32_t s = 0; s < topo_.numSwitches(); ++s) {
    if (sw_[s].reachable) continue;
    for (const fabric::Port& p : topo_.switches()[s].ports) {
      if (p.role == fabric::PortRole::kUnused || !topo_.isSwitchLink(p.link)) continue;
      const LinkRecord& r = rec(p.link);
      if (failedRecord(r.up, r.absent, r.heldEnd().has_value(),
                       r.disabling || r.enabling || r.pollingSet)) {
        out.push_back(SwitchId(s));
        break;
      }
    }
  }
  return out;
}

void IbBackend::reprobeFailedLinks(Done<std::vector<PortChange>> done) {
  std::vector<PortId> ends;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const fabric::Link& L = topo_.links()[i];
    const LinkRecord& r = links_[i];
    if (!failedRecord(r.up, r.absent, r.heldEnd().has_value(),
                      r.disabling || r.enabling || r.pollingSet)) {
      continue;
    }
    // Either end in reach will do: a link trains at both ends at once. The
    // upper end first (a leaf cut off is reached from its spine; a host
    // link, a host powered on again, only from its leaf).
    for (PortId e : {L.upper, L.lower}) {
      if (e == L.lower && L.lowerIsHost) break;
      if (sw_[e.sw.value()].reachable) {
        ends.push_back(e);
        break;
      }
    }
  }
  if (ends.empty() || reprobing_) {
    return later<std::vector<PortChange>>(std::move(done), std::vector<PortChange>{});
  }
  reprobing_ = true;
  ++stats_.reprobes;
  readPortsAndTakeIn(std::move(ends),
                     [this, done = std::move(done)](std::vector<PortChange> changes) mutable {
                       reprobing_ = false;
                       done(std::move(changes));
                     });
}

}  // namespace ebb::ib
