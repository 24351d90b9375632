// Restore: every link this run gated comes back, the reduced widths first
// (they stay up: no waves needed), then the disabled links in waves. The run
// is bounded by wall time on the scheduler: at restoreTimeoutPs it ends with
// every link not back, whatever is still on the wire.
#include <fmt/format.h>

#include "ib_backend/gating_disable_port.h"
#include "ib_backend/gating_reduce_width.h"
#include "ib_backend/ib_backend.h"

namespace ebb::ib {

using fabric::LinkId;

std::vector<LinkId> IbBackend::reachOut(RestoreObserver onSet) {
  if (opts_.dryRun) return {};
  return disable_->reachOut([this, &onSet](LinkId l) {
    if (onSet) onSet(l, rec(l).disabledEnd.value_or(topo_.link(l).lower));
  });
}

void IbBackend::restoreAll(std::function<void(Status)> done, RestoreObserver onSet) {
  restoring_ = true;  // the waves take over the pending re-enables
  auto r = std::make_shared<RestoreRun>();
  r->done = std::move(done);
  r->onSet = std::move(onSet);
  r->deadline = sched_.now() + opts_.restoreTimeoutPs;
  // Links an agent set Polling before the stop are not back until LinkUp either.
  for (std::size_t l = 0; l < links_.size(); ++l) {
    if (links_[l].enabling) r->awaitingUp.insert(LinkId(static_cast<std::uint32_t>(l)));
  }
  sched_.after(opts_.restoreTimeoutPs, agent::Phase::kBackend,
               [this, r] { finishRestore(r, /*deadline=*/true); });
  width_->restore(
      r, [this, r] { disable_->restore(r, [this, r] { finishRestore(r, /*deadline=*/false); }); });
}

// Once: OK when every link is back, else the links left and why.
void IbBackend::finishRestore(const std::shared_ptr<RestoreRun>& r, bool deadline) {
  if (r->over) return;
  r->over = true;
  std::vector<std::string> left;
  auto add = [&](LinkId l, const std::string& dflt) {
    const auto it = r->why.find(l);
    left.push_back(
        fmt::format("{}: {}", topo_.describeLink(l), it != r->why.end() ? it->second : dflt));
  };
  for (LinkId l : disabled_) {
    const auto end = rec(l).disabledEnd;
    add(l, end && !sw_[end->sw.value()].reachable
               ? fmt::format("the end to re-enable ({}) is out of reach", topo_.describePort(*end))
               : std::string("its Polling Set was not answered in time"));
  }
  for (LinkId l : r->awaitingUp) {
    if (!rec(l).up) add(l, "set Polling, no LinkUp");
  }
  for (std::size_t l = 0; l < links_.size(); ++l) {
    const auto& n = links_[l].narrowed;
    if (n && n->bySelf) add(LinkId(static_cast<std::uint32_t>(l)), "its width was not restored");
  }
  if (left.empty()) return r->done(Status::ok());
  std::string list;
  for (const std::string& s : left)
    list += "\n  " + s;
  r->gaveUp = Status(r->firstError.isOk() ? ErrorCode::kUnavailable : r->firstError.code(),
                     fmt::format("{} links not back up {}:{}", left.size(),
                                 deadline ? fmt::format("after {} s (restore_timeout_ms)",
                                                        toSeconds(opts_.restoreTimeoutPs))
                                          : std::string("(gave up)"),
                                 list));
  r->done(r->gaveUp);
}

}  // namespace ebb::ib
