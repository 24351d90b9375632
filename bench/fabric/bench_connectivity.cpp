// One connectivity proof after one gating action: the cost the agent's safety
// guard pays per decision. Target (issue 2): well under 1 ms on a 16-ary
// 3-tree (4 096 hosts, 768 switches).
#include <benchmark/benchmark.h>

#include "fabric/connectivity.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"

namespace {

using namespace ebb::fabric;

void BM_ConnectivityAfterOneChange(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const int n = static_cast<int>(state.range(1));
  const Topology t = KAryNTree::make(k, n).value().build();
  const MinimalTree mt = MinimalTree::build(t).value();
  Connectivity conn(t);
  LinkStates st = LinkStates::allOn(t);
  // Toggle non-MT switch links one at a time, as gating would.
  std::vector<LinkId> gateable;
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l) {
    if (t.isSwitchLink(LinkId(l)) && !mt.containsLink(LinkId(l))) gateable.push_back(LinkId(l));
  }
  std::size_t i = 0;
  for (auto _ : state) {
    const LinkId l = gateable[i % gateable.size()];
    st.set(l, Direction::kUp, !st.isOn(l, Direction::kUp));
    benchmark::DoNotOptimize(conn.findDisconnectedPair(st));
    ++i;
  }
  state.counters["hosts"] = static_cast<double>(t.numHosts());
  state.counters["switches"] = static_cast<double>(t.numSwitches());
}

BENCHMARK(BM_ConnectivityAfterOneChange)
    ->Args({4, 3})
    ->Args({4, 4})
    ->Args({16, 3})
    ->Args({8, 4})
    ->Args({32, 3})
    ->Unit(benchmark::kMicrosecond);

void BM_BuildKAryTreeAndMinimalTree(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const int n = static_cast<int>(state.range(1));
  for (auto _ : state) {
    const Topology t = KAryNTree::make(k, n).value().build();
    benchmark::DoNotOptimize(MinimalTree::build(t));
  }
}

BENCHMARK(BM_BuildKAryTreeAndMinimalTree)
    ->Args({4, 4})
    ->Args({16, 3})
    ->Unit(benchmark::kMillisecond);

}  // namespace
