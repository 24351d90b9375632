// The single-failure proof of in-band control (fabric::InBandReach, used by
// the safety guard before every turn-off with agent.resilience SINGLE_LINK):
// one proof for one more link off, in the worst state for it, where every
// link outside the minimal tree is off (disabled at its upper end) so every
// tree link is a bridge and needs its own recovery walk.
#include <benchmark/benchmark.h>

#include "fabric/in_band_reach.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"

namespace {

using namespace ebb::fabric;

void BM_SingleFailureProof(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const int n = static_cast<int>(state.range(1));
  const bool gated = state.range(2) != 0;
  const Topology t = KAryNTree::make(k, n).value().build();
  const MinimalTree mt = MinimalTree::build(t).value();
  LinkStates st = LinkStates::allOn(t);
  std::vector<SwitchId> gate(t.numLinks());
  std::vector<LinkId> candidates;
  for (LinkId::rep_type i = 0; i < t.numLinks(); ++i) {
    const LinkId l(i);
    if (!t.isSwitchLink(l) || mt.containsLink(l)) continue;
    candidates.push_back(l);
    if (gated) {
      st.setLink(l, false);
      gate[l.value()] = t.link(l).upper.sw;
    }
  }
  if (gated) {  // one candidate per iteration is turned back on, then off again
    for (LinkId l : candidates)
      st.setLink(l, true);
    for (std::size_t i = 1; i < candidates.size(); ++i)
      st.setLink(candidates[i], false);
    candidates.resize(1);
  }
  const FaultSet none(t);
  const std::vector<char> all;
  const SwitchId root = t.link(t.host(HostId(0)).link).upper.sw;
  InBandReach reach(t);
  Connectivity conn(t);
  std::size_t i = 0, bridges = 0;
  for (auto _ : state) {
    const LinkId l = candidates[i++ % candidates.size()];
    LinkStates trial = st;
    trial.setLink(l, false);
    gate[l.value()] = t.link(l).lower.sw;
    const InBandView now{&st, &none, &gate, &all, root};
    const InBandView v{&trial, &none, &gate, &all, root};
    benchmark::DoNotOptimize(reach.singleFailureGap(v, &now, conn));
    bridges = reach.bridges(v).size();
  }
  state.counters["switches"] = static_cast<double>(t.numSwitches());
  state.counters["bridges"] = static_cast<double>(bridges);
}

BENCHMARK(BM_SingleFailureProof)
    ->Args({4, 3, 0})
    ->Args({4, 3, 1})
    ->Args({4, 4, 1})
    ->Args({16, 3, 0})
    ->Args({16, 3, 1})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
