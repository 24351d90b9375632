#include "agent/asio_scheduler.h"

namespace ebb::agent {

AsioScheduler::AsioScheduler(boost::asio::io_context& io)
    : io_(io), start_(std::chrono::steady_clock::now()) {}

AsioScheduler::~AsioScheduler() {
  for (auto& [id, e] : timers_)
    e->timer.cancel();
}

TimePs AsioScheduler::now() const {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - start_)
                      .count();
  return static_cast<TimePs>(ns) * 1000;
}

TaskId AsioScheduler::at(TimePs when, Phase, Task task) {
  const std::uint64_t id = ++next_;
  auto e = std::make_unique<Entry>(Entry{boost::asio::steady_timer(io_), std::move(task)});
  e->timer.expires_at(start_ + std::chrono::nanoseconds(std::max<TimePs>(when, 0) / 1000));
  e->timer.async_wait([this, id](const boost::system::error_code& ec) {
    if (ec) return;
    auto it = timers_.find(id);
    if (it == timers_.end()) return;
    Task t = std::move(it->second->task);
    timers_.erase(it);
    t();
  });
  timers_.emplace(id, std::move(e));
  return TaskId(id);
}

bool AsioScheduler::cancel(TaskId id) {
  auto it = timers_.find(id.value());
  if (it == timers_.end()) return false;
  it->second->timer.cancel();
  timers_.erase(it);
  return true;
}

}  // namespace ebb::agent
