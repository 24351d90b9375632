// Times one PortCountersExtended sweep of every switch port of the 4-ary
// 3-tree (48 switches) through ibsim + OpenSM, with at most 16, 8, 4 and 1
// MADs outstanding: `ebb agent --sweep N` does the sweeps, this program
// starts the fabric and prints a table (docs/performance.md).
//
//   ./build/bench/ib_backend/sweep_timing [sweeps per bound, default 20]
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>

#include "common/child_process.h"
#include "fabric/kary_tree.h"
#include "tests/harness/ibsim_fabric.h"

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  const int sweeps = argc > 1 ? std::atoi(argv[1]) : 20;
  if (sweeps < 1) {
    std::cerr << "usage: sweep_timing [sweeps per bound >= 1]\n";
    return 2;
  }
  try {
    const ebb::fabric::Topology topo = ebb::fabric::KAryNTree::make(4, 3).value().build();
    ebb::testing::IbsimFabric fab(topo);
    const std::string config = fab.scratchDir() + "/sweep.textproto";
    std::ofstream(config) << "fabric { kary_n_tree { k: 4 n: 3 } }\n"
                             "agent { metrics_listen: \"127.0.0.1:0\" mad_timeout_ms: 200 }\n";
    std::cout << fmt::format(
                     "| MADs outstanding at most | sweep (median of {}) | per port read |\n",
                     sweeps)
              << "|---:|---:|---:|\n";
    for (int bound : {16, 8, 4, 1}) {
      ebb::ChildProcess::Spec spec;
      spec.argv = {std::string(EBB_BINARY_DIR) + "/tools/ebb",
                   "agent",
                   "--config",
                   config,
                   "--sweep",
                   std::to_string(sweeps),
                   fmt::format("agent.max_outstanding={}", bound)};
      spec.env = fab.clientEnv();
      spec.cwd = fab.scratchDir();
      const ebb::CommandResult r = ebb::runCommand(spec, 300s);
      std::smatch m;
      static const std::regex summary(
          R"(median ([0-9.]+) ms, min ([0-9.]+) ms, max ([0-9.]+) ms over \d+ sweeps of (\d+) port reads \(([0-9.]+) us per read\))");
      if (r.exitCode != 0 || !std::regex_search(r.out, m, summary)) {
        std::cerr << "sweep_timing: ebb agent --sweep failed (exit " << r.exitCode << "):\n"
                  << r.out << r.err;
        return 1;
      }
      std::cout << fmt::format("| {} | {} ms ({} port reads; min {}, max {}) | {} µs |\n", bound,
                               m[1].str(), m[4].str(), m[2].str(), m[3].str(), m[5].str())
                << std::flush;
    }
  } catch (const std::exception& e) {
    std::cerr << "sweep_timing: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
