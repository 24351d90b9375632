#include "agent/virtual_scheduler.h"

#include <gtest/gtest.h>

#include <string>

namespace ebb::agent {
namespace {

TEST(VirtualScheduler, RunsByTimeThenPhaseThenOrder) {
  VirtualScheduler s;
  std::string log;
  s.at(20, Phase::kAgent, [&] { log += "c"; });
  s.at(10, Phase::kAgent, [&] { log += "b"; });
  s.at(10, Phase::kNetwork, [&] { log += "a"; });
  s.at(20, Phase::kAgent, [&] { log += "d"; });
  s.runAll();
  EXPECT_EQ(log, "abcd");
  EXPECT_EQ(s.now(), 20);
  EXPECT_EQ(s.executed(), 4u);
}

TEST(VirtualScheduler, CancelAndSlotReuse) {
  VirtualScheduler s;
  int ran = 0;
  TaskId a = s.at(5, Phase::kAgent, [&] { ran += 1; });
  EXPECT_TRUE(s.cancel(a));
  EXPECT_FALSE(s.cancel(a));
  EXPECT_EQ(s.pending(), 0u);
  TaskId b = s.at(6, Phase::kAgent, [&] { ran += 10; });
  EXPECT_NE(a, b);
  EXPECT_FALSE(s.cancel(a));  // a stale id must not cancel the slot's new task
  s.runAll();
  EXPECT_EQ(ran, 10);
  EXPECT_FALSE(s.cancel(b));
}

TEST(VirtualScheduler, TasksScheduleMoreTasksAndPastTimesClamp) {
  VirtualScheduler s;
  std::vector<TimePs> times;
  s.at(100, Phase::kAgent, [&] {
    times.push_back(s.now());
    s.at(50, Phase::kAgent, [&] { times.push_back(s.now()); });  // in the past: runs now
    s.after(7, Phase::kAgent, [&] { times.push_back(s.now()); });
  });
  s.runAll();
  EXPECT_EQ(times, (std::vector<TimePs>{100, 100, 107}));
}

TEST(VirtualScheduler, RunUntilStopsAtTheBoundary) {
  VirtualScheduler s;
  int ran = 0;
  s.at(10, Phase::kAgent, [&] { ++ran; });
  s.at(11, Phase::kAgent, [&] { ++ran; });
  s.runUntil(10);
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(s.now(), 10);
  s.runUntil(50);
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(s.now(), 50);
  EXPECT_EQ(s.nextTime(), -1);
}

}  // namespace
}  // namespace ebb::agent
