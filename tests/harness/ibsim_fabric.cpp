#include "tests/harness/ibsim_fabric.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "fabric/ibsim_netfile.h"

namespace ebb::testing {

namespace fs = std::filesystem;

std::string IbsimFabric::preloadLibrary() {
  if (const char* env = std::getenv("EBB_UMAD2SIM")) return env;
  for (const char* p : {"/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so",
                        "/usr/lib/aarch64-linux-gnu/umad2sim/libumad2sim.so",
                        "/usr/lib/umad2sim/libumad2sim.so", "/usr/lib64/umad2sim/libumad2sim.so"}) {
    if (fs::exists(p)) return p;
  }
  throw std::runtime_error(
      "libumad2sim.so not found (Debian package libumad2sim0; run scripts/setup.sh, or set "
      "EBB_UMAD2SIM)");
}

IbsimFabric::IbsimFabric(const fabric::Topology& topo, Options options) {
  static std::atomic<int> counter{0};
  const int n = ++counter;
  socket_ = fmt::format("ebb-{}-{}", ::getpid(), n);
  std::string tmpl = (fs::temp_directory_path() / "ebb-ibsim-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a scratch folder");
  scratch_ = tmpl;
  firstHost_ = topo.hosts().at(0).name;
  try {
    {
      std::ofstream net(scratch_ + "/net");
      fabric::writeIbsimNetfile(topo, net);
    }
    ChildProcess::Spec sim;
    sim.argv = {"ibsim", "-s", "net"};
    sim.env = {{"IBSIM_SOCKNAME", socket_}};
    sim.cwd = scratch_;
    sim.stdoutPath = scratch_ + "/ibsim.log";
    sim.stdinPipe = true;
    ibsim_ = std::make_unique<ChildProcess>(sim);
    if (!waitForText(sim.stdoutPath, "Network simulator ready", options.startTimeout)) {
      throw std::runtime_error(fmt::format("ibsim did not become ready in {} ms; its log:\n{}",
                                           options.startTimeout.count(),
                                           readWholeFile(sim.stdoutPath)));
    }
    if (options.startOpenSm) {
      ChildProcess::Spec sm;
      sm.argv = {"opensm", "-R", options.routingEngine,    "-s", "10",
                 "-d2",    "-f", scratch_ + "/opensm.log", "-e"};
      sm.env = clientEnv();
      sm.env["OSM_CACHE_DIR"] = scratch_;
      sm.env["OSM_TMP_DIR"] = scratch_;
      sm.cwd = scratch_;
      sm.stdoutPath = scratch_ + "/opensm.out";
      opensm_ = std::make_unique<ChildProcess>(sm);
      if (!waitForText(scratch_ + "/opensm.log", "SUBNET UP", options.startTimeout)) {
        throw std::runtime_error(
            fmt::format("OpenSM did not report SUBNET UP in {} ms; log tail:\n{}",
                        options.startTimeout.count(), openSmLog()));
      }
    }
  } catch (...) {
    teardown();
    throw;
  }
}

IbsimFabric::~IbsimFabric() {
  teardown();
}

void IbsimFabric::teardown() {
  if (opensm_) opensm_->stop(std::chrono::milliseconds(3000));
  opensm_.reset();
  if (ibsim_) {
    ibsim_->closeStdin();
    ibsim_->stop(std::chrono::milliseconds(3000));
  }
  ibsim_.reset();
  std::error_code ec;
  if (!scratch_.empty()) fs::remove_all(scratch_, ec);
}

std::map<std::string, std::string> IbsimFabric::clientEnv(const std::string& simHost) const {
  return {{"LD_PRELOAD", preloadLibrary()},
          {"IBSIM_SOCKNAME", socket_},
          {"SIM_HOST", simHost.empty() ? firstHost_ : simHost}};
}

CommandResult IbsimFabric::runClient(const std::vector<std::string>& argv,
                                     const std::string& simHost,
                                     std::chrono::milliseconds timeout) {
  ChildProcess::Spec spec;
  spec.argv = argv;
  spec.env = clientEnv(simHost);
  spec.cwd = scratch_;
  return runCommand(spec, timeout);
}

void IbsimFabric::console(const std::string& command) {
  if (!ibsim_ || !ibsim_->writeLine(command)) {
    throw std::runtime_error("ibsim console is closed; cannot send: " + command);
  }
}

void IbsimFabric::unlink(const std::string& node, int port) {
  console(fmt::format("Unlink \"{}\"[{}]", node, port));
}

void IbsimFabric::relink(const std::string& node, int port) {
  console(fmt::format("ReLink \"{}\"[{}]", node, port));
}

void IbsimFabric::setCounter(const std::string& node, int port, const std::string& field,
                             std::uint64_t value) {
  console(fmt::format("PerformanceSet \"{}\"[{}] {}={}", node, port, field, value));
}

bool IbsimFabric::waitForOpenSmLog(const std::string& needle, std::chrono::milliseconds timeout) {
  return waitForText(scratch_ + "/opensm.log", needle, timeout);
}

std::string IbsimFabric::openSmLog() const {
  return readWholeFile(scratch_ + "/opensm.log");
}

void IbsimFabric::killIbsim() {
  if (ibsim_) {
    ibsim_->closeStdin();
    ibsim_->stop(std::chrono::milliseconds(500));
  }
}

}  // namespace ebb::testing
