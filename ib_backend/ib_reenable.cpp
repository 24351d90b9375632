// Re-enables that could not be delivered: a turn-on (a fail-safe's, a
// re-homing's, an agent's) whose Polling Set got no answer — the management
// path cut, the end out of reach — is not forgotten. It stays pending and is
// sent again with backoff until the switch acknowledges it or the link reads
// LinkUp; meanwhile no turn-off is sent, so once contact returns the pending
// re-enables go out before anything is turned off (docs/ib_agent.md, *Fail safe*).
#include <fmt/format.h>

#include <algorithm>

#include "ib_backend/gating_disable_port.h"
#include "ib_backend/ib_backend.h"

namespace ebb::ib {

using fabric::LinkId;

std::vector<LinkId> IbBackend::pendingReenables() const {
  std::vector<LinkId> out;
  for (const auto& [l, p] : pending_)
    out.push_back(l);
  return out;
}

std::vector<LinkId> IbBackend::reenablesNotDelivered() const {
  std::vector<LinkId> out = pendingReenables();
  for (std::size_t l = 0; l < links_.size(); ++l) {
    const LinkId id(static_cast<std::uint32_t>(l));
    if ((links_[l].reenabling || links_[l].pollingSet) && !pending_.count(id)) out.push_back(id);
  }
  return out;
}

void IbBackend::keepReenabling(LinkId l, const Status& why) {
  if (opts_.dryRun || restoring_ || rec(l).absent) return;
  // Only a link ebb holds down can be brought back by ebb; a switch that is
  // not allow-listed never will be (a rule, not a failure to retry).
  const std::optional<fabric::PortId> end = rec(l).heldEnd();
  if (!end || !allowed(end->sw)) return;
  auto [it, fresh] = pending_.try_emplace(l);
  PendingReenable& p = it->second;
  p.why = why;
  if (fresh) {
    p.since = sched_.now();
    p.delay = std::max<TimePs>(opts_.linkPollPs, 1);
    reportReenable(l, ReenableEvent::Kind::kPending);
  }
  if (!p.inFlight) scheduleReenable(l, p.delay);
}

void IbBackend::scheduleReenable(LinkId l, TimePs delay) {
  PendingReenable& p = pending_.at(l);
  const std::uint64_t token = ++p.token;
  sched_.after(delay, agent::Phase::kBackend, [this, l, token] { retryReenable(l, token); });
}

void IbBackend::retryPendingReenables(std::optional<fabric::SwitchId> at) {
  for (auto& [l, p] : pending_) {
    const std::optional<fabric::PortId> end = rec(l).heldEnd();
    if (p.inFlight || (at && (!end || end->sw != *at))) continue;
    scheduleReenable(l, 0);
  }
}

void IbBackend::retryReenableNow(LinkId l) {
  if (auto it = pending_.find(l); it != pending_.end() && !it->second.inFlight) {
    scheduleReenable(l, 0);
  }
}

void IbBackend::retryReenable(LinkId l, std::uint64_t token) {
  auto it = pending_.find(l);
  if (it == pending_.end() || it->second.token != token || it->second.inFlight) return;
  if (restoring_) return;  // restoreAll re-enables every disabled link itself
  if (rec(l).up || rec(l).enabling || !rec(l).heldEnd()) {
    // Up again (a re-read saw it), or set Polling by another way meanwhile.
    return reportReenable(
        l, rec(l).up ? ReenableEvent::Kind::kConfirmedUp : ReenableEvent::Kind::kDelivered);
  }
  it->second.inFlight = true;
  ++it->second.attempts;
  // One try (with the transport's retries); an end out of reach gets one
  // poll period for the first hop toward it (enableLink) before it counts
  // as failed.
  disable_->enableLink(l, sched_.now() + opts_.linkPollPs,
                       [this, l](Result<agent::LinkPowerState> r) {
                         auto p = pending_.find(l);
                         if (p == pending_.end()) return;
                         p->second.inFlight = false;
                         if (r) return reportReenable(l, ReenableEvent::Kind::kDelivered);
                         if (restoring_) return;
                         p->second.why = r.status();
                         p->second.delay = std::min(p->second.delay * 2, kMaxReenableDelayPs);
                         scheduleReenable(l, p->second.delay);
                       });
}

// Reports the event; a delivered or confirmed link leaves the pending set.
void IbBackend::reportReenable(LinkId l, ReenableEvent::Kind kind) {
  auto it = pending_.find(l);
  if (it == pending_.end()) return;
  ReenableEvent e;
  e.link = l;
  e.kind = kind;
  e.why = it->second.why;
  e.attempts = it->second.attempts;
  e.pendingPs = sched_.now() - it->second.since;
  if (kind != ReenableEvent::Kind::kPending) pending_.erase(it);
  if (reenableObserver_) reenableObserver_(e);
}

Status IbBackend::reenablesPendingRefusal() const {
  if (pending_.empty()) return Status::ok();
  // A re-enable whose end is on a switch failures cut off waits for that
  // switch, not the fabric: it may be dead (for days, an RMA), and the
  // guard's proofs count on none of its gates already. The rule is for the
  // management path: a re-enable it could not deliver goes out first.
  const std::vector<fabric::SwitchId> cutOff = switchesCutOff();
  std::vector<std::string> links;
  for (const auto& [l, p] : pending_) {
    const std::optional<fabric::PortId> end = rec(l).heldEnd();
    if (end && std::find(cutOff.begin(), cutOff.end(), end->sw) != cutOff.end()) continue;
    links.push_back(topo_.describeLink(l));
  }
  if (links.empty()) return Status::ok();
  return {ErrorCode::kUnavailable,
          fmt::format("{} re-enable(s) not delivered yet ({}): no link is turned off before "
                      "they are",
                      links.size(), fmt::join(links, ", "))};
}

}  // namespace ebb::ib
