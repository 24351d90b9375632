#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "common/status.h"

namespace ebb::ib {

// What a fan-in of requests gathered: every answer in the order the requests
// were issued, and the first failure to arrive (OK when none failed).
template <class T>
struct Gathered {
  std::vector<Result<T>> results;
  Status firstError;
};

// Issues `n` requests at once and completes `done` exactly once, when the last
// of them has answered (at once, with nothing gathered, when n is 0).
// `issue(i, answer)` sends request i; `answer` takes its result (a second
// answer to the same request is ignored). Per-answer side effects belong in
// the caller's own reply handler, before it calls `answer`.
template <class T>
void fanIn(std::size_t n,
           const std::function<void(std::size_t, std::function<void(Result<T>)>)>& issue,
           std::function<void(Gathered<T>)> done) {
  if (n == 0) return done(Gathered<T>{});
  struct State {
    std::size_t left = 0;
    std::vector<char> answered;
    Gathered<T> got;
    std::function<void(Gathered<T>)> done;
  };
  auto st = std::make_shared<State>();
  st->left = n;
  st->answered.assign(n, 0);
  st->got.results.assign(n, Result<T>(ErrorCode::kInternal, "no answer"));
  st->done = std::move(done);
  for (std::size_t i = 0; i < n; ++i) {
    issue(i, [st, i](Result<T> r) {
      if (st->answered[i]) return;
      st->answered[i] = 1;
      if (!r && st->got.firstError.isOk()) st->got.firstError = r.status();
      st->got.results[i] = std::move(r);
      if (--st->left == 0) st->done(std::move(st->got));
    });
  }
}

}  // namespace ebb::ib
