#include "tests/harness/ibsim_fabric.h"

#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "fabric/ibsim_netfile.h"

namespace ebb::testing {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::string_view kPrompt = "sim> ";

enum class WaitResult { kDone, kExited, kTimeout };

// Waits until `done(contents of path)` holds, `child` exits or the deadline
// passes. Wakes on any change in the file's folder (inotify), and at least
// every 20 ms in case a write raced the watch.
WaitResult waitForLog(const std::string& path, const std::function<bool(const std::string&)>& done,
                      ChildProcess& child, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd >= 0) {
    ::inotify_add_watch(fd, fs::path(path).parent_path().c_str(),
                        IN_MODIFY | IN_CREATE | IN_CLOSE_WRITE);
  }
  WaitResult result = WaitResult::kTimeout;
  while (true) {
    if (done(readWholeFile(path))) {
      result = WaitResult::kDone;
      break;
    }
    if (!child.running()) {
      result = done(readWholeFile(path)) ? WaitResult::kDone : WaitResult::kExited;
      break;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, fd >= 0 ? 1 : 0, static_cast<int>(std::min<std::int64_t>(left.count(), 20))) >
        0) {
      char buf[4096];
      while (::read(fd, buf, sizeof buf) > 0) {
      }
    }
  }
  if (fd >= 0) ::close(fd);
  return result;
}

std::function<bool(const std::string&)> contains(std::string needle) {
  return [needle = std::move(needle)](const std::string& text) {
    return text.find(needle) != std::string::npos;
  };
}

// Writes to the console pipe without letting a dead ibsim kill the test
// process with SIGPIPE.
bool writeWithoutSigpipe(ChildProcess& child, const std::string& line) {
  sigset_t pipeSet, old;
  ::sigemptyset(&pipeSet);
  ::sigaddset(&pipeSet, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipeSet, &old);
  const bool ok = child.writeLine(line);
  if (!ok) {
    const timespec zero{0, 0};
    ::sigtimedwait(&pipeSet, nullptr, &zero);
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

std::string trimmed(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

}  // namespace

std::string IbsimFabric::preloadLibrary() {
  if (const char* env = std::getenv("EBB_UMAD2SIM")) {
    if (!fs::exists(env)) {
      throw std::runtime_error(fmt::format("EBB_UMAD2SIM={} does not exist", env));
    }
    return env;
  }
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
  preload_ = preloadLibrary();  // fail before starting anything
  std::string tmpl = (fs::temp_directory_path() / "ebb-ibsim-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a scratch folder");
  scratch_ = tmpl;
  firstHost_ = topo.hosts().at(0).name;
  try {
    {
      std::ofstream net(scratch_ + "/net");
      if (Status s = fabric::writeIbsimNetfile(topo, net); !s.isOk())
        throw std::runtime_error(s.toString());
      net.close();
      if (!net) throw std::runtime_error("cannot write the ibsim net file in " + scratch_);
    }
    // ibsim's tables are sized at start (defaults: 2048 nodes, 256 switches,
    // 13312 ports); a larger tree needs bigger ones or ibsim panics.
    std::size_t ports = 2 * topo.numHosts();
    for (const fabric::Switch& sw : topo.switches())
      ports += sw.ports.size() + 1;
    const auto atLeast = [](std::size_t need, std::size_t dflt) {
      return std::to_string(std::max(need, dflt));
    };
    ChildProcess::Spec sim;
    sim.argv = {"ibsim", "-s",
                "-N",    atLeast(topo.numHosts() + topo.numSwitches(), 2048),
                "-S",    atLeast(topo.numSwitches(), 256),
                "-P",    atLeast(2 * ports, 13312),
                "net"};
    sim.env = {{"IBSIM_SOCKNAME", socket_}};
    sim.cwd = scratch_;
    sim.stdoutPath = scratch_ + "/ibsim.log";
    sim.stdinPipe = true;
    ibsim_ = std::make_unique<ChildProcess>(sim);
    // Ready once it printed its first console prompt (after "Network simulator ready").
    const auto ready = [](const std::string& text) {
      const auto at = text.find("Network simulator ready");
      return at != std::string::npos && text.find(kPrompt, at) != std::string::npos;
    };
    const WaitResult simUp = waitForLog(sim.stdoutPath, ready, *ibsim_, options.startTimeout);
    if (simUp != WaitResult::kDone) {
      throw std::runtime_error(fmt::format(
          "ibsim {}; its output:\n{}",
          simUp == WaitResult::kExited
              ? fmt::format("exited with status {} before it was ready", ibsim_->stop({}))
              : fmt::format("did not become ready in {} ms", options.startTimeout.count()),
          ibsimLog()));
    }
    {
      const std::string text = ibsimLog();
      logOffset_ = text.find(kPrompt, text.find("Network simulator ready")) + kPrompt.size();
    }
    if (options.startOpenSm) {
      ChildProcess::Spec sm;
      sm.argv = {"opensm", "-R", options.routingEngine,    "-s", "10",
                 "-d2",    "-f", scratch_ + "/opensm.log", "-e"};
      sm.env = clientEnv();
      sm.env["OSM_CACHE_DIR"] = scratch_;
      sm.env["OSM_TMP_DIR"] = scratch_;
      for (const auto& [k, v] : options.openSmEnv)
        sm.env[k] = v;
      if (!options.openSmConfig.empty()) {
        const std::string conf = scratch_ + "/opensm.conf";
        std::ofstream out(conf);
        for (const std::string& line : options.openSmConfig)
          out << line << "\n";
        out.close();
        if (!out) throw std::runtime_error("cannot write " + conf);
        sm.argv.push_back("-F");
        sm.argv.push_back(conf);
      }
      sm.cwd = scratch_;
      sm.stdoutPath = scratch_ + "/opensm.out";
      opensm_ = std::make_unique<ChildProcess>(sm);
      const WaitResult smUp = waitForLog(scratch_ + "/opensm.log", contains("SUBNET UP"), *opensm_,
                                         options.startTimeout);
      if (smUp != WaitResult::kDone) {
        throw std::runtime_error(fmt::format(
            "OpenSM {}; its output:\n{}\nits log:\n{}",
            smUp == WaitResult::kExited
                ? fmt::format("exited with status {} before SUBNET UP", opensm_->stop({}))
                : fmt::format("did not report SUBNET UP in {} ms", options.startTimeout.count()),
            readWholeFile(sm.stdoutPath), openSmLog()));
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
  // EBB_KEEP_SCRATCH=1 keeps the logs of a failing run for a look.
  if (!scratch_.empty() && std::getenv("EBB_KEEP_SCRATCH") == nullptr) fs::remove_all(scratch_, ec);
}

std::map<std::string, std::string> IbsimFabric::clientEnv(const std::string& simHost) const {
  return {{"LD_PRELOAD", preload_},
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

CommandResult IbsimFabric::runClient(const std::vector<std::string>& argv,
                                     const std::string& simHost, std::chrono::milliseconds timeout,
                                     const std::function<void()>& meanwhile) {
  ChildProcess::Spec spec;
  spec.argv = argv;
  spec.env = clientEnv(simHost);
  spec.cwd = scratch_;
  return runCommand(spec, timeout, meanwhile, std::chrono::milliseconds(50));
}

std::string IbsimFabric::console(const std::string& command, std::chrono::milliseconds timeout) {
  if (command.find('\n') != std::string::npos) {
    throw std::invalid_argument("one ibsim console command per call: " + command);
  }
  if (!ibsim_ || !writeWithoutSigpipe(*ibsim_, command)) {
    throw std::runtime_error("ibsim console is closed; cannot send: " + command);
  }
  // ibsim answers every command with a new prompt, after its output.
  const std::size_t from = logOffset_;
  const auto answered = [from](const std::string& text) {
    return text.find(kPrompt, from) != std::string::npos;
  };
  const WaitResult r = waitForLog(scratch_ + "/ibsim.log", answered, *ibsim_, timeout);
  if (r != WaitResult::kDone) {
    throw std::runtime_error(fmt::format("ibsim {} after console command '{}'",
                                         r == WaitResult::kExited ? "exited" : "did not answer",
                                         command));
  }
  const std::string text = ibsimLog();
  const std::size_t prompt = text.find(kPrompt, from);
  logOffset_ = prompt + kPrompt.size();
  return trimmed(std::string_view(text).substr(from, prompt - from));
}

// ibsim reports a rejected command on a line starting with '#' ("# nodeid ...
// not found", "# bad port number ...") or as "command '...' unknown".
void IbsimFabric::checkedConsole(const std::string& command) {
  const std::string reply = console(command);
  if (reply.rfind('#', 0) == 0 || reply.find("\n#") != std::string::npos ||
      reply.find("unknown") != std::string::npos) {
    throw std::runtime_error(fmt::format("ibsim rejected '{}': {}", command, reply));
  }
}

void IbsimFabric::unlink(const std::string& node, int port) {
  checkedConsole(fmt::format("Unlink \"{}\"[{}]", node, port));
}

void IbsimFabric::relink(const std::string& node, int port) {
  checkedConsole(fmt::format("ReLink \"{}\"[{}]", node, port));
}

void IbsimFabric::setCounter(const std::string& node, int port, const std::string& field,
                             std::uint64_t value) {
  checkedConsole(fmt::format("PerformanceSet \"{}\"[{}] {}={}", node, port, field, value));
}

std::string IbsimFabric::ibsimLog() const {
  return readWholeFile(scratch_ + "/ibsim.log");
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
