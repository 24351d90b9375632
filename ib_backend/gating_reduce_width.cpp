#include "ib_backend/gating_reduce_width.h"

#include <fmt/format.h>

namespace ebb::ib {

using agent::LinkPowerState;
using fabric::LinkId;
using fabric::PortId;

namespace {
// A port someone narrowed: only the narrowest width enabled while it supports wider.
bool readsNarrowed(const PortInfo& pi) {
  const std::uint8_t narrowest = narrowestWidth(pi.widthSupported);
  return pi.widthEnabled == narrowest && (pi.widthSupported & ~narrowest) != 0;
}
}  // namespace

bool ReduceWidthGating::readsOff(LinkId l) const {
  return b_.rec(l).narrowed.has_value();
}

Status ReduceWidthGating::busy(LinkId l) const {
  if (!b_.rec(l).widthBusy) return Status::ok();
  return Status(ErrorCode::kUnavailable,
                fmt::format("link {}: a width Set is still on the wire", b_.topo_.describeLink(l)));
}

// The width to restore an end to is the far end's, when that one was not
// reduced, else its LinkWidthSupported (what OpenSM's default
// force_link_width 255 writes on real hardware).
void ReduceWidthGating::recover() {
  const fabric::Topology& topo = b_.topo_;
  for (std::size_t i = 0; i < topo.numLinks(); ++i) {
    const fabric::Link& L = topo.links()[i];
    const LinkId l(static_cast<std::uint32_t>(i));
    if (L.lowerIsHost || !b_.rec(l).up) continue;
    if (!b_.sw_[L.lower.sw.value()].visited || !b_.sw_[L.upper.sw.value()].visited) continue;
    const PortInfo& lo = b_.sw_[L.lower.sw.value()].ports[L.lower.index];
    const PortInfo& up = b_.sw_[L.upper.sw.value()].ports[L.upper.index];
    Narrowed n;
    if (readsNarrowed(lo)) {
      n.ends.push_back(
          {L.lower, lo.widthEnabled, readsNarrowed(up) ? lo.widthSupported : up.widthEnabled});
    }
    if (readsNarrowed(up)) {
      n.ends.push_back(
          {L.upper, up.widthEnabled, readsNarrowed(lo) ? up.widthSupported : lo.widthEnabled});
    }
    if (!n.ends.empty()) b_.rec(l).narrowed = std::move(n);
  }
}

void ReduceWidthGating::turnOn(LinkId l, Done<LinkPowerState> done) {
  b_.rec(l).widthBusy = true;
  widenLink(l, [this, l, done = std::move(done)](Status st) {
    b_.rec(l).widthBusy = false;
    if (!st.isOk()) return done(st);
    if (b_.callback_) b_.callback_->onLinkStateChanged(b_.topo_.link(l).upper, LinkPowerState::kOn);
    done(LinkPowerState::kOn);
  });
}

void ReduceWidthGating::turnOff(LinkId l, Done<LinkPowerState> done) {
  const fabric::Link& L = b_.topo_.link(l);
  std::vector<PortId> ends;
  for (PortId e : {L.lower, L.upper}) {
    if (b_.sw_[e.sw.value()].reachable && b_.allowed(e.sw)) ends.push_back(e);
  }
  if (ends.empty()) {
    return b_.later<LinkPowerState>(
        std::move(done),
        Status(ErrorCode::kUnavailable,
               fmt::format("link {}: neither end is both reachable and allow-listed",
                           b_.topo_.describeLink(l))));
  }
  b_.rec(l).widthBusy = true;
  narrowEnds(l, std::move(ends), {}, [this, l, done = std::move(done)](Status st) {
    b_.rec(l).widthBusy = false;
    b_.heldChanged();
    if (!st.isOk()) return done(st);
    if (b_.callback_) {
      b_.callback_->onLinkStateChanged(b_.topo_.link(l).upper, LinkPowerState::kOff);
    }
    done(LinkPowerState::kOff);
  });
}

// Narrows the ends one after the other. What was narrowed is recorded even
// when a later end fails, so that turning the link on (or a fail-safe)
// restores it.
void ReduceWidthGating::narrowEnds(LinkId l, std::vector<PortId> ends, std::vector<NarrowEnd> did,
                                   std::function<void(Status)> done) {
  if (ends.empty()) {
    b_.rec(l).narrowed = Narrowed{std::move(did), true};
    return done(Status::ok());
  }
  const PortId end = ends.front();
  ends.erase(ends.begin());
  setWidth(end, 0,
           [this, l, ends = std::move(ends), did = std::move(did),
            done = std::move(done)](Result<NarrowEnd> r) mutable {
             if (!r) {
               if (!did.empty()) b_.rec(l).narrowed = Narrowed{std::move(did), true};
               return done(r.status());
             }
             ++b_.stats_.widthReduced;
             did.push_back(*r);
             narrowEnds(l, std::move(ends), std::move(did), std::move(done));
           });
}

// Restores every reduced end of `l` to its width before, all at once; ends
// that fail stay recorded (a later attempt or the exit restore tries again).
void ReduceWidthGating::widenLink(LinkId l, std::function<void(Status)> done) {
  const std::optional<Narrowed>& n = b_.rec(l).narrowed;
  if (!n) return done(Status::ok());
  const std::vector<NarrowEnd> ends = n->ends;
  const bool bySelf = n->bySelf;
  fanIn<NarrowEnd>(
      ends.size(),
      [this, ends](std::size_t i, std::function<void(Result<NarrowEnd>)> answer) {
        setWidth(ends[i].end, ends[i].restoreTo, [this, answer](Result<NarrowEnd> r) {
          if (r) ++b_.stats_.widthRestored;
          answer(std::move(r));
        });
      },
      [this, l, ends, bySelf, done = std::move(done)](Gathered<NarrowEnd> g) {
        std::vector<NarrowEnd> failed;
        for (std::size_t i = 0; i < ends.size(); ++i) {
          if (!g.results[i]) {
            failed.push_back(ends[i]);
          } else {
            b_.widened(ends[i].end);
          }
        }
        if (failed.empty()) {
          b_.rec(l).narrowed.reset();
          b_.heldChanged();
          return done(Status::ok());
        }
        b_.rec(l).narrowed = Narrowed{std::move(failed), bySelf};
        b_.heldChanged();
        done(g.firstError);
      });
}

// Read-modify-write of one port's LinkWidthEnabled (0: its narrowest
// supported width). Completes with the width written and the one read before.
void ReduceWidthGating::setWidth(PortId end, std::uint8_t width, Done<NarrowEnd> done) {
  b_.writePort(
      end,
      [this, end, width](const PortInfo& before) -> Result<PortInfoEdit> {
        const std::uint8_t want = width != 0 ? width : narrowestWidth(before.widthSupported);
        if (before.widthSupported != 0 && (want & ~before.widthSupported) != 0) {
          return Status(ErrorCode::kInvalidArgument,
                        fmt::format("LinkWidthEnabled {} is not within LinkWidthSupported {}",
                                    linkWidthName(want), linkWidthName(before.widthSupported)));
        }
        // A narrowing is recorded with the width to restore before it goes.
        if (width == 0) {
          if (Status st = b_.holdBeforeSet({end, true, before.widthEnabled}); !st.isOk()) {
            return st;
          }
        }
        return PortInfoEdit{PhysState::kNoChange, want};
      },
      [this, end, done = std::move(done)](Result<PortInfoChange> r) {
        if (!r) return done(r.status());
        const std::uint8_t want = r->edit.widthEnabled;
        if (r->after.widthEnabled != want) {
          return done(Status(
              ErrorCode::kInvalidArgument,
              fmt::format("{} reads LinkWidthEnabled {} after Set {}", b_.topo_.describePort(end),
                          linkWidthName(r->after.widthEnabled), linkWidthName(want))));
        }
        b_.sw_[end.sw.value()].ports[end.index] = r->after;
        if (b_.setObserver_) {
          b_.setObserver_(PortSetEvent{end, PhysState::kNoChange, want, r->before.widthEnabled});
        }
        done(NarrowEnd{end, want, r->before.widthEnabled});
      });
}

void ReduceWidthGating::restore(std::shared_ptr<RestoreRun> run, std::function<void()> then) {
  std::vector<LinkId> narrow;
  for (std::size_t l = 0; l < b_.links_.size(); ++l) {
    const auto& n = b_.links_[l].narrowed;
    if (n && n->bySelf) narrow.emplace_back(static_cast<std::uint32_t>(l));
  }
  if (narrow.empty()) {
    b_.sched_.after(0, agent::Phase::kBackend, std::move(then));
    return;
  }
  fanIn<bool>(
      narrow.size(),
      [this, run, narrow](std::size_t i, std::function<void(Result<bool>)> answer) {
        const LinkId l = narrow[i];
        const PortId first = b_.rec(l).narrowed->ends.front().end;
        widenLink(l, [run, l, first, answer](Status s) {
          if (!s.isOk()) {
            run->why[l] = "restoring its width failed: " + s.message();
            return answer(s);
          }
          if (run->onSet) run->onSet(l, first);
          answer(true);
        });
      },
      [run, then = std::move(then)](Gathered<bool> g) {
        if (!g.firstError.isOk() && run->firstError.isOk()) run->firstError = g.firstError;
        if (!run->over) then();
      });
}

std::optional<PortChange> ReduceWidthGating::takeIn(PortId port, const PortInfo& pi) {
  const LinkId l = b_.topo_.sw(port.sw).ports[port.index].link;
  IbBackend::LinkRecord& r = b_.rec(l);
  if (!r.narrowed || r.widthBusy) return std::nullopt;
  for (const NarrowEnd& e : r.narrowed->ends) {
    if (e.end != port || pi.widthEnabled == e.widthEnabled) continue;
    PortChange c{port, fmt::format("LinkWidthEnabled {} (was {}: reset by someone else)",
                                   linkWidthName(pi.widthEnabled), linkWidthName(e.widthEnabled))};
    // The link counts as on again (OpenSM resets both ends); an other end
    // this run narrowed stays in the state file until a later start reads
    // it wide, in case it was not reset.
    b_.widened(port);
    for (const NarrowEnd& other : r.narrowed->ends) {
      if (other.end != port && r.narrowed->bySelf) {
        b_.intents_.insert({other.end, true, other.restoreTo});
      }
    }
    r.narrowed.reset();
    b_.heldChanged();
    if (b_.callback_) {
      const fabric::Link& L = b_.topo_.link(l);
      if (!L.lowerIsHost) b_.callback_->onLinkStateChanged(L.lower, LinkPowerState::kOn);
      b_.callback_->onLinkStateChanged(L.upper, LinkPowerState::kOn);
    }
    return c;
  }
  return std::nullopt;
}

}  // namespace ebb::ib
