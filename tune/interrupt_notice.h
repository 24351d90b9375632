#pragma once

#include <atomic>
#include <cstddef>
#include <string>

namespace ebb::tune {

// While it lives, SIGINT, SIGTERM and SIGHUP end a sweep with one line on
// stderr saying how many runs it computed are safe in the cache and that the
// same command resumes it (docs/tune.md, "Running it"); the process then dies
// of the signal as it would have (a shell shows 130 for Ctrl-C). Runs are
// stored whole (temporary file and rename), so nothing else needs undoing.
// One at a time per process.
class InterruptNotice {
 public:
  explicit InterruptNotice(const std::string& cacheDir);
  ~InterruptNotice();
  InterruptNotice(const InterruptNotice&) = delete;
  InterruptNotice& operator=(const InterruptNotice&) = delete;

  // Counts runs stored in the cache (ExecOptions::stored).
  std::atomic<std::size_t>* stored();
};

}  // namespace ebb::tune
