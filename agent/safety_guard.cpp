#include "agent/safety_guard.h"

#include <fmt/format.h>

namespace ebb::agent {

SafetyGuard::SafetyGuard(const fabric::Topology& topo, const fabric::MinimalTree& mt,
                         fabric::LinkStates initial)
    : topo_(topo),
      mt_(mt),
      states_(std::move(initial)),
      conn_(topo),
      faults_(topo),
      reach_(topo),
      gate_(topo.numLinks()) {}

void SafetyGuard::setInBand(InBandControl control) {
  if (!control.controllable.empty()) control.controllable.resize(topo_.numSwitches(), 0);
  inBand_ = std::move(control);
}

std::optional<fabric::PortId> SafetyGuard::gateEnd(fabric::LinkId link) const {
  if (!inBand_ || link.value() >= gate_.size() || !gate_[link.value()].valid()) return std::nullopt;
  const fabric::Link& L = topo_.link(link);
  return L.lower.sw == gate_[link.value()] ? L.lower : L.upper;
}

Status SafetyGuard::checkTurnOff(fabric::LinkId link, fabric::Direction dir) {
  ++checks_;
  if (gate_fn_) {
    if (Status g = gate_fn_(); !g.isOk()) return refuse(g);
  }
  const char* d = dir == fabric::Direction::kUp ? "up" : "down";
  if (mt_.containsLink(link)) {
    return refuse(
        {ErrorCode::kInvalidArgument,
         fmt::format("refused: {} ({}) is a minimal-tree link", topo_.describeLink(link), d)});
  }
  if (!states_.isOn(link, dir)) return Status::ok();
  states_.set(link, dir, false);
  const auto pair = disconnectedPair();
  states_.set(link, dir, true);
  if (pair) {
    return refuse({ErrorCode::kInvalidArgument,
                   fmt::format("refused: turning off {} ({}) leaves {}", topo_.describeLink(link),
                               d, conn_.describe(*pair))});
  }
  return Status::ok();
}

Status SafetyGuard::checkTurnOffLink(fabric::LinkId link) {
  ++checks_;
  if (gate_fn_) {
    if (Status g = gate_fn_(); !g.isOk()) return refuse(g);
  }
  if (mt_.containsLink(link)) {
    return refuse({ErrorCode::kInvalidArgument,
                   fmt::format("refused: {} is a minimal-tree link", topo_.describeLink(link))});
  }
  const bool up = states_.isOn(link, fabric::Direction::kUp);
  const bool down = states_.isOn(link, fabric::Direction::kDown);
  states_.setLink(link, false);
  const auto pair = disconnectedPair();
  states_.set(link, fabric::Direction::kUp, up);
  states_.set(link, fabric::Direction::kDown, down);
  if (pair) {
    return refuse({ErrorCode::kInvalidArgument,
                   fmt::format("refused: turning off {} leaves {}", topo_.describeLink(link),
                               conn_.describe(*pair))});
  }
  if (Status s = checkManagementReach(link); !s.isOk()) return refuse(s);
  if (inBand_) {
    if (Status s = chooseGate(link); !s.isOk()) return refuse(s);
  }
  return Status::ok();
}

// Every switch with a switch link still on must stay in reach of management
// once `without` is off.
Status SafetyGuard::checkManagementReach(fabric::LinkId without) {
  if (!inBand_) return Status::ok();
  const std::vector<char>& seen = reach_.reachNow(view(states_), without);
  for (std::size_t i = 0; i < topo_.numSwitches(); ++i) {
    if (seen[i]) continue;
    for (const fabric::Port& p : topo_.switches()[i].ports) {
      if (p.role != fabric::PortRole::kUnused && p.link != without && topo_.isSwitchLink(p.link) &&
          states_.isFullyOn(p.link)) {
        return {ErrorCode::kInvalidArgument,
                fmt::format("refused: turning off {} leaves {} (links still on) out of reach of "
                            "the management port",
                            topo_.describeLink(without), topo_.switches()[i].name)};
      }
    }
  }
  return Status::ok();
}

// The end to disable: reachable once the link is off and allow-listed, the
// lower end first (it keeps the upper switch's ports for the tree); with
// kSingleLink, the first end after which the single-failure proof holds.
void SafetyGuard::assumeFaults(const fabric::LinkStates& states) {
  assumed_ = faults_;
  if (faults_.empty()) return;
  const std::vector<char>& seen = reach_.reachNow(view(states));
  for (std::size_t i = 0; i < topo_.numSwitches(); ++i) {
    const fabric::SwitchId s(static_cast<std::uint32_t>(i));
    if (seen[i] || faults_.switchFailed(s)) continue;
    for (const fabric::Port& p : topo_.sw(s).ports) {
      if (p.role != fabric::PortRole::kUnused && faults_.linkFailed(p.link)) {
        assumed_.failSwitch(topo_, s);
        break;
      }
    }
  }
}

Status SafetyGuard::chooseGate(fabric::LinkId link) {
  trial_ = states_;
  trial_.setLink(link, false);
  const fabric::Link& L = topo_.link(link);
  assumeFaults(states_);
  const fabric::InBandView now = assumedView(states_, gate_);
  std::string why;
  for (fabric::PortId end : {L.lower, L.upper}) {
    const fabric::SwitchId s = end.sw;
    const std::string& name = topo_.sw(s).name;
    if (!inBand_->controllable.empty() && !inBand_->controllable[s.value()]) {
      why += fmt::format("{}{} is not allow-listed", why.empty() ? "" : "; ", name);
      continue;
    }
    if (!reach_.reachNow(view(trial_))[s.value()]) {
      why += fmt::format("{}{} would be out of reach", why.empty() ? "" : "; ", name);
      continue;
    }
    const fabric::SwitchId before = gate_[link.value()];
    gate_[link.value()] = s;
    if (inBand_->resilience == Resilience::kNone) return Status::ok();
    const auto gap = reach_.singleFailureGap(assumedView(trial_, gate_), &now, conn_);
    if (!gap) return Status::ok();
    gate_[link.value()] = before;
    why += fmt::format("{}disabled at {}: {}", why.empty() ? "" : "; ", name, *gap);
  }
  return {ErrorCode::kInvalidArgument,
          fmt::format("refused: turning off {}{}: {}", topo_.describeLink(link),
                      inBand_->resilience == Resilience::kNone ? ", no end can be disabled"
                                                               : " (single-failure resilience)",
                      why)};
}

std::vector<fabric::LinkId> SafetyGuard::linksForResilience(
    const std::vector<fabric::LinkId>& turningOn) {
  if (!inBand_ || inBand_->resilience != Resilience::kSingleLink) return {};
  trial_ = states_;
  std::vector<fabric::SwitchId> gates = gate_;
  for (fabric::LinkId l : turningOn) {
    trial_.setLink(l, true);
    gates[l.value()] = {};
  }
  assumeFaults(trial_);
  return reach_.linksForSingleFailure(assumedView(trial_, gates), conn_);
}

Status RateLimits::validate() const {
  if (maxOffPerWindow < 0) return {ErrorCode::kInvalidArgument, "max_off_per_window: must be >= 0"};
  if (maxOffPerWindow > 0 && windowPs <= 0) {
    return {ErrorCode::kInvalidArgument, "rate window: must be > 0 when max_off_per_window is set"};
  }
  if (minDwellPs < 0) return {ErrorCode::kInvalidArgument, "min_dwell: must be >= 0"};
  if (Status s = flap.validate(); !s.isOk()) return s;
  return Status::ok();
}

void SafetyGuard::forgetOffsBefore(TimePs now) {
  while (!offTimes_.empty() && limits_.windowPs > 0 &&
         offTimes_.front() <= now - limits_.windowPs) {
    offTimes_.pop_front();
  }
}

void SafetyGuard::noteOff(fabric::LinkId link, TimePs now) {
  flap_.noteOff(link, now);
  // Only a window limit reads the history: without one, keeping it would
  // grow without bound in a long-running daemon.
  if (limits_.maxOffPerWindow <= 0) return;
  offTimes_.push_back(now);
  forgetOffsBefore(now);
}

Status SafetyGuard::checkRate(fabric::LinkId link, TimePs now) {
  if (Status s = flap_.check(link, now, topo_.describeLink(link)); !s.isOk()) return refuse(s);
  forgetOffsBefore(now);
  if (limits_.maxOffPerWindow > 0 &&
      offTimes_.size() >= static_cast<std::size_t>(limits_.maxOffPerWindow)) {
    return refuse({ErrorCode::kInvalidArgument,
                   fmt::format("rate limit: {} links already turned off in the last {:g} ms",
                               offTimes_.size(), toMilliseconds(limits_.windowPs))});
  }
  if (limits_.minDwellPs > 0 && link.value() < onSince_.size() && onSince_[link.value()] >= 0 &&
      now - onSince_[link.value()] < limits_.minDwellPs) {
    return refuse(
        {ErrorCode::kInvalidArgument,
         fmt::format("rate limit: {} came on {:g} ms ago (minimum dwell {:g} ms)",
                     topo_.describeLink(link), toMilliseconds(now - onSince_[link.value()]),
                     toMilliseconds(limits_.minDwellPs))});
  }
  return Status::ok();
}

void SafetyGuard::noteOn(fabric::LinkId link, TimePs now) {
  if (onSince_.size() != topo_.numLinks()) onSince_.assign(topo_.numLinks(), -1);
  onSince_[link.value()] = now;
}

Status SafetyGuard::checkAll() {
  const auto pair = disconnectedPair();
  if (!pair) return Status::ok();
  return {ErrorCode::kInternal, "connectivity broken: " + conn_.describe(*pair)};
}

}  // namespace ebb::agent
