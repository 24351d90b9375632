#include "ib_backend/gating_disable_port.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "ib_backend/ib_backend.h"

namespace ebb::ib {

using agent::LinkPowerState;
using fabric::LinkId;
using fabric::PortId;

bool DisablePortGating::readsOff(LinkId l) const {
  return !b_.rec(l).up;
}

void DisablePortGating::setPhys(PortId end, PhysState phys, std::function<void(Status)> done) {
  b_.writePort(
      end,
      [phys](const PortInfo&) -> Result<PortInfoEdit> {
        return PortInfoEdit{phys, 0};
      },
      [this, end, phys, done = std::move(done)](Result<PortInfoChange> r) {
        if (!r) return done(r.status());
        if (phys == PhysState::kDisabled && r->after.phys != PhysState::kDisabled) {
          return done(
              Status(ErrorCode::kInvalidArgument,
                     fmt::format("{} reads {} after Set Disabled", b_.topo_.describePort(end),
                                 physStateName(r->after.phys))));
        }
        if (b_.setObserver_) b_.setObserver_(PortSetEvent{end, phys, 0, 0});
        done(Status::ok());
      });
}

void DisablePortGating::turnOff(LinkId l, Done<LinkPowerState> done) {
  // The end to set must stay reachable once the link is down: a switch that
  // loses its last link is set from the far end. The safety guard, when it
  // chose the end (single-failure resilience), has the last word.
  b_.rec(l).up = false;  // no route through it from now on, even before the reply
  b_.recomputeRoutes();
  const fabric::Link& L = b_.topo_.link(l);
  const auto usableEnd = [this](PortId e) {
    return b_.sw_[e.sw.value()].reachable && b_.allowed(e.sw);
  };
  std::optional<PortId> end;
  const std::optional<PortId> chosen = b_.gateChooser_ ? b_.gateChooser_(l) : std::nullopt;
  if (chosen) {
    if (usableEnd(*chosen)) end = chosen;
  } else {
    for (PortId e : {L.lower, L.upper}) {
      if (!end && usableEnd(e)) end = e;
    }
  }
  if (!end) {
    b_.rec(l).up = true;
    b_.recomputeRoutes();
    return b_.later<LinkPowerState>(
        std::move(done),
        Status(ErrorCode::kUnavailable,
               chosen ? fmt::format("link {}: the end chosen to disable ({}) is not both "
                                    "reachable and allow-listed",
                                    b_.topo_.describeLink(l), b_.topo_.describePort(*chosen))
                      : fmt::format("link {}: neither end is both reachable and allow-listed",
                                    b_.topo_.describeLink(l))));
  }
  const std::uint64_t gen = ++b_.rec(l).gen;
  b_.rec(l).disabling = true;
  setPhys(*end, PhysState::kDisabled, [this, l, end, gen, done = std::move(done)](Status st) {
    IbBackend::LinkRecord& r = b_.rec(l);
    r.disabling = false;
    if (!st.isOk()) return done(st);
    r.disabledEnd = *end;  // only this end can bring the link back
    if (std::find(b_.disabled_.begin(), b_.disabled_.end(), l) == b_.disabled_.end()) {
      b_.disabled_.push_back(l);
    }
    if (gen != r.gen) return done(LinkPowerState::kOff);
    if (b_.callback_)
      b_.callback_->onLinkStateChanged(b_.topo_.link(l).upper, LinkPowerState::kOff);
    done(LinkPowerState::kOff);
  });
}

void DisablePortGating::turnOn(LinkId l, Done<LinkPowerState> done) {
  enableLink(l, b_.sched_.now() + b_.opts_.restoreTimeoutPs, std::move(done));
}

void DisablePortGating::forget(LinkId l) {
  b_.disabled_.erase(std::remove(b_.disabled_.begin(), b_.disabled_.end(), l), b_.disabled_.end());
  b_.rec(l).disabledEnd.reset();
}

// The end to re-enable: the one ebb disabled (the other end cannot undo a
// Disabled port), for a link found Disabled the end that reads so, else the
// first reachable end.
std::optional<PortId> DisablePortGating::enableEnd(LinkId l) const {
  if (const auto& end = b_.rec(l).disabledEnd) return end;
  if (const auto& end = b_.rec(l).foundDisabledAt) return end;
  const fabric::Link& L = b_.topo_.link(l);
  for (PortId e : {L.lower, L.upper}) {
    if (b_.sw_[e.sw.value()].reachable) return e;
  }
  return std::nullopt;
}

// Sets Polling on the end of `l` ebb disabled. When that switch has gone
// dark, first re-enables its links that were disabled from their far ends
// (the last one it lost is always such a link), then waits until it is
// reachable again, up to `deadline`.
void DisablePortGating::enableLink(LinkId l, TimePs deadline, Done<LinkPowerState> done) {
  const std::optional<PortId> end = enableEnd(l);
  if (end && b_.sw_[end->sw.value()].reachable) {
    if (!b_.allowed(end->sw)) {
      return b_.later<LinkPowerState>(
          std::move(done),
          Status(ErrorCode::kUnavailable,
                 fmt::format("link {}: {} is not allow-listed", b_.topo_.describeLink(l),
                             b_.topo_.sw(end->sw).name)));
    }
    const std::uint64_t gen = ++b_.rec(l).gen;
    return setPhys(*end, PhysState::kPolling,
                   [this, l, end = *end, gen, done = std::move(done)](Status st) {
                     if (!st.isOk()) return done(st);
                     forget(l);
                     done(LinkPowerState::kTurningOn);
                     if (gen == b_.rec(l).gen) pollUntilUp(l, end);
                   });
  }
  if (!end || b_.sched_.now() >= deadline) {
    return b_.later<LinkPowerState>(
        std::move(done),
        Status(ErrorCode::kUnavailable, fmt::format("link {}: the end to re-enable is out of reach",
                                                    b_.topo_.describeLink(l))));
  }
  for (LinkId m : std::vector<LinkId>(b_.disabled_)) {
    const std::optional<PortId>& gate = b_.rec(m).disabledEnd;
    if (m == l || !gate || gate->sw == end->sw) continue;
    const fabric::Link& M = b_.topo_.link(m);
    if (M.lower.sw != end->sw && M.upper.sw != end->sw) continue;
    if (!b_.sw_[gate->sw.value()].reachable || b_.rec(m).pendingGate) continue;
    b_.rec(m).pendingGate = true;
    enableLink(m, deadline, [this, m](Result<LinkPowerState>) { b_.rec(m).pendingGate = false; });
  }
  b_.sched_.after(b_.opts_.linkPollPs, agent::Phase::kBackend,
                  [this, l, deadline, done = std::move(done)]() mutable {
                    enableLink(l, deadline, std::move(done));
                  });
}

// A link retrains on its own after Polling (under ibsim: after the harness's
// ReLink); ebb re-reads the port until it is LinkUp.
void DisablePortGating::pollUntilUp(LinkId l, PortId end) {
  const std::uint64_t gen = b_.rec(l).gen;
  b_.rec(l).enabling = true;
  b_.sched_.after(b_.opts_.linkPollPs, agent::Phase::kBackend, [this, l, end, gen] {
    if (gen != b_.rec(l).gen) return;
    if (!b_.sw_[end.sw.value()].reachable) return pollUntilUp(l, end);
    const auto mod = static_cast<std::uint32_t>(end.index + 1);
    const std::uint64_t mKey = b_.opts_.mKey;
    b_.sendSmp(
        end.sw,
        [mod, mKey](const MadAddress& to) {
          return buildRequest(to, Method::kGet, Attr::kPortInfo, mod, mKey);
        },
        [this, l, end, gen](Result<MadBytes> r) {
          if (gen != b_.rec(l).gen) return;
          if (r && parsePortInfo(*r).phys == PhysState::kLinkUp) return b_.linkChanged(l, true);
          pollUntilUp(l, end);
        });
  });
}

void DisablePortGating::restore(std::shared_ptr<RestoreRun> run, std::function<void()> then) {
  wave(std::move(run), std::move(then));
}

// One wave: Set Polling on every disabled link with a reachable end; links
// out of reach wait for the next wave, after pollUntilUp has seen earlier
// ones train (linkChanged re-routes). Done once nothing is disabled, nothing
// is on the wire and every link set Polling reads LinkUp; restoreAll's
// deadline ends it otherwise (run->over).
void DisablePortGating::wave(std::shared_ptr<RestoreRun> r, std::function<void()> then) {
  if (r->over) return;
  for (LinkId l : std::vector<LinkId>(b_.disabled_)) {
    if (r->inFlight.count(l)) continue;
    const std::optional<PortId> end = enableEnd(l);
    if (!end || !b_.sw_[end->sw.value()].reachable) {
      if (end) {
        r->why[l] =
            fmt::format("the end to re-enable ({}) is out of reach", b_.topo_.describePort(*end));
      }
      continue;  // a later wave
    }
    r->inFlight.insert(l);
    ++b_.rec(l).gen;
    setPhys(*end, PhysState::kPolling, [this, r, l, end = *end](Status s) {
      r->inFlight.erase(l);
      if (!s.isOk()) {
        if (r->firstError.isOk()) r->firstError = s;
        r->why[l] = "setting Polling failed: " + s.message();
        return;  // the next wave sends it again, until the deadline
      }
      forget(l);
      r->why[l] = fmt::format("set Polling at {}, no LinkUp", b_.topo_.describePort(end));
      r->awaitingUp.insert(l);
      if (r->onSet) r->onSet(l, end);
      pollUntilUp(l, end);
    });
  }
  const bool allUp = std::all_of(r->awaitingUp.begin(), r->awaitingUp.end(),
                                 [this](LinkId l) { return b_.rec(l).up; });
  if (b_.disabled_.empty() && r->inFlight.empty() && allUp) return then();
  b_.sched_.after(b_.opts_.linkPollPs, agent::Phase::kBackend,
                  [this, r, then = std::move(then)] { wave(r, then); });
}

}  // namespace ebb::ib
