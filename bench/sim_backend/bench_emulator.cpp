// Emulator throughput (events/s, packet-hops/s). The end-to-end targets (the
// full alonso-ramp with agents under 10 s) are timed with `ebb replay`; see
// docs/performance.md.
#include <benchmark/benchmark.h>

#include "configs/config_loader.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "replay/run_spec.h"
#include "replay/runner.h"
#include "sim_backend/fabric_emulator.h"
#include "sim_backend/synthetic_traffic.h"

namespace {

using namespace ebb;

// Args: k, n, switch model (0 output queued, 1 input queued with BookSim2's
// iq defaults and random up routing, 2 the same with 4-flit VC buffers).
void BM_UniformLoadAllOn(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const int n = static_cast<int>(state.range(1));
  const fabric::Topology topo = fabric::KAryNTree::make(k, n).value().build();
  double events = 0, hops = 0;
  for (auto _ : state) {
    agent::VirtualScheduler sched;
    sim::EmulatorConfig cfg;
    if (state.range(2) > 0) {
      cfg.switchModel = sim::SwitchModel::kInputQueued;
      cfg.upRouting = sim::UpRouting::kRandom;
      if (state.range(2) == 2) cfg.vcBufferBytes = 4 * cfg.flitBytes;
    }
    sim::FabricEmulator emu(topo, cfg, sched);
    workload::SyntheticSpec spec;
    spec.rate = workload::RateProfile::constant(0.3, 10'000 * cfg.cyclePs);
    sim::SyntheticTraffic traffic(emu, spec);
    traffic.start();
    sched.runAll();
    events += static_cast<double>(sched.executed());
    hops += static_cast<double>(emu.stats().packetHops);
  }
  state.counters["events/s"] = benchmark::Counter(events, benchmark::Counter::kIsRate);
  state.counters["hops/s"] = benchmark::Counter(hops, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_UniformLoadAllOn)
    ->Args({4, 3, 0})
    ->Args({4, 4, 0})
    ->Args({4, 4, 1})
    ->Args({4, 4, 2})
    ->Unit(benchmark::kMillisecond);

// A twentieth of the alonso-ramp (21 000 cycles) with the 256 agents on.
void BM_ShortRampWithAgents(benchmark::State& state) {
  const fabric::Topology topo = fabric::KAryNTree::make(4, 4).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  auto cfg = config::parseTextConfig(
      "gating { policy: DYNAMIC } workload { alonso_ramp { time_scale: 0.05 } }", "bench");
  const replay::RunSpec spec = replay::buildRunSpec(*cfg).value();
  double events = 0;
  for (auto _ : state) {
    const replay::RunOutput out = replay::runEmulation(spec, topo, mt, true, {}).value();
    events += static_cast<double>(out.summary.events());
  }
  state.counters["events/s"] = benchmark::Counter(events, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ShortRampWithAgents)->Unit(benchmark::kMillisecond);

}  // namespace
