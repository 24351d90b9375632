#include "policies/gated_link.h"

#include <algorithm>

#include <fmt/format.h>

namespace ebb::policies {

namespace {
constexpr std::size_t idx(LinkPowerState s) {
  return static_cast<std::size_t>(s);
}
}  // namespace

GatedLink::GatedLink(TimePs tOn, TimePs tOff, LinkPowerState initial, TimePs start)
    : tOn_(tOn), tOff_(tOff), state_(initial), since_(start) {
  if (initial == LinkPowerState::kTurningOn || initial == LinkPowerState::kTurningOff) {
    pending_ = true;
    until_ = start + (initial == LinkPowerState::kTurningOn ? tOn : tOff);
  }
}

Status GatedLink::validateTiming(TimePs tOn, TimePs tOff, TimePs checkPeriod) {
  if (tOn < 0 || tOff < 0) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("gating times T_on={} ps, T_off={} ps break the rule T_on, T_off >= 0", tOn,
                        tOff)};
  }
  if (checkPeriod <= std::max(tOn, tOff)) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("check period {} ps breaks the rule period > max(T_on={} ps, T_off={} ps)",
                        checkPeriod, tOn, tOff)};
  }
  return Status::ok();
}

void GatedLink::advance(TimePs now) {
  if (pending_ && until_ <= now) {
    times_[idx(state_)] += until_ - since_;
    since_ = until_;
    state_ = state_ == LinkPowerState::kTurningOn ? LinkPowerState::kOn : LinkPowerState::kOff;
    pending_ = false;
  }
  if (now > since_) {
    times_[idx(state_)] += now - since_;
    since_ = now;
  }
}

TimePs GatedLink::request(bool on, TimePs now) {
  advance(now);
  const LinkPowerState target = on ? LinkPowerState::kOn : LinkPowerState::kOff;
  const LinkPowerState moving = on ? LinkPowerState::kTurningOn : LinkPowerState::kTurningOff;
  if (state_ == target) return now;
  if (state_ == moving) return until_;
  state_ = moving;
  pending_ = true;
  until_ = now + (on ? tOn_ : tOff_);
  if (until_ == now) advance(now);
  return until_;
}

LinkPowerState GatedLink::state(TimePs now) {
  advance(now);
  return state_;
}

const GatingTimes& GatedLink::times(TimePs now) {
  advance(now);
  return times_;
}

}  // namespace ebb::policies
