#include "common/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

extern char** environ;

namespace ebb {

namespace {

using Clock = std::chrono::steady_clock;

int pollFor(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(timeout.count()));
}

std::vector<std::string> mergedEnv(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : extra)
    env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env)
    out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> cStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int decode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

ChildProcess::ChildProcess(const Spec& spec) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  int pipeFds[2] = {-1, -1};
  if (spec.stdinPipe) {
    if (::pipe2(pipeFds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    posix_spawn_file_actions_adddup2(&actions, pipeFds[0], 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  }
  const std::string out = spec.stdoutPath.empty() ? "/dev/null" : spec.stdoutPath;
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (spec.stderrPath.empty()) {
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  } else {
    posix_spawn_file_actions_addopen(&actions, 2, spec.stderrPath.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  std::vector<std::string> argv = spec.argv;
  std::vector<std::string> env = mergedEnv(spec.env);
  auto cArgv = cStrings(argv);
  auto cEnv = cStrings(env);
  const int rc =
      ::posix_spawnp(&pid_, argv.at(0).c_str(), &actions, nullptr, cArgv.data(), cEnv.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spec.stdinPipe) {
    ::close(pipeFds[0]);
    stdinFd_ = pipeFds[1];
  }
  if (rc != 0) {
    if (stdinFd_ >= 0) ::close(stdinFd_);
    throw std::runtime_error(
        fmt::format("cannot start {}: {} (is its Debian package installed? run scripts/setup.sh)",
                    argv[0], std::strerror(rc)));
  }
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
}

ChildProcess::~ChildProcess() {
  if (!status_) stop(std::chrono::milliseconds(3000));
  closeStdin();
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool ChildProcess::running() {
  return !wait(std::chrono::milliseconds(0)).has_value();
}

std::optional<int> ChildProcess::wait(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  if (pidfd_ >= 0 && pollFor(pidfd_, timeout) <= 0) return std::nullopt;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, pidfd_ >= 0 ? 0 : WNOHANG);
  if (r != pid_) return std::nullopt;
  status_ = decode(status);
  return status_;
}

void ChildProcess::signal(int sig) {
  if (!status_) ::kill(pid_, sig);
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  if (status_) return *status_;
  ::kill(pid_, SIGTERM);
  if (auto s = wait(grace)) return *s;
  ::kill(pid_, SIGKILL);
  return wait(std::chrono::milliseconds(5000)).value_or(-1);
}

bool ChildProcess::writeLine(const std::string& line) {
  if (stdinFd_ < 0) return false;
  const std::string data = line + "\n";
  return ::write(stdinFd_, data.data(), data.size()) == static_cast<ssize_t>(data.size());
}

void ChildProcess::closeStdin() {
  if (stdinFd_ >= 0) ::close(stdinFd_);
  stdinFd_ = -1;
}

std::string readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CommandResult runCommand(ChildProcess::Spec spec, std::chrono::milliseconds timeout) {
  return runCommand(std::move(spec), timeout, {}, timeout);
}

CommandResult runCommand(ChildProcess::Spec spec, std::chrono::milliseconds timeout,
                         const std::function<void()>& meanwhile, std::chrono::milliseconds every) {
  static int counter = 0;
  std::error_code ec;  // a TMPDIR that is no folder falls back to /tmp
  std::string dir = spec.cwd.empty() ? std::filesystem::temp_directory_path(ec).string() : spec.cwd;
  if (dir.empty()) dir = "/tmp";
  const std::string base = fmt::format("{}/cmd-{}-{}", dir, ::getpid(), ++counter);
  spec.stdoutPath = base + ".out";
  spec.stderrPath = base + ".err";
  CommandResult r;
  {
    ChildProcess child(spec);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::optional<int> status;
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      status = child.wait(std::max(std::chrono::milliseconds(0), std::min(left, every)));
      if (status || left <= every) break;
      if (meanwhile) meanwhile();
    }
    if (!status) {
      r.timedOut = true;
      status = child.stop(std::chrono::milliseconds(1000));
    }
    r.exitCode = *status;
  }
  r.out = readWholeFile(spec.stdoutPath);
  r.err = readWholeFile(spec.stderrPath);
  std::filesystem::remove(spec.stdoutPath, ec);
  std::filesystem::remove(spec.stderrPath, ec);
  return r;
}

bool waitForText(const std::string& path, const std::string& needle,
                 std::chrono::milliseconds timeout) {
  return waitForFile(
      path, [&](const std::string& text) { return text.find(needle) != std::string::npos; },
      timeout);
}

bool waitForFile(const std::string& path, const std::function<bool(const std::string&)>& done,
                 std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  if (fd >= 0) ::inotify_add_watch(fd, dir.c_str(), IN_MODIFY | IN_CREATE | IN_CLOSE_WRITE);
  bool found = false;
  while (true) {
    if (done(readWholeFile(path))) {
      found = true;
      break;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    // Wake on any change in the folder, and at least every 200 ms in case a
    // write raced the watch.
    if (fd >= 0 && pollFor(fd, std::min(left, std::chrono::milliseconds(200))) > 0) {
      char buf[4096];
      while (::read(fd, buf, sizeof buf) > 0) {
      }
    } else if (fd < 0) {
      pollFor(-1, std::min(left, std::chrono::milliseconds(50)));
    }
  }
  if (fd >= 0) ::close(fd);
  return found;
}

}  // namespace ebb
