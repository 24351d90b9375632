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

void DisablePortGating::setPhys(PortId end, PhysState phys, std::function<void(Status)> done,
                                std::function<bool()> stillWanted, std::shared_ptr<bool> sent,
                                std::shared_ptr<bool> deadCable) {
  b_.writePort(
      end,
      [this, end, phys, stillWanted = std::move(stillWanted), sent = std::move(sent),
       deadCable = std::move(deadCable)](const PortInfo& before) -> Result<PortInfoEdit> {
        // A link trained (or training) since: another Set got there first,
        // and a Polling Set on it would take it down again (ibsim does).
        // Nothing is sent. (A port that reads Polling gets its Set: a
        // disabled port whose cable the test rig unplugged reads so, and
        // it is harmless on one that polls already.)
        if (phys == PhysState::kPolling &&
            (before.phys == PhysState::kLinkUp || before.phys == PhysState::kTraining ||
             before.phys == PhysState::kErrorRecovery)) {
          return PortInfoEdit{PhysState::kNoChange, 0};
        }
        if (deadCable && before.phys != PhysState::kLinkUp) {
          *deadCable = true;
          return Status(ErrorCode::kNotFound,
                        fmt::format("{} reads {}, not LinkUp: its cable is down (a failure no "
                                    "trap told of), nothing to disable",
                                    b_.topo_.describePort(end), physStateName(before.phys)));
        }
        // Checked when the Set is about to go (after the Get's reply), not
        // only when it was asked for: the intent may have changed meanwhile.
        if (stillWanted && !stillWanted()) {
          return Status(
              ErrorCode::kUnavailable,
              fmt::format("Set {} not sent: superseded by a turn-on", physStateName(phys)));
        }
        // Recorded (the daemon's state file) before it goes: a crash from
        // here on leaves the next run knowing whose Disabled port it is.
        if (phys == PhysState::kDisabled) {
          if (Status st = b_.holdBeforeSet({end, false, 0}); !st.isOk()) return st;
        }
        if (sent) *sent = true;
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
        if (b_.setObserver_ && r->edit.phys != PhysState::kNoChange)
          b_.setObserver_(PortSetEvent{end, phys, 0, 0});
        done(Status::ok());
      });
}

void DisablePortGating::turnOff(LinkId l, Done<LinkPowerState> done) {
  // The end to set must stay reachable once the link is down: a switch that
  // loses its last link is set from the far end. The safety guard, when it
  // chose the end (single-failure resilience), has the last word.
  const bool wasUp = b_.rec(l).up && !b_.rec(l).enabling;  // up, not training
  b_.rec(l).up = false;        // no route through it from now on, even before the reply
  b_.rec(l).enabling = false;  // no more waiting for LinkUp (the generation stops the poll)
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
  // A turn-on since (a recovery re-homing through this link, any end) bumps
  // the generation: the Disabled Set is then no longer wanted. It is not sent
  // if that is known before it goes; if it went anyway, it is undone.
  auto skipped = std::make_shared<bool>(false);
  const auto stillWanted = [this, l, gen, skipped] {
    *skipped = gen != b_.rec(l).gen;
    return !*skipped;
  };
  auto sent = std::make_shared<bool>(false);
  // The Get before the Set reads the port: a link ebb had up that reads
  // down there died with no trap to tell (its switch's traps could not
  // reach the SM at that moment). Not gated: taken in as the failure it is.
  auto deadCable = std::make_shared<bool>(false);
  setPhys(
      *end, PhysState::kDisabled,
      [this, l, end = *end, gen, skipped, sent, deadCable, done = std::move(done)](Status st) {
        IbBackend::LinkRecord& r = b_.rec(l);
        r.disabling = false;
        if (*deadCable && !*sent && gen == r.gen) {
          ++b_.stats_.failuresFoundBeforeSet;
          b_.linkFault(l, false);
          return done(LinkPowerState::kOff);
        }
        if (gen != r.gen) return superseded(l, end, st, *skipped, std::move(done));
        if (!st.isOk()) {
          // No Set went out (refused before it, the end out of reach): the
          // link is still up. One that may have gone out keeps it held
          // (its record too) until the link reads up again.
          if (st.code() == ErrorCode::kUnavailable && !*sent) {
            r.up = true;
            b_.recomputeRoutes();
            b_.heldChanged();
          }
          return done(st);
        }
        markDisabled(l, end);
        if (b_.callback_)
          b_.callback_->onLinkStateChanged(b_.topo_.link(l).upper, LinkPowerState::kOff);
        done(LinkPowerState::kOff);
      },
      stillWanted, sent, wasUp ? deadCable : nullptr);
}

void DisablePortGating::markDisabled(LinkId l, PortId end) {
  b_.rec(l).disabledEnd = end;  // only this end can bring the link back
  if (std::find(b_.disabled_.begin(), b_.disabled_.end(), l) == b_.disabled_.end()) {
    b_.disabled_.push_back(l);
  }
  b_.heldChanged();
}

// A turn-off superseded by a turn-on while its Set was on its way. Not sent:
// nothing to undo. Sent (or maybe sent: no reply), the end may read Disabled
// now, and a link Disabled at one end never comes up whatever the other end
// does: that end is set Polling again at once, if it reads Disabled. If that
// fails, the link is what it is, Disabled by ebb at that end: recorded so
// (restore and recovery see it), never taken for coming up, and re-enabled
// as any re-enable not delivered (ib_reenable.cpp).
void DisablePortGating::superseded(LinkId l, PortId end, const Status& st, bool skipped,
                                   Done<LinkPowerState> done) {
  const Status notApplied(
      ErrorCode::kUnavailable,
      fmt::format("link {}: turn-off superseded by a turn-on before its Set landed{}",
                  b_.topo_.describeLink(l), skipped ? " (not sent)" : ""));
  // Not sent: refused before the Set, or the end was out of reach.
  if (skipped || (!st.isOk() && st.code() == ErrorCode::kUnavailable)) return done(notApplied);
  ++b_.stats_.staleDisablesUndone;
  // What the Get read at that end: Disabled or not (unset: no answer).
  auto readDisabled = std::make_shared<std::optional<bool>>();
  b_.writePort(
      end,
      [readDisabled](const PortInfo& before) -> Result<PortInfoEdit> {
        *readDisabled = before.phys == PhysState::kDisabled;
        if (!**readDisabled) return Status(ErrorCode::kNotFound, "not Disabled: nothing to undo");
        return PortInfoEdit{PhysState::kPolling, 0};
      },
      [this, l, end, readDisabled, notApplied, done = std::move(done)](Result<PortInfoChange> r) {
        if (r) {
          if (b_.setObserver_) b_.setObserver_(PortSetEvent{end, PhysState::kPolling, 0, 0});
          return done(notApplied);
        }
        if (*readDisabled == false) return done(notApplied);
        // Disabled here (or unknown): held down by ebb at this end until a
        // Polling Set gets through. The turn-on's poll stops: it cannot train.
        IbBackend::LinkRecord& rec = b_.rec(l);
        ++rec.gen;
        rec.up = false;
        rec.enabling = false;
        b_.recomputeRoutes();
        markDisabled(l, end);
        b_.keepReenabling(l, r.status());
        if (b_.callback_) {
          const fabric::Link& L = b_.topo_.link(l);
          if (!L.lowerIsHost) b_.callback_->onLinkStateChanged(L.lower, LinkPowerState::kOff);
          b_.callback_->onLinkStateChanged(L.upper, LinkPowerState::kOff);
        }
        done(LinkPowerState::kOff);
      });
}

void DisablePortGating::turnOn(LinkId l, Done<LinkPowerState> done) {
  if (b_.pending_.count(l)) {
    // Already pending (a fail-safe's re-enable not delivered): one Set on
    // the wire, not two; it goes now, and its LinkUp reaches the agents.
    b_.retryReenableNow(l);
    return b_.later<LinkPowerState>(std::move(done), LinkPowerState::kTurningOn);
  }
  if (!b_.rec(l).disabledEnd && b_.rec(l).up && !b_.rec(l).absent) {
    // Already up, and no end held down by ebb: brought back meanwhile by a
    // hop of another re-enable (enableLink, reachOut). A Polling Set on an
    // up port would only bounce the link.
    return b_.later<LinkPowerState>(std::move(done), LinkPowerState::kOn);
  }
  if (b_.rec(l).pollingSet || b_.rec(l).enabling) {
    // A Polling Set already on the wire, or landed and waiting for LinkUp
    // (a recovery's turn-on, then a fail-safe's or another re-homing's):
    // one Set per link, not one per asker. Its LinkUp reaches every agent;
    // if it fails, the link becomes a pending re-enable (keepReenabling).
    return b_.later<LinkPowerState>(std::move(done), LinkPowerState::kTurningOn);
  }
  b_.rec(l).reenabling = true;
  enableLink(l, b_.sched_.now() + b_.opts_.restoreTimeoutPs,
             [this, l, done = std::move(done)](Result<LinkPowerState> r) {
               b_.rec(l).reenabling = false;
               // Not delivered: the link stays pending and is tried again
               // (ib_reenable.cpp); the agent hears of the failure now.
               if (!r) b_.keepReenabling(l, r.status());
               done(std::move(r));
             });
}

void DisablePortGating::forget(LinkId l) {
  b_.disabled_.erase(std::remove(b_.disabled_.begin(), b_.disabled_.end(), l), b_.disabled_.end());
  b_.rec(l).disabledEnd.reset();
  b_.heldChanged();
}

// The end to re-enable: the one ebb disabled (the other end cannot undo a
// Disabled port), for a link found Disabled the end that reads so, else the
// first reachable end.
std::optional<PortId> DisablePortGating::enableEnd(LinkId l) const {
  if (const std::optional<PortId> end = b_.rec(l).heldEnd()) return end;
  const fabric::Link& L = b_.topo_.link(l);
  for (PortId e : {L.lower, L.upper}) {
    if (b_.sw_[e.sw.value()].reachable) return e;
  }
  return std::nullopt;
}

// Sets Polling on the end of `l` ebb disabled. When that switch is dark
// (several failures, a whole switch among them, can leave every way to it
// on links disabled at their far ends, or further away), first re-enables,
// hop by hop, the shortest way to it over links ebb disabled, then waits
// until it is reachable again, up to `deadline`. A Set that fails because
// the switch went dark as it went out, or met a failure not yet known on its
// route, is tried again the same way.
void DisablePortGating::enableLink(LinkId l, TimePs deadline, Done<LinkPowerState> done) {
  // Brought back meanwhile another way while this one waited for reach (the
  // stop's restore waves, a hop of another re-enable), or its Set is on the
  // wire: one Polling Set per link. A second, landing on the trained link,
  // would take it down again (ibsim does; hardware retrains).
  const auto& now = b_.rec(l);
  if (now.pollingSet || now.enabling || (now.up && !now.disabledEnd)) {
    return b_.later<LinkPowerState>(std::move(done), now.up && !now.enabling
                                                         ? LinkPowerState::kOn
                                                         : LinkPowerState::kTurningOn);
  }
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
    b_.rec(l).pollingSet = true;
    return setPhys(
        *end, PhysState::kPolling,
        [this, l, end = *end, gen, deadline, done = std::move(done)](Status st) mutable {
          b_.rec(l).pollingSet = false;
          if (!st.isOk()) {
            // Out of reach by now, or no reply along a route
            // through a failure not yet taken in (the failed Set
            // probes that route): again once the view caught up.
            const bool dark = !b_.sw_[end.sw.value()].reachable;
            if ((dark || st.code() == ErrorCode::kTimeout) && b_.sched_.now() < deadline) {
              b_.sched_.after(b_.opts_.linkPollPs, agent::Phase::kBackend,
                              [this, l, deadline, done = std::move(done)]() mutable {
                                enableLink(l, deadline, std::move(done));
                              });
              return;
            }
            return done(st);
          }
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
  if (const std::optional<LinkId> m = firstHopTo(end->sw, l);
      m && !b_.rec(*m).pendingGate && !b_.rec(*m).reenabling && !b_.rec(*m).pollingSet &&
      !b_.rec(*m).enabling) {
    b_.rec(*m).pendingGate = true;
    enableLink(*m, deadline,
               [this, m = *m](Result<LinkPowerState>) { b_.rec(m).pendingGate = false; });
  }
  b_.sched_.after(b_.opts_.linkPollPs, agent::Phase::kBackend,
                  [this, l, deadline, done = std::move(done)]() mutable {
                    enableLink(l, deadline, std::move(done));
                  });
}

std::vector<LinkId> DisablePortGating::reachOut(const std::function<void(LinkId)>& onSet) {
  std::vector<LinkId> set;
  const TimePs deadline = b_.sched_.now() + b_.opts_.restoreTimeoutPs;
  for (std::uint32_t s = 0; s < b_.topo_.numSwitches(); ++s) {
    if (b_.sw_[s].reachable) continue;
    const std::optional<LinkId> m = firstHopTo(fabric::SwitchId(s), LinkId());
    // One Set per link: not one its own re-enable already sends.
    if (!m || b_.rec(*m).pendingGate || b_.rec(*m).reenabling || b_.rec(*m).pollingSet ||
        b_.rec(*m).enabling || std::find(set.begin(), set.end(), *m) != set.end()) {
      continue;
    }
    b_.rec(*m).pendingGate = true;
    set.push_back(*m);
    if (onSet) onSet(*m);
    // The agents hear of it once it trains (pollUntilUp, linkChanged).
    enableLink(*m, deadline,
               [this, m = *m](Result<LinkPowerState>) { b_.rec(m).pendingGate = false; });
  }
  return set;
}

std::optional<LinkId> DisablePortGating::firstHopTo(fabric::SwitchId target, LinkId skip) const {
  const fabric::Topology& t = b_.topo_;
  // Per switch, the link ebb re-enables first on the way to it (none for
  // the switches reachable now and those reached over links that are up).
  std::vector<std::optional<LinkId>> first(t.numSwitches());
  std::vector<char> seen(t.numSwitches(), 0);
  std::vector<fabric::SwitchId> queue;
  for (std::uint32_t s = 0; s < t.numSwitches(); ++s) {
    if (b_.sw_[s].reachable) {
      seen[s] = 1;
      queue.push_back(fabric::SwitchId(s));
    }
  }
  for (std::size_t q = 0; q < queue.size(); ++q) {
    const fabric::SwitchId s = queue[q];
    if (s == target) return first[s.value()];
    for (const fabric::Port& p : t.sw(s).ports) {
      if (!p.link.valid() || p.link == skip) continue;
      const fabric::Link& L = t.link(p.link);
      if (L.lowerIsHost) continue;
      const fabric::SwitchId far = L.lower.sw == s ? L.upper.sw : L.lower.sw;
      if (seen[far.value()]) continue;
      const IbBackend::LinkRecord& r = b_.rec(p.link);
      // Over a link that is up (or set Polling: a hop already under way),
      // or one disabled here (only that end brings it back); a failed link
      // (down, not disabled) is no way.
      const bool up = r.up || r.enabling || r.pollingSet;
      const std::optional<PortId> gate = r.heldEnd();
      const bool gatedHere = !up && gate && gate->sw == s;
      if (!up && !gatedHere) continue;
      seen[far.value()] = 1;
      first[far.value()] = first[s.value()] ? first[s.value()]
                           : gatedHere      ? std::optional<LinkId>(p.link)
                                            : std::nullopt;
      queue.push_back(far);
    }
  }
  return std::nullopt;
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
  bool outOfReach = false;
  for (LinkId l : std::vector<LinkId>(b_.disabled_)) {
    if (r->inFlight.count(l)) continue;
    // Another re-enable's Set is on the wire: one per link. If it fails,
    // the next wave sends this one.
    if (b_.rec(l).pollingSet) continue;
    const std::optional<PortId> end = enableEnd(l);
    if (!end || !b_.sw_[end->sw.value()].reachable) {
      if (end) {
        r->why[l] =
            fmt::format("the end to re-enable ({}) is out of reach", b_.topo_.describePort(*end));
      }
      outOfReach = true;
      continue;  // a later wave
    }
    r->inFlight.insert(l);
    ++b_.rec(l).gen;
    // On the wire: a turn-on meanwhile (a recovery's, waiting for this end
    // to come into reach) sends nothing more (enableLink, turnOn).
    b_.rec(l).pollingSet = true;
    setPhys(*end, PhysState::kPolling, [this, r, l, end = *end](Status s) {
      r->inFlight.erase(l);
      b_.rec(l).pollingSet = false;
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
  // A failed cable toward that end may have been repaired with no trap to
  // tell: read the failed links from their ends in reach, so any route
  // that works now opens (one re-probe at a time).
  if (outOfReach) b_.reprobeFailedLinks([](Result<std::vector<PortChange>>) {});
  // Links another re-enable set Polling meanwhile are not back until LinkUp either.
  for (std::size_t l = 0; l < b_.links_.size(); ++l) {
    if (b_.links_[l].enabling) r->awaitingUp.insert(LinkId(static_cast<std::uint32_t>(l)));
  }
  const bool allUp = std::all_of(r->awaitingUp.begin(), r->awaitingUp.end(),
                                 [this](LinkId l) { return b_.rec(l).up; });
  if (b_.disabled_.empty() && r->inFlight.empty() && allUp) return then();
  b_.sched_.after(b_.opts_.linkPollPs, agent::Phase::kBackend,
                  [this, r, then = std::move(then)] { wave(r, then); });
}

}  // namespace ebb::ib
