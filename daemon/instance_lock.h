#pragma once

#include <string>

#include "common/status.h"
#include "ib_backend/umad_transport.h"

namespace ebb::daemon {

// One `ebb agent` per fabric (docs/ib_agent.md, *One agent per fabric*): an
// exclusive flock on a lock file, taken before the umad port is opened and
// held until the process exits (the kernel drops it with the last descriptor,
// also on a crash). The file holds the holder's pid, for the error message.
// flock locks belong to the open file description, so a second acquire of the
// same path fails also inside one process.
class InstanceLock {
 public:
  // E_UNAVAILABLE when another process (or open file) holds it, naming the
  // path and the holder's pid; E_IO when the file cannot be opened.
  static Result<InstanceLock> acquire(const std::string& path);

  InstanceLock(InstanceLock&& o) noexcept;
  InstanceLock& operator=(InstanceLock&& o) noexcept;
  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;
  ~InstanceLock();

  const std::string& path() const { return path_; }

 private:
  InstanceLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// The default lock file when agent.lock_file is empty: one per umad CA and
// port as configured (and per ibsim socket under ibsim), in /run/ebb when
// that folder is writable, else $XDG_RUNTIME_DIR, else the temporary folder
// ($TMPDIR or /tmp):
// "<dir>/ebb-agent-<ca|any>-<port|any>[-ibsim-<socket>].lock".
// `runDir`, `xdgRuntimeDir` and `ibsimSocket` come from the environment
// (parameters so tests can choose).
std::string defaultLockPath(const ib::UmadPortSpec& port, const std::string& runDir,
                            const char* xdgRuntimeDir, const char* ibsimSocket);

// The default state file when agent.state_file is empty (daemon/gate_record.h):
// "<stateDir>/<name>.gates" when `stateDir` (/var/lib/ebb, the service's
// StateDirectory) is writable, else beside the default lock file, named as it.
std::string defaultStatePath(const ib::UmadPortSpec& port, const std::string& stateDir,
                             const std::string& runDir, const char* xdgRuntimeDir,
                             const char* ibsimSocket);

// The files an agent on `port` uses: `configured` (agent.lock_file,
// agent.state_file) when set, else the default above for this machine
// (/run/ebb, /var/lib/ebb, $XDG_RUNTIME_DIR, $IBSIM_SOCKNAME).
std::string lockFileFor(const ib::UmadPortSpec& port, const std::string& configured);
std::string stateFileFor(const ib::UmadPortSpec& port, const std::string& configured);

}  // namespace ebb::daemon
