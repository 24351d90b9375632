#include "agent/safety_guard.h"

#include <fmt/format.h>

namespace ebb::agent {

SafetyGuard::SafetyGuard(const fabric::Topology& topo, const fabric::MinimalTree& mt,
                         fabric::LinkStates initial)
    : topo_(topo), mt_(mt), states_(std::move(initial)), conn_(topo) {}

Status SafetyGuard::checkTurnOff(fabric::LinkId link, fabric::Direction dir) {
  ++checks_;
  const char* d = dir == fabric::Direction::kUp ? "up" : "down";
  if (mt_.containsLink(link)) {
    ++refused_;
    return {ErrorCode::kInvalidArgument,
            fmt::format("refused: {} ({}) is a minimal-tree link", topo_.describeLink(link), d)};
  }
  if (!states_.isOn(link, dir)) return Status::ok();
  states_.set(link, dir, false);
  const auto pair = conn_.findDisconnectedPair(states_);
  states_.set(link, dir, true);
  if (pair) {
    ++refused_;
    return {ErrorCode::kInvalidArgument,
            fmt::format("refused: turning off {} ({}) leaves {}", topo_.describeLink(link), d,
                        conn_.describe(*pair))};
  }
  return Status::ok();
}

Status SafetyGuard::checkAll() {
  const auto pair = conn_.findDisconnectedPair(states_);
  if (!pair) return Status::ok();
  return {ErrorCode::kInternal, "connectivity broken: " + conn_.describe(*pair)};
}

}  // namespace ebb::agent
