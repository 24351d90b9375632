#include "agent/safety_guard.h"

#include <fmt/format.h>

namespace ebb::agent {

SafetyGuard::SafetyGuard(const fabric::Topology& topo, const fabric::MinimalTree& mt,
                         fabric::LinkStates initial)
    : topo_(topo), mt_(mt), states_(std::move(initial)), conn_(topo), faults_(topo) {}

Status SafetyGuard::checkTurnOff(fabric::LinkId link, fabric::Direction dir) {
  ++checks_;
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
  return Status::ok();
}

// Breadth first over switch links that are on (both directions), without
// `without`: every switch with a switch link still on must be reached.
Status SafetyGuard::checkManagementReach(fabric::LinkId without) const {
  if (!mgmtRoot_) return Status::ok();
  std::vector<char> seen(topo_.numSwitches(), 0);
  std::vector<fabric::SwitchId> stack{*mgmtRoot_};
  seen[mgmtRoot_->value()] = 1;
  auto on = [&](fabric::LinkId l) {
    return l != without && topo_.isSwitchLink(l) && states_.isFullyOn(l);
  };
  while (!stack.empty()) {
    const fabric::SwitchId s = stack.back();
    stack.pop_back();
    for (const fabric::Port& p : topo_.sw(s).ports) {
      if (p.role == fabric::PortRole::kUnused || !on(p.link)) continue;
      const fabric::Link& L = topo_.link(p.link);
      const fabric::SwitchId peer = L.lower.sw == s ? L.upper.sw : L.lower.sw;
      if (seen[peer.value()]) continue;
      seen[peer.value()] = 1;
      stack.push_back(peer);
    }
  }
  for (std::size_t i = 0; i < topo_.numSwitches(); ++i) {
    if (seen[i]) continue;
    for (const fabric::Port& p : topo_.switches()[i].ports) {
      if (p.role != fabric::PortRole::kUnused && on(p.link)) {
        return {ErrorCode::kInvalidArgument,
                fmt::format("refused: turning off {} leaves {} (links still on) out of reach of "
                            "the management port",
                            topo_.describeLink(without), topo_.switches()[i].name)};
      }
    }
  }
  return Status::ok();
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
