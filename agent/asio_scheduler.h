#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <unordered_map>

#include "agent/scheduler.h"

namespace ebb::agent {

// The Scheduler of `ebb agent`: real (steady) time on a Boost.Asio
// io_context, one thread. now() counts from construction. Phases only order
// tasks that are due at the same instant in virtual time; here a due task
// simply runs when the loop gets to it.
class AsioScheduler final : public Scheduler {
 public:
  explicit AsioScheduler(boost::asio::io_context& io);
  ~AsioScheduler() override;
  AsioScheduler(const AsioScheduler&) = delete;
  AsioScheduler& operator=(const AsioScheduler&) = delete;

  TimePs now() const override;
  TaskId at(TimePs when, Phase phase, Task task) override;
  bool cancel(TaskId id) override;
  boost::asio::io_context& context() { return io_; }
  std::size_t pending() const { return timers_.size(); }

 private:
  struct Entry {
    boost::asio::steady_timer timer;
    Task task;
  };
  boost::asio::io_context& io_;
  std::chrono::steady_clock::time_point start_;
  std::uint64_t next_ = 0;
  std::unordered_map<std::uint64_t, std::unique_ptr<Entry>> timers_;
};

}  // namespace ebb::agent
