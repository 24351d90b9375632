#pragma once

#include <cstdint>
#include <vector>

#include "agent/scheduler.h"

namespace ebb::agent {

// Deterministic virtual time: a binary heap keyed by (time, phase, sequence).
// Time advances only when a task runs; nothing reads a real clock.
class VirtualScheduler final : public Scheduler {
 public:
  TimePs now() const override { return now_; }
  TaskId at(TimePs when, Phase phase, Task task) override;
  bool cancel(TaskId id) override;

  // Runs the next task; false when none is pending.
  bool runOne();
  // Runs every task due at or before `until`, then sets now() to `until`.
  void runUntil(TimePs until);
  // Runs until no task is pending.
  void runAll();
  std::size_t pending() const { return live_; }
  std::uint64_t executed() const { return executed_; }
  // Time of the next pending task, or -1 if none.
  TimePs nextTime();
  // Runs nothing more: runOne() returns false and runUntil() returns at once,
  // leaving now() where it is (a run that met an error ends there).
  void stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }

 private:
  struct Entry {
    TimePs time;
    std::uint64_t order;  // phase in the top byte, sequence below
    std::uint32_t slot;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.time != b.time ? a.time > b.time : a.order > b.order;
    }
  };
  struct Slot {
    Task task;
    std::uint64_t id = 0;  // 0 = free
  };
  void dropCancelledTop();

  TimePs now_ = 0;
  std::uint64_t sequence_ = 0;
  std::uint64_t executed_ = 0;
  std::size_t live_ = 0;
  bool stopped_ = false;
  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> freeSlots_;
};

}  // namespace ebb::agent
