// One switch's gating decision. Target: under 100 ns, so the control step of a
// 100 000-switch fabric costs under 10 ms of CPU. Views and utilizations vary
// from one iteration to the next (64 precomputed cases) so that the branch
// predictor does not learn a single path.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "policies/gating_policy.h"
#include "policies/lpi_link.h"

namespace {

using namespace ebb::policies;

struct Cases {
  std::vector<std::vector<UpLinkView>> links;
  std::vector<SwitchView> views;
  std::vector<double> u;
};

Cases makeCases(int k) {
  std::mt19937 rng(1);
  Cases c;
  c.links.resize(64);
  for (std::size_t n = 0; n < 64; ++n) {
    const bool mt = n % 2 == 0;
    for (int i = 0; i < k; ++i) {
      const auto r = rng() % 8;
      const LinkPowerState s = r < 4   ? LinkPowerState::kOn
                               : r < 7 ? LinkPowerState::kOff
                                       : LinkPowerState::kTurningOn;
      c.links[n].push_back({mt && i == 0 ? LinkPowerState::kOn : s, mt && i == 0});
    }
  }
  for (std::size_t n = 0; n < 64; ++n) {
    c.views.push_back(SwitchView{c.links[n], false, n % 2 == 0, n % 7 != 0});
    c.u.push_back(static_cast<double>(rng() % 1000) / 1000.0 * 0.3);
  }
  return c;
}

void decide(benchmark::State& state, const Thresholds& t) {
  const Cases c = makeCases(static_cast<int>(state.range(0)));
  const GatingPolicy p(t);
  std::size_t n = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p.decide(c.views[n], c.u[n]));
    n = (n + 1) & 63;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_DecideDynamic(benchmark::State& state) {
  decide(state, Thresholds::makeDynamic(0.15));
}
void BM_DecideStatic(benchmark::State& state) {
  decide(state, Thresholds::makeStatic(0.03, 0.15));
}
// k = 4 (the paper's 4-ary trees), 24 (radix-48 switches), 32.
BENCHMARK(BM_DecideDynamic)->Arg(4)->Arg(16)->Arg(24)->Arg(32);
BENCHMARK(BM_DecideStatic)->Arg(4)->Arg(24);

void BM_PropagateUp(benchmark::State& state) {
  const Cases c = makeCases(static_cast<int>(state.range(0)));
  std::size_t n = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(propagateUp(c.views[n]));
    n = (n + 1) & 63;
  }
}
BENCHMARK(BM_PropagateUp)->Arg(4)->Arg(24);

// A packet on a hybrid link that has slept 3 us since the last one, then its
// transmission: two events.
void BM_LpiPacketAfterIdle(benchmark::State& state) {
  LpiLink l(LpiParams::table6(LpiMode::kHybrid, 1), 0);
  ebb::TimePs t = 0;
  for (auto _ : state) {
    t += 3'000'000;
    benchmark::DoNotOptimize(l.onEvent(LpiEvent::kPacketReady, t));
    t += 10'000;
    benchmark::DoNotOptimize(l.onEvent(LpiEvent::kTransmissionEnded, t));
  }
}
BENCHMARK(BM_LpiPacketAfterIdle);

// Deep in deep-sleep cycling: timer events at each quiet/refresh boundary.
void BM_LpiTimer(benchmark::State& state) {
  LpiLink l(LpiParams::table6(LpiMode::kDeepSleep, 1), 0);
  ebb::TimePs t = 0;
  for (auto _ : state) {
    const LpiStep s = l.onEvent(LpiEvent::kTimer, t);
    t = s.nextTimer;
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_LpiTimer);

}  // namespace
