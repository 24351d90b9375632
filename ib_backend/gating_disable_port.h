#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "ib_backend/gating_strategy.h"
#include "ib_backend/mad.h"

namespace ebb::ib {

class IbBackend;

// GatingAction::kDisablePort: PortPhysicalState Disabled at one end takes the
// link down whole; Polling at that same end brings it back and the link
// retrains (ebb re-reads the port until LinkUp). Also brings back a link
// found down, in either mode.
class DisablePortGating final : public GatingStrategy {
 public:
  explicit DisablePortGating(IbBackend& b) : b_(b) {}
  bool readsOff(fabric::LinkId l) const override;
  void turnOff(fabric::LinkId l, Done<agent::LinkPowerState> done) override;
  void turnOn(fabric::LinkId l, Done<agent::LinkPowerState> done) override;
  // Polling on every link this run disabled, in waves (restoreAll).
  void restore(std::shared_ptr<RestoreRun> run, std::function<void()> then) override;
  // The first hop toward each switch out of reach, set going (IbBackend::reachOut).
  std::vector<fabric::LinkId> reachOut(const std::function<void(fabric::LinkId)>& onSet);
  // Polling at the end ebb disabled; an end out of reach is waited for (and
  // the first hop toward it re-enabled) until `deadline`.
  void enableLink(fabric::LinkId l, TimePs deadline, Done<agent::LinkPowerState> done);

 private:
  // `stillWanted`, if set, is asked when the Set is about to go (after the
  // Get): false sends nothing and completes with kUnavailable.
  // `sent`, when given, turns true once the Set may have gone out (a
  // failure after that does not prove the port unchanged). `deadCable`,
  // when given, turns true (and nothing is sent, E_NOT_FOUND) if the Get
  // reads the port anything but LinkUp.
  void setPhys(fabric::PortId end, PhysState phys, std::function<void(Status)> done,
               std::function<bool()> stillWanted = {}, std::shared_ptr<bool> sent = {},
               std::shared_ptr<bool> deadCable = {});
  // `end` is the one ebb set Disabled: the link is in disabled_.
  void markDisabled(fabric::LinkId l, fabric::PortId end);
  // A turn-off whose Set a turn-on overtook: nothing to do if it was not
  // sent (`skipped`), else the end is set Polling again (or, if that fails,
  // held as disabled and re-enabled like any re-enable not delivered).
  void superseded(fabric::LinkId l, fabric::PortId end, const Status& st, bool skipped,
                  Done<agent::LinkPowerState> done);
  std::optional<fabric::PortId> enableEnd(fabric::LinkId l) const;
  // The first link to re-enable on the shortest way to `target` from the
  // switches reachable now, over links that are up and links ebb disabled
  // (each crossed from the end that can re-enable it); nullopt if none.
  std::optional<fabric::LinkId> firstHopTo(fabric::SwitchId target, fabric::LinkId skip) const;
  void pollUntilUp(fabric::LinkId l, fabric::PortId end);
  // The link is no longer disabled by ebb (Polling was set).
  void forget(fabric::LinkId l);
  void wave(std::shared_ptr<RestoreRun> run, std::function<void()> then);

  IbBackend& b_;
};

}  // namespace ebb::ib
