#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "configs/proto/ebb.pb.h"     // generated
#include "configs/proto/replay.pb.h"  // generated
#include "tune/cache.h"

namespace ebb::tune {

// One emulator run of a sweep, in-process (runEmulation).
struct RunJob {
  RunKey key;
  config::Config cfg;  // resolved, paths absolute
  bool gated = true;   // false: every link on, the reference
  std::string label;   // for progress and errors
};

struct ExecOptions {
  int jobs = 1;  // worker threads
  // Compute only the jobs i (in order, duplicates removed) with i % shardCount == shardIndex.
  int shardIndex = 0;
  int shardCount = 1;
  bool computeMissing = true;  // false (merging shards): a run missing from the cache is an error
  std::ostream* progress = nullptr;  // progress and ETA lines; null: quiet
  bool tty = false;                  // one updating line instead of one line per run
  std::string stage;                 // prefix of progress lines ("rung 1/3")
  // Counts the runs stored in the cache, if set (read by InterruptNotice).
  std::atomic<std::size_t>* stored = nullptr;
};

struct ExecCounters {
  std::size_t computed = 0;  // emulator runs done now
  std::size_t cached = 0;    // found in the cache
  std::size_t skipped = 0;   // left to other shards
};

// Runs every job missing from the cache on a pool of threads, storing each
// result as soon as it is done (so an interrupted sweep loses at most the runs
// in flight). Returns the summaries available, by key hash. Runs are
// deterministic, so the order they finish in does not matter. A gated run
// the emulator gives up on is an outcome (a failure), not an error; a failed
// reference run, or a file that cannot be read, stops the sweep.
Result<std::map<std::string, RunOutcome>> executeRuns(const std::vector<RunJob>& jobs,
                                                      const RunCache& cache,
                                                      const ExecOptions& options,
                                                      ExecCounters& counters);

}  // namespace ebb::tune
