// The fan-in of many requests: completes once, when the last answers, with
// every result in request order and the first failure to arrive.
#include "ib_backend/fan_in.h"

#include <gtest/gtest.h>

namespace ebb::ib {
namespace {

using Answer = std::function<void(Result<int>)>;

TEST(FanIn, ZeroRequestsCompleteAtOnceWithNothing) {
  int calls = 0;
  fanIn<int>(
      0, [](std::size_t, Answer) { ADD_FAILURE() << "nothing to issue"; },
      [&](Gathered<int> g) {
        ++calls;
        EXPECT_TRUE(g.results.empty());
        EXPECT_TRUE(g.firstError.isOk());
      });
  EXPECT_EQ(calls, 1);
}

TEST(FanIn, CompletesOnceWhenTheLastAnswersWithResultsInRequestOrder) {
  std::vector<Answer> pending;
  int calls = 0;
  Gathered<int> got;
  fanIn<int>(
      3, [&](std::size_t, Answer a) { pending.push_back(std::move(a)); },
      [&](Gathered<int> g) {
        ++calls;
        got = std::move(g);
      });
  ASSERT_EQ(pending.size(), 3u);
  pending[2](30);
  pending[0](10);
  EXPECT_EQ(calls, 0);
  pending[0](99);  // a second answer to the same request: ignored
  EXPECT_EQ(calls, 0);
  pending[1](20);
  ASSERT_EQ(calls, 1);
  ASSERT_EQ(got.results.size(), 3u);
  EXPECT_EQ(*got.results[0], 10);
  EXPECT_EQ(*got.results[1], 20);
  EXPECT_EQ(*got.results[2], 30);
  EXPECT_TRUE(got.firstError.isOk());
  pending[1](21);
  EXPECT_EQ(calls, 1);
}

TEST(FanIn, KeepsTheFirstErrorToArriveAndEveryOtherResult) {
  std::vector<Answer> pending;
  Gathered<int> got;
  int calls = 0;
  fanIn<int>(
      3, [&](std::size_t, Answer a) { pending.push_back(std::move(a)); },
      [&](Gathered<int> g) {
        ++calls;
        got = std::move(g);
      });
  pending[2](Status(ErrorCode::kTimeout, "third"));
  pending[0](Status(ErrorCode::kUnavailable, "first"));
  pending[1](2);
  ASSERT_EQ(calls, 1);
  EXPECT_EQ(got.firstError.code(), ErrorCode::kTimeout);
  EXPECT_FALSE(got.results[0]);
  EXPECT_EQ(*got.results[1], 2);
  EXPECT_FALSE(got.results[2]);
}

TEST(FanIn, RequestsAnsweredInsideIssueStillCompleteOnce) {
  int calls = 0;
  fanIn<int>(
      4, [](std::size_t i, Answer a) { a(static_cast<int>(i)); },
      [&](Gathered<int> g) {
        ++calls;
        EXPECT_EQ(g.results.size(), 4u);
        EXPECT_EQ(*g.results[3], 3);
      });
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace ebb::ib
