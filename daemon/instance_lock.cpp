#include "daemon/instance_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

namespace ebb::daemon {
namespace {

// The pid the holder wrote, or "?" (it may be writing it right now).
std::string holderPid(int fd) {
  char buf[32] = {};
  const ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  std::string s = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s.empty() ? "?" : s;
}

// A file name part: letters, digits, '-', '_' and '.' kept, the rest '_'.
std::string safe(std::string s) {
  for (char& c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) c = '_';
  }
  return s;
}

}  // namespace

Result<InstanceLock> InstanceLock::acquire(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status(ErrorCode::kIo,
                  fmt::format("agent.lock_file {}: cannot open: {}", path, std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    const std::string pid = holderPid(fd);
    ::close(fd);
    if (e == EWOULDBLOCK) {
      return Status(ErrorCode::kUnavailable,
                    fmt::format("another ebb agent (pid {}) holds {}: one agent per fabric; stop "
                                "it first, or give this one another agent.lock_file if it "
                                "manages another fabric",
                                pid, path));
    }
    return Status(ErrorCode::kIo,
                  fmt::format("agent.lock_file {}: cannot lock: {}", path, std::strerror(e)));
  }
  const std::string me = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    // The lock holds without the pid: only the message of a second agent suffers.
  }
  return InstanceLock(fd, path);
}

InstanceLock::InstanceLock(InstanceLock&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)) {}

InstanceLock& InstanceLock::operator=(InstanceLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    path_ = std::move(o.path_);
  }
  return *this;
}

// The file is left in place: unlinking it would let a third agent lock a new
// file while a second one still waits on the old one.
InstanceLock::~InstanceLock() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {
// "ebb-agent-<ca|any>-<port|any>[-ibsim-<socket>]": one agent's files.
std::string instanceName(const ib::UmadPortSpec& port, const char* ibsimSocket) {
  std::string name = fmt::format("ebb-agent-{}-{}", port.caName.empty() ? "any" : safe(port.caName),
                                 port.port == 0 ? std::string("any") : std::to_string(port.port));
  if (ibsimSocket != nullptr && *ibsimSocket != '\0') name += "-ibsim-" + safe(ibsimSocket);
  return name;
}

bool writable(const std::string& dir) {
  return !dir.empty() && ::access(dir.c_str(), W_OK) == 0;
}
}  // namespace

std::string defaultLockPath(const ib::UmadPortSpec& port, const std::string& runDir,
                            const char* xdgRuntimeDir, const char* ibsimSocket) {
  std::error_code ec;
  std::string dir = std::filesystem::temp_directory_path(ec).string();
  if (dir.empty()) dir = "/tmp";
  if (writable(runDir)) {
    dir = runDir;
  } else if (xdgRuntimeDir != nullptr && *xdgRuntimeDir != '\0') {
    dir = xdgRuntimeDir;
  }
  return dir + "/" + instanceName(port, ibsimSocket) + ".lock";
}

std::string defaultStatePath(const ib::UmadPortSpec& port, const std::string& stateDir,
                             const std::string& runDir, const char* xdgRuntimeDir,
                             const char* ibsimSocket) {
  if (writable(stateDir)) return stateDir + "/" + instanceName(port, ibsimSocket) + ".gates";
  std::string path = defaultLockPath(port, runDir, xdgRuntimeDir, ibsimSocket);
  return path.substr(0, path.size() - std::string(".lock").size()) + ".gates";
}

std::string lockFileFor(const ib::UmadPortSpec& port, const std::string& configured) {
  if (!configured.empty()) return configured;
  return defaultLockPath(port, "/run/ebb", std::getenv("XDG_RUNTIME_DIR"),
                         std::getenv("IBSIM_SOCKNAME"));
}

std::string stateFileFor(const ib::UmadPortSpec& port, const std::string& configured) {
  if (!configured.empty()) return configured;
  return defaultStatePath(port, "/var/lib/ebb", "/run/ebb", std::getenv("XDG_RUNTIME_DIR"),
                          std::getenv("IBSIM_SOCKNAME"));
}

}  // namespace ebb::daemon
