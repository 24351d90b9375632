#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>

namespace ebb::daemon {

// Under ibsim, the preload library that stands in for libibumad
// (libumad2sim) prints "ERR: umad2sim_write: cannot write" on stderr for
// every MAD once ibsim is gone — thousands of lines. While installed, this
// filter sits between the process's stderr (fd 2) and where it went: the
// first such line becomes one clear line saying the simulator is gone, the
// rest are counted and summed up once when the filter is removed. Every
// other line passes unchanged and in order.
class PreloadNoiseFilter {
 public:
  // A filter when LD_PRELOAD names libumad2sim, else none (nothing changes).
  static std::unique_ptr<PreloadNoiseFilter> installIfUnderIbsim();
  // Puts fd 2 back, lets the reader drain what is left, prints the summary.
  ~PreloadNoiseFilter();
  PreloadNoiseFilter(const PreloadNoiseFilter&) = delete;
  PreloadNoiseFilter& operator=(const PreloadNoiseFilter&) = delete;

  // What the filter does with one line (without its newline), as written to
  // the real stderr: the line itself, the one clear line, or nothing.
  std::string filterLine(const std::string& line);
  std::size_t suppressed() const { return suppressed_; }
  static constexpr const char* kNoise = "ERR: umad2sim_write: cannot write";

  PreloadNoiseFilter() = default;  // for filterLine() alone (tests)

 private:
  void pump();

  int realStderr_ = -1;  // where fd 2 went before
  int readEnd_ = -1;
  std::thread reader_;
  std::size_t suppressed_ = 0;
};

}  // namespace ebb::daemon
