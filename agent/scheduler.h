#pragma once

#include <cstdint>
#include <functional>

#include "common/strong_id.h"
#include "common/time.h"

namespace ebb::agent {

struct TaskTag;
using TaskId = StrongId<TaskTag, std::uint64_t>;

// At equal timestamps tasks run in phase order, then in scheduling order, so
// that e.g. the network commits before agents sample (docs/design.md §2, determinism).
enum class Phase : std::uint8_t {
  kNetwork = 0,  // emulator events: packets, link transitions
  kBackend = 1,  // backend completions delivered to agents
  kAgent = 2,    // agent periodic work: sampling, decisions
  kControl = 3,  // neighbour messages, reporting, run control
};

// The only source of time in ebb.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePs now() const = 0;
};

class Scheduler : public Clock {
 public:
  using Task = std::function<void()>;

  // Runs `task` at time `when` (clamped to now()); returns an id for cancel().
  virtual TaskId at(TimePs when, Phase phase, Task task) = 0;
  // Cancels a pending task; false if it already ran or was cancelled.
  virtual bool cancel(TaskId id) = 0;

  TaskId after(TimePs delay, Phase phase, Task task) {
    return at(now() + delay, phase, std::move(task));
  }
};

}  // namespace ebb::agent
