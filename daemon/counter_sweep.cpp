#include "daemon/counter_sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace ebb::daemon {

int runCounterSweeps(ib::IbBackend& backend, boost::asio::io_context& io,
                     const fabric::Topology& topo, int sweeps, int maxOutstanding,
                     std::ostream& out, std::ostream& err) {
  std::vector<fabric::SwitchId> targets;
  std::size_t ports = 0;
  for (std::uint32_t i = 0; i < topo.numSwitches(); ++i) {
    const fabric::SwitchId sw(i);
    if (!backend.reachable(sw)) continue;
    targets.push_back(sw);
    for (const fabric::Port& p : topo.sw(sw).ports)
      ports += p.role == fabric::PortRole::kUnused ? 0u : 1u;
  }
  if (targets.empty()) {
    err << "ebb agent: --sweep: no switch is reachable\n";
    return 1;
  }
  std::vector<double> ms;
  int exitCode = 0;
  for (int n = 1; n <= sweeps; ++n) {
    std::size_t left = targets.size(), failed = 0;
    std::string firstError;
    const auto t0 = std::chrono::steady_clock::now();
    for (fabric::SwitchId sw : targets) {
      backend.requestCounters(sw, [&, sw](Result<agent::CounterSample> r) {
        --left;
        if (!r || r->stale) {
          ++failed;
          if (firstError.empty()) {
            firstError = r ? topo.sw(sw).name + ": no fresh counters" : r.status().toString();
          }
        }
      });
    }
    // A loop that ran out of work last time counts as stopped (replies come
    // from a receiving thread, no work to Asio) until restarted.
    if (io.stopped()) io.restart();
    while (left > 0 && io.run_one()) {
    }
    if (left > 0) {
      err << "ebb agent: counter sweep " << n << ": " << left
          << " reads never completed (an internal error)\n";
      return 1;
    }
    const double took =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ms.push_back(took);
    out << fmt::format(
               "ebb agent: counter sweep {}/{}: {} switches, {} port reads in {:.2f} ms "
               "({:.1f} us per read){}\n",
               n, sweeps, targets.size(), ports, took, 1000.0 * took / static_cast<double>(ports),
               failed == 0 ? "" : fmt::format("; {} switches failed: {}", failed, firstError))
        << std::flush;
    if (failed > 0) exitCode = 1;
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  out << fmt::format(
      "ebb agent: counter sweeps: median {:.2f} ms, min {:.2f} ms, max {:.2f} ms over {} sweeps "
      "of {} port reads ({:.1f} us per read), at most {} MADs outstanding\n",
      median, ms.front(), ms.back(), ms.size(), ports, 1000.0 * median / static_cast<double>(ports),
      maxOutstanding);
  return exitCode;
}

}  // namespace ebb::daemon
