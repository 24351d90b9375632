#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ebb {

// A child process started with posix_spawn, waited for through a pidfd (no
// sleeping), and killed by PID when it outlives its owner.
class ChildProcess {
 public:
  struct Spec {
    std::vector<std::string> argv;
    std::map<std::string, std::string> env;  // added to (or replacing) the parent's
    std::string cwd;
    std::string stdoutPath;  // empty: /dev/null
    std::string stderrPath;  // empty: same as stdout
    bool stdinPipe = false;  // keep a pipe to the child's stdin (ibsim's console)
  };

  // Throws std::runtime_error naming the program when it cannot be started.
  explicit ChildProcess(const Spec& spec);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  // Waits for exit; the exit status (128+signal if killed), or nullopt on timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  // Sends `sig` if the child has not exited yet.
  void signal(int sig);
  // TERM, wait up to `grace`, then KILL; returns the exit status.
  int stop(std::chrono::milliseconds grace);
  // Writes a line to the child's stdin pipe.
  bool writeLine(const std::string& line);
  void closeStdin();

 private:
  pid_t pid_ = -1;
  int pidfd_ = -1;
  int stdinFd_ = -1;
  std::optional<int> status_;
};

// Runs a command to completion under a deadline; stdout and stderr captured.
struct CommandResult {
  int exitCode = -1;
  bool timedOut = false;
  std::string out;
  std::string err;
};
CommandResult runCommand(ChildProcess::Spec spec, std::chrono::milliseconds timeout);
// The same, calling `meanwhile` about every `every` while the command runs
// (a test that must keep reacting to another process during a slow command).
CommandResult runCommand(ChildProcess::Spec spec, std::chrono::milliseconds timeout,
                         const std::function<void()>& meanwhile, std::chrono::milliseconds every);

// Waits until `path` contains `needle`, watching the file's folder with
// inotify; false on timeout.
bool waitForText(const std::string& path, const std::string& needle,
                 std::chrono::milliseconds timeout);

// Waits until `done(content of path)` holds, the same way; false on timeout.
bool waitForFile(const std::string& path, const std::function<bool(const std::string&)>& done,
                 std::chrono::milliseconds timeout);
std::string readWholeFile(const std::string& path);

}  // namespace ebb
