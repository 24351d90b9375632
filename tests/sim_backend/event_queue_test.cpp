#include "sim_backend/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace ebb::sim {
namespace {

TEST(EventQueue, PopsInTimeOrderAndEqualTimesInPushOrder) {
  EventQueue q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.minTime(), EventQueue::kNever);
  q.push({30, 0, 0, 0});
  q.push({10, 1, 0, 0});
  q.push({30, 2, 0, 0});
  q.push({10, 3, 0, 0});
  EXPECT_EQ(q.minTime(), 10);
  std::vector<std::uint32_t> order;
  while (!q.empty())
    order.push_back(q.pop().a);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{1, 3, 0, 2}));
}

// Against a stable sort, with pushes interleaved with pops as the emulator
// does (never earlier than the last popped time).
TEST(EventQueue, MatchesAStableSortUnderInterleavedPushAndPop) {
  std::mt19937_64 rng(7);
  EventQueue q;
  std::vector<NetEvent> pending;  // reference: kept sorted stably
  TimePs now = 0;
  std::uint32_t serial = 0;
  for (int step = 0; step < 20000; ++step) {
    if (pending.empty() || rng() % 3 != 0) {
      const auto span = static_cast<TimePs>(1) << (rng() % 40);
      const NetEvent e{now + static_cast<TimePs>(rng() % static_cast<std::uint64_t>(span)),
                       serial++, 0, 0};
      q.push(e);
      const auto at =
          std::upper_bound(pending.begin(), pending.end(), e,
                           [](const NetEvent& x, const NetEvent& y) { return x.time < y.time; });
      pending.insert(at, e);
    } else {
      ASSERT_EQ(q.minTime(), pending.front().time);
      const NetEvent got = q.pop();
      ASSERT_EQ(got.a, pending.front().a) << "step " << step;
      now = got.time;
      pending.erase(pending.begin());
    }
    ASSERT_EQ(q.size(), pending.size());
  }
}

}  // namespace
}  // namespace ebb::sim
