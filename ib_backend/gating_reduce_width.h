#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "ib_backend/gating_strategy.h"
#include "ib_backend/ib_backend.h"

namespace ebb::ib {

// GatingAction::kReduceWidth: the narrowest supported width written into
// PortInfo.LinkWidthEnabled at each end ebb may set (lower end first), after
// reading the width enabled there: that value, never an assumed one, is what
// brings the link back. The link stays up, so no route changes.
class ReduceWidthGating final : public GatingStrategy {
 public:
  using NarrowEnd = IbBackend::NarrowEnd;
  using Narrowed = IbBackend::Narrowed;
  explicit ReduceWidthGating(IbBackend& b) : b_(b) {}
  bool readsOff(fabric::LinkId l) const override;
  Status busy(fabric::LinkId l) const override;
  void turnOff(fabric::LinkId l, Done<agent::LinkPowerState> done) override;
  void turnOn(fabric::LinkId l, Done<agent::LinkPowerState> done) override;
  // Widens every link this run reduced, all at once (restoreAll).
  void restore(std::shared_ptr<RestoreRun> run, std::function<void()> then) override;
  // At start: links found at reduced width count as gated (off for the agents).
  void recover();
  // A re-read found `pi` at `port`: a reduced width someone else reset is a
  // change (the link counts as on again).
  std::optional<PortChange> takeIn(fabric::PortId port, const PortInfo& pi);

 private:
  void setWidth(fabric::PortId end, std::uint8_t width, Done<NarrowEnd> done);
  void narrowEnds(fabric::LinkId l, std::vector<fabric::PortId> ends, std::vector<NarrowEnd> did,
                  std::function<void(Status)> done);
  void widenLink(fabric::LinkId l, std::function<void(Status)> done);

  IbBackend& b_;
};

}  // namespace ebb::ib
