// The gates this backend holds on the fabric (ib_backend.h, HeldGate): what
// the daemon's state file keeps so that a run after a crash takes them back.
#include <set>

#include "ib_backend/ib_backend.h"

namespace ebb::ib {

using fabric::LinkId;
using fabric::PortId;

namespace {
LinkId portLink(const fabric::Topology& topo, PortId end) {
  return topo.sw(end.sw).ports[end.index].link;
}
}  // namespace

std::vector<HeldGate> IbBackend::heldGates() const {
  std::set<HeldGate> held;
  for (LinkId l : disabled_) {
    if (rec(l).disabledEnd) held.insert({*rec(l).disabledEnd, false, 0});
  }
  for (const LinkRecord& r : links_) {
    if (!r.narrowed || !r.narrowed->bySelf) continue;
    for (const NarrowEnd& e : r.narrowed->ends)
      held.insert({e.end, true, e.restoreTo});
  }
  for (const HeldGate& g : intents_) {
    // A Disabled Set that did not land (or whose link came back) holds nothing.
    if (!g.narrowed && rec(portLink(topo_, g.end)).up) continue;
    held.insert(g);
  }
  return {held.begin(), held.end()};
}

Status IbBackend::holdBeforeSet(const HeldGate& g) {
  const bool added = intents_.insert(g).second;
  if (!heldObserver_) return Status::ok();
  Status st = heldObserver_();
  if (!st.isOk() && added) intents_.erase(g);
  return st;
}

bool IbBackend::settledIntent(const HeldGate& g, const LinkRecord& r) const {
  if (!g.narrowed) return r.up || r.disabledEnd.has_value();
  if (r.widthBusy || !r.narrowed) return false;
  for (const NarrowEnd& e : r.narrowed->ends) {
    if (e.end == g.end) return true;
  }
  return false;
}

void IbBackend::widened(PortId end) {
  for (auto it = intents_.begin(); it != intents_.end();)
    it = it->narrowed && it->end == end ? intents_.erase(it) : std::next(it);
}

void IbBackend::heldChanged() {
  // Disabled intents end once the link is recorded Disabled or reads up;
  // width intents once the narrowing is recorded (a Set that failed after
  // it went out stays held: the port may be narrow) or the end is widened.
  for (auto it = intents_.begin(); it != intents_.end();) {
    const LinkRecord& r = rec(portLink(topo_, it->end));
    it = settledIntent(*it, r) ? intents_.erase(it) : std::next(it);
  }
  // A failure here leaves the file listing more than is held: harmless (the
  // next start takes back only what still reads gated).
  if (heldObserver_) static_cast<void>(heldObserver_());
}

std::vector<HeldGate> IbBackend::adoptGates(const std::vector<HeldGate>& previous) {
  std::vector<HeldGate> taken;
  for (const HeldGate& g : previous) {
    if (g.end.sw.value() >= topo_.numSwitches() || g.end.index >= topo_.sw(g.end.sw).ports.size()) {
      continue;
    }
    const LinkId l = portLink(topo_, g.end);
    // Only what this run may Set is its own to restore (the allow-list may
    // have changed since); a host's link ebb never gates.
    if (!l.valid() || !allowed(g.end.sw) || topo_.link(l).lowerIsHost) continue;
    LinkRecord& r = rec(l);
    if (!g.narrowed) {
      // Still Disabled at the end the previous run set: only it brings the link back.
      if (r.up || r.absent || r.foundDisabledAt != g.end || r.disabledEnd) continue;
      r.disabledEnd = g.end;
      disabled_.push_back(l);
      taken.push_back(g);
      continue;
    }
    if (!r.narrowed) continue;
    for (NarrowEnd& e : r.narrowed->ends) {
      if (e.end != g.end) continue;
      // The width read before the narrowing Set, unless the port cannot take it.
      const std::uint8_t supported = sw_[g.end.sw.value()].ports[g.end.index].widthSupported;
      if (g.restoreWidth != 0 && (supported == 0 || (g.restoreWidth & ~supported) == 0)) {
        e.restoreTo = g.restoreWidth;
      }
      r.narrowed->bySelf = true;
      taken.push_back({e.end, true, e.restoreTo});
    }
  }
  return taken;
}

bool IbBackend::readsUngated(const HeldGate& g) const {
  if (g.end.sw.value() >= topo_.numSwitches()) return false;
  const SwitchState& s = sw_[g.end.sw.value()];
  if (!s.visited || g.end.index >= s.ports.size()) return false;
  const PortInfo& pi = s.ports[g.end.index];
  if (!g.narrowed) return pi.phys != PhysState::kDisabled;
  const std::uint8_t narrowest = narrowestWidth(pi.widthSupported);
  return pi.widthEnabled != narrowest || (pi.widthSupported & ~narrowest) == 0;
}

}  // namespace ebb::ib
