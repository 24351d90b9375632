#include "agent/virtual_scheduler.h"

#include <algorithm>

namespace ebb::agent {

namespace {
constexpr unsigned kPhaseShift = 56;
constexpr std::uint64_t kSlotBits = 32;
}  // namespace

// Task ids pack (sequence << 32 | slot) so cancel() can find the slot and tell
// a reused slot from the original task.
TaskId VirtualScheduler::at(TimePs when, Phase phase, Task task) {
  const std::uint64_t seq = ++sequence_;
  std::uint32_t slot;
  if (!freeSlots_.empty()) {
    slot = freeSlots_.back();
    freeSlots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  const std::uint64_t id = (seq << kSlotBits) | slot;
  slots_[slot] = {std::move(task), id};
  const std::uint64_t order =
      (std::uint64_t{static_cast<std::uint8_t>(phase)} << kPhaseShift) | seq;
  heap_.push_back({std::max(when, now_), order, slot});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
  ++live_;
  return TaskId(id);
}

bool VirtualScheduler::cancel(TaskId id) {
  if (!id.valid()) return false;
  const auto slot = static_cast<std::uint32_t>(id.value() & ((std::uint64_t{1} << kSlotBits) - 1));
  if (slot >= slots_.size() || slots_[slot].id != id.value()) return false;
  slots_[slot].task = nullptr;
  slots_[slot].id = 0;  // the heap entry is dropped lazily; the slot is freed then
  --live_;
  return true;
}

void VirtualScheduler::dropCancelledTop() {
  while (!heap_.empty() && slots_[heap_.front().slot].id == 0) {
    freeSlots_.push_back(heap_.front().slot);
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
  }
}

TimePs VirtualScheduler::nextTime() {
  dropCancelledTop();
  return heap_.empty() ? -1 : heap_.front().time;
}

bool VirtualScheduler::runOne() {
  if (stopped_) return false;
  dropCancelledTop();
  if (heap_.empty()) return false;
  const Entry e = heap_.front();
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  heap_.pop_back();
  Task task = std::move(slots_[e.slot].task);
  slots_[e.slot].id = 0;
  freeSlots_.push_back(e.slot);
  --live_;
  now_ = e.time;
  ++executed_;
  task();
  return true;
}

void VirtualScheduler::runUntil(TimePs until) {
  while (!stopped_) {
    const TimePs next = nextTime();
    if (next < 0 || next > until) break;
    runOne();
  }
  if (!stopped_) now_ = std::max(now_, until);
}

void VirtualScheduler::runAll() {
  while (runOne()) {
  }
}

}  // namespace ebb::agent
