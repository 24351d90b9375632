// Gating: applyLinkState checks the port, picks the strategy for the link
// and keeps the shortcuts common to both (already so, busy, dry run).
#include <fmt/format.h>

#include "ib_backend/gating_disable_port.h"
#include "ib_backend/gating_reduce_width.h"
#include "ib_backend/ib_backend.h"

namespace ebb::ib {

using agent::LinkPowerState;
using fabric::LinkId;
using fabric::PortId;

GatingStrategy& IbBackend::strategyFor(LinkId l) {
  // Width reduction keeps the link up; a link found down is enabled as in
  // the disable mode.
  if (opts_.action == GatingAction::kReduceWidth && (rec(l).up || rec(l).narrowed)) {
    return *width_;
  }
  return *disable_;
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
  if (rec(l).absent) {
    // Not in the fabric as configured (topologySurvey): never Set. It reads
    // off; turning it on goes no further than kTurningOn.
    return later<LinkPowerState>(std::move(done),
                                 on ? LinkPowerState::kTurningOn : LinkPowerState::kOff);
  }
  GatingStrategy& g = strategyFor(l);
  const bool off = g.readsOff(l);
  if (!on && off) return later<LinkPowerState>(std::move(done), LinkPowerState::kOff);
  if (on && !off) return later<LinkPowerState>(std::move(done), LinkPowerState::kOn);
  if (Status busy = g.busy(l); !busy.isOk()) {
    return later<LinkPowerState>(std::move(done), std::move(busy));
  }
  if (opts_.dryRun) {
    ++stats_.setsSuppressed;
    return later<LinkPowerState>(std::move(done), on ? LinkPowerState::kOn : LinkPowerState::kOff);
  }
  if (on) return g.turnOn(l, std::move(done));
  // Pending re-enables go out before any new turn-off: refused (the link
  // stays on), and the pending ones are tried at once.
  if (Status pending = reenablesPendingRefusal(); !pending.isOk()) {
    retryPendingReenables();
    return later<LinkPowerState>(std::move(done), std::move(pending));
  }
  g.turnOff(l, std::move(done));
}

}  // namespace ebb::ib
