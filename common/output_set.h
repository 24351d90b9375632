#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <string_view>

#include "common/file_io.h"
#include "common/status.h"

namespace ebb {

// One run's output files, replaced in a folder as a set (docs/replay.md,
// "Outputs"): the folder holds the complete earlier run or the complete new
// one, never a mix, whenever the process is stopped (SIGTERM, SIGINT,
// SIGKILL, a crash).
//
// The files are written into a staging folder inside `dir` (.ebb-staging-PID).
// commit() renames it to `dir`/.ebb-commit in one step: the commit point. The
// files are then moved into place and the previous run's files that the new
// run does not have are removed; SIGTERM, SIGINT and SIGHUP wait until that is
// done. The folder's manifest, `dir`/.ebb-run, lists the files of the run it
// holds. A commit cut short (SIGKILL in those microseconds) is finished by the
// next OutputSet::begin on the folder, or by finishInterruptedCommit.
class OutputSet {
 public:
  // Finishes an interrupted commit in `dir`, removes staging folders of
  // processes that are gone, and opens a new staging folder (creating `dir`
  // if needed; prepareOutputFolder checks it before the work). `owned`: names the command writes
  // (relative paths), removed at commit when the new run lacks them, for folders written before
  // manifests existed.
  static Result<OutputSet> begin(const std::filesystem::path& dir, std::set<std::string> owned);

  OutputSet(OutputSet&& other) noexcept;
  OutputSet& operator=(OutputSet&&) = delete;
  OutputSet(const OutputSet&) = delete;
  // Without commit(): the staging folder is removed; the folder keeps the
  // earlier run.
  ~OutputSet();

  // Where to write: the staging folder, with the same relative layout as `dir`.
  const std::filesystem::path& staging() const { return staging_; }
  // Writes one file of the run (relative path, e.g. "plots/a.svg"). Files
  // written into staging() by other means (gnuplot) belong to the run too.
  Status write(std::string_view relative, std::string_view contents);
  // Replaces the folder's run by every file in staging() (see above). E_IO
  // naming the file.
  Status commit();

 private:
  OutputSet(std::filesystem::path dir, std::filesystem::path staging, std::set<std::string> owned);

  std::filesystem::path dir_;
  std::filesystem::path staging_;
  std::set<std::string> owned_;
  bool done_ = false;
};

// Whether files `names` (relative paths) can take their places in `dir`:
// E_IO naming a folder where a file goes, or a file where a folder goes.
// commit() checks this before its commit point; a command checks it before
// its run too, so such a folder costs no run.
Status checkReplaceable(const std::filesystem::path& dir, const std::set<std::string>& names);

// Whether `dir` holds no run of another command: every file its manifest
// lists is one of `owned` (the names this command writes). Else E_INVALID
// naming those files: replacing the run would remove another command's
// results. OutputSet::begin checks it; a command checks it before its run too.
Status checkHoldsOwnRun(const std::filesystem::path& dir, const std::set<std::string>& owned);

// Before a run that writes the set `names` into the --out folder `dir`:
// prepareOutputFolder (creating it in `created`), then checkReplaceable and
// checkHoldsOwnRun. "" when the run may go ahead, else the error as a
// command prints it after its name ("--out: E_IO: out/report.json: ...").
std::string prepareRunFolder(const std::string& dir, const std::set<std::string>& names,
                             CreatedFolders& created);

// Completes a commit that was cut short in `dir` (nothing to do when none
// was). Idempotent.
Status finishInterruptedCommit(const std::filesystem::path& dir);

}  // namespace ebb
