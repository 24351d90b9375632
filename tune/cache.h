#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "configs/proto/ebb.pb.h"     // generated
#include "configs/proto/replay.pb.h"  // generated
#include "configs/proto/report.pb.h"  // generated

namespace ebb::tune {

// 128-bit FNV-1a of `data`, as 32 hex digits (stable across machines and builds).
std::string hashHex(const std::string& data);

// Content hashes of the files runs read, each file read once.
class FileDigests {
 public:
  Result<std::string> of(const std::string& path);

 private:
  std::mutex mu_;
  std::map<std::string, std::string> byPath_;
};

// A finished run: its summary, or why the emulator gave up on it (a trace
// that never finishes under some setting). Runs are deterministic, so a
// failure is as final as a summary.
struct RunOutcome {
  results::RunSummary summary;
  std::string failure;
};

// What identifies a run: the fully-resolved config (file paths replaced by
// their contents' hashes, so a sweep split across machines agrees), and
// whether the agents gate or every link is on.
struct RunKey {
  std::string hash;
  std::string text;
};
Result<RunKey> runKey(const config::Config& resolved, bool gated, FileDigests& digests);

// Finished runs on disk, one file per run under `dir`: an interrupted sweep
// finds them again; shards' folders merge by copying files.
class RunCache {
 public:
  explicit RunCache(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  // nullopt when absent, unreadable or for another key (a collision).
  std::optional<RunOutcome> load(const RunKey& key) const;
  // Why the entry of `key` is there but does not load ("<file>: <why>"), or
  // empty when it is absent or good: what a merge that lacks a run reports.
  std::string corruption(const RunKey& key) const;
  // Written to a temporary file and renamed: an interruption leaves no half file.
  Status store(const RunKey& key, const RunOutcome& outcome) const;
  // Copies the entries of another cache folder that this one lacks or holds
  // corrupt (a good copy replaces a corrupt one); returns how many. An entry
  // of `otherDir` that is itself corrupt is not copied: "<file>: <why>" is
  // added to `corrupt` when given.
  Result<std::size_t> importFrom(const std::string& otherDir,
                                 std::vector<std::string>* corrupt = nullptr) const;

 private:
  std::string dir_;
};

}  // namespace ebb::tune
