// What one fault costs the fabric layer: re-homing the minimal tree and the
// recovery rule (docs/mechanisms.md §3.1), on a 16-ary 3-tree (4 096 hosts,
// 768 switches) with the MT root failed, gating state = MT only.
#include <benchmark/benchmark.h>

#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "fabric/recovery.h"

namespace {

using namespace ebb::fabric;

struct Faulted {
  explicit Faulted(int k, int n)
      : t(KAryNTree::make(k, n).value().build()), today(MinimalTree::build(t).value()), f(t) {
    f.failSwitch(t, today.root());
    // And one leaf's MT up cable.
    const SwitchId leaf = t.switchesAtLevel(t.depth() - 1).back();
    f.failLink(t.sw(leaf).ports[*today.upPort(leaf)].link);
  }
  Topology t;
  MinimalTree today;
  FaultSet f;
};

void BM_RehomeMinimalTree(benchmark::State& state) {
  const Faulted x(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state)
    benchmark::DoNotOptimize(MinimalTree::build(x.t, x.f));
}

BENCHMARK(BM_RehomeMinimalTree)->Args({4, 3})->Args({16, 3})->Unit(benchmark::kMicrosecond);

void BM_LinksToRestore(benchmark::State& state) {
  const Faulted x(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const Rehomed r = MinimalTree::build(x.t, x.f);
  const LinkStates st = LinkStates::onlyMinimalTree(x.t, x.today);
  Connectivity conn(x.t);
  for (auto _ : state)
    benchmark::DoNotOptimize(linksToRestore(conn, x.t, st, x.f, r.tree));
}

BENCHMARK(BM_LinksToRestore)->Args({4, 3})->Args({16, 3})->Unit(benchmark::kMicrosecond);

void BM_ProofWithFaults(benchmark::State& state) {
  const Faulted x(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const Rehomed r = MinimalTree::build(x.t, x.f);
  const LinkStates st = LinkStates::onlyMinimalTree(x.t, r.tree);
  Connectivity conn(x.t);
  for (auto _ : state)
    benchmark::DoNotOptimize(conn.findDisconnectedPair(st, x.f));
}

BENCHMARK(BM_ProofWithFaults)->Args({4, 3})->Args({16, 3})->Unit(benchmark::kMicrosecond);

}  // namespace
