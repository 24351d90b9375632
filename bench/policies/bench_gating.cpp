// One switch's gating decision. Target (issue 3): under 100 ns, so the control
// step of a 100 000-switch fabric costs under 10 ms of CPU.
#include <benchmark/benchmark.h>

#include <vector>

#include "policies/gating_policy.h"
#include "policies/lpi_link.h"

namespace {

using namespace ebb::policies;

void BM_GatingDecision(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  std::vector<UpLinkView> up(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) {
    up[static_cast<std::size_t>(i)] = {i % 3 == 2 ? LinkPowerState::kOff : LinkPowerState::kOn,
                                       i == 0};
  }
  const SwitchView view{up, false, true, true};
  const GatingPolicy p(Thresholds::makeDynamic(0.15));
  double u = 0;
  for (auto _ : state) {
    u += 0.013;
    if (u > 0.3) u = 0;
    benchmark::DoNotOptimize(p.decide(view, u));
  }
}
BENCHMARK(BM_GatingDecision)->Arg(4)->Arg(16)->Arg(32);

void BM_LpiPacketOnSleepingLink(benchmark::State& state) {
  LpiLink l(LpiParams::table6(LpiMode::kHybrid, 1), 0);
  ebb::TimePs t = 0;
  for (auto _ : state) {
    t += 3'000'000;
    benchmark::DoNotOptimize(l.packetReady(t));
    t += 10'000;
    l.transmissionEnded(t);
  }
}
BENCHMARK(BM_LpiPacketOnSleepingLink);

}  // namespace
