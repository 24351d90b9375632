// Timing driver for the emulator alone (no agents): wall time, events/s,
// packet-hops/s and peak RSS of one run, for docs/performance.md ("Emulator").
//
//   sim_timing ramp    K N                 the alonso-ramp (420 000 cycles), all links on
//   sim_timing uniform K N RATE CYCLES     constant uniform load, all links on
//   sim_timing sweep   K N CYCLES RATE...  accepted throughput per offered load
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fabric/kary_tree.h"
#include "sim_backend/fabric_emulator.h"
#include "sim_backend/synthetic_traffic.h"

namespace {

using namespace ebb;

struct RunResult {
  std::uint64_t generated = 0;
  std::uint64_t delivered = 0;
  std::uint64_t events = 0;
  std::uint64_t hops = 0;
  double wallS = 0;
  double acceptedSecondHalf = 0;  // flits/cycle/node delivered in the second half
  double meanLatencyCycles = 0;   // of messages created in the second half
};

RunResult run(const fabric::Topology& topo, const workload::RateProfile& rate, TimePs measureFrom,
              TimePs end) {
  agent::VirtualScheduler sched;
  sim::EmulatorConfig cfg;
  sim::FabricEmulator emu(topo, cfg, sched);
  std::uint64_t bytesLate = 0, messagesLate = 0;
  TimePs latencyLate = 0;
  emu.onDelivery([&](const sim::Delivery& d) {
    if (d.delivered >= measureFrom && d.delivered < end) bytesLate += std::uint64_t(d.bytes);
    if (d.created >= measureFrom) {
      ++messagesLate;
      latencyLate += d.delivered - d.created;
    }
  });
  workload::SyntheticSpec spec;
  spec.rate = rate;
  spec.messageBytes = cfg.packetBytes;
  sim::SyntheticTraffic traffic(emu, spec);
  const auto t0 = std::chrono::steady_clock::now();
  traffic.start();
  sched.runAll();
  const auto t1 = std::chrono::steady_clock::now();
  RunResult r;
  r.generated = traffic.generated();
  r.delivered = emu.stats().messagesDelivered;
  r.events = emu.stats().events + sched.executed();  // network events + scheduler tasks
  r.hops = emu.stats().packetHops;
  r.wallS = std::chrono::duration<double>(t1 - t0).count();
  const double cycles = static_cast<double>(end - measureFrom) / static_cast<double>(cfg.cyclePs);
  r.acceptedSecondHalf = static_cast<double>(bytesLate) / static_cast<double>(cfg.flitBytes) /
                         cycles / static_cast<double>(topo.numHosts());
  r.meanLatencyCycles = messagesLate == 0
                            ? 0
                            : static_cast<double>(latencyLate) / static_cast<double>(messagesLate) /
                                  static_cast<double>(cfg.cyclePs);
  return r;
}

void print(const RunResult& r) {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "messages %llu delivered %llu events %llu packet-hops %llu wall %.2f s events/s %.2f M "
      "hops/s %.2f M peak RSS %.0f MB\n",
      static_cast<unsigned long long>(r.generated), static_cast<unsigned long long>(r.delivered),
      static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.hops), r.wallS,
      static_cast<double>(r.events) / r.wallS / 1e6, static_cast<double>(r.hops) / r.wallS / 1e6,
      static_cast<double>(ru.ru_maxrss) / 1024.0);
}

int usage() {
  std::fprintf(stderr,
               "usage: sim_timing ramp K N | uniform K N RATE CYCLES | sweep K N CYCLES RATE...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return usage();
  const std::string mode = argv[1];
  const auto tree = fabric::KAryNTree::make(std::atoi(argv[2]), std::atoi(argv[3]));
  if (!tree) {
    std::fprintf(stderr, "%s\n", tree.status().toString().c_str());
    return 2;
  }
  const fabric::Topology topo = tree->build();
  const TimePs cycle = sim::EmulatorConfig{}.cyclePs;
  if (mode == "ramp") {
    const workload::RateProfile rate = workload::RateProfile::alonsoRamp(cycle);
    print(run(topo, rate, rate.end() / 2, rate.end()));
  } else if (mode == "uniform" && argc == 6) {
    const TimePs end = std::atoll(argv[5]) * cycle;
    print(run(topo, workload::RateProfile::constant(std::atof(argv[4]), end), end / 2, end));
  } else if (mode == "sweep" && argc >= 6) {
    const TimePs end = std::atoll(argv[4]) * cycle;
    std::printf("offered accepted mean_latency_cycles\n");
    for (int i = 5; i < argc; ++i) {
      const double offered = std::atof(argv[i]);
      const RunResult r = run(topo, workload::RateProfile::constant(offered, end), end / 2, end);
      std::printf("%.3f %.3f %.1f\n", offered, r.acceptedSecondHalf, r.meanLatencyCycles);
    }
  } else {
    return usage();
  }
  return 0;
}
