#include "agent/flap_damper.h"

#include <algorithm>

#include <fmt/format.h>

namespace ebb::agent {

Status FlapLimits::validate() const {
  if (limit < 0)
    return {ErrorCode::kInvalidArgument, fmt::format("flap_limit: must be >= 0 (is {})", limit)};
  if (limit > 0 && windowPs <= 0) {
    return {ErrorCode::kInvalidArgument, "flap_window: must be > 0 when flap_limit is set"};
  }
  if (holdPs < 0) return {ErrorCode::kInvalidArgument, "flap_hold: must be >= 0"};
  return Status::ok();
}

FlapDamper::History& FlapDamper::of(fabric::LinkId link) {
  if (link.value() >= links_.size()) links_.resize(link.value() + 1u);
  return links_[link.value()];
}

Status FlapDamper::check(fabric::LinkId link, TimePs now, const std::string& linkName) {
  if (limits_.limit <= 0) return Status::ok();
  History& h = of(link);
  if (h.holdUntil > now) {
    return {ErrorCode::kInvalidArgument, fmt::format("flap damping: {} is held on for {:g} ms more",
                                                     linkName, toMilliseconds(h.holdUntil - now))};
  }
  while (!h.offs.empty() && h.offs.front() <= now - limits_.windowPs)
    h.offs.pop_front();
  if (static_cast<int>(h.offs.size()) < limits_.limit) return Status::ok();
  // A quiet window since the last hold ended: the growth starts again.
  if (h.holdUntil >= 0 && now - h.holdUntil >= limits_.windowPs) h.streak = 0;
  const TimePs base = limits_.holdPs > 0 ? limits_.holdPs : limits_.windowPs;
  const TimePs hold = base << std::min(h.streak, 10);
  h.holdUntil = now + hold;
  h.endPending = true;
  ++h.streak;
  ++holds_;
  // The turn-offs stay in the window: a hold shorter than the window ends
  // in another (longer) one if they are still there, so a link never goes
  // off more than `limit` times within any window.
  return {
      ErrorCode::kInvalidArgument,
      fmt::format("flap damping: {} went off {} times within {:g} ms; held on for {:g} ms",
                  linkName, limits_.limit, toMilliseconds(limits_.windowPs), toMilliseconds(hold))};
}

std::vector<fabric::LinkId> FlapDamper::holdsEnded(TimePs now) {
  std::vector<fabric::LinkId> out;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    History& h = links_[i];
    if (!h.endPending || h.holdUntil > now) continue;
    h.endPending = false;
    out.push_back(fabric::LinkId(static_cast<std::uint32_t>(i)));
  }
  return out;
}

void FlapDamper::noteOff(fabric::LinkId link, TimePs now) {
  if (limits_.limit <= 0) return;
  of(link).offs.push_back(now);
}

std::size_t FlapDamper::heldAt(TimePs now) const {
  return static_cast<std::size_t>(std::count_if(
      links_.begin(), links_.end(), [now](const History& h) { return h.holdUntil > now; }));
}

}  // namespace ebb::agent
