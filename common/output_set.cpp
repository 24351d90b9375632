#include "common/output_set.h"

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "common/file_io.h"
#include "common/fs_util.h"

namespace ebb {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kManifest = ".ebb-run";
constexpr std::string_view kCommit = ".ebb-commit";
constexpr std::string_view kStagingPrefix = ".ebb-staging-";

std::set<std::string> readManifest(const fs::path& file) {
  std::set<std::string> names;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    // Only plain relative names: a damaged manifest never reaches outside.
    if (!line.empty() && line.find("..") == std::string::npos && line.front() != '/')
      names.insert(line);
  }
  return names;
}

// Holds SIGTERM, SIGINT and SIGHUP while the files move into place; a signal
// that arrives meanwhile is delivered when the scope ends.
class SignalsHeld {
 public:
  SignalsHeld() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGTERM, SIGINT, SIGHUP})
      sigaddset(&set, s);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~SignalsHeld() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  sigset_t old_;
};

Status ioError(const fs::path& path, const std::string& what, const std::error_code& ec) {
  return {ErrorCode::kIo, fmt::format("{}: {}: {}", path.string(), what, ec.message())};
}

// Moves every file of `commitDir` (listed in its manifest) into `dir`,
// removes the earlier run's files the new one lacks, then installs the
// manifest. Each step can be repeated after an interruption.
Status rollForward(const fs::path& dir, const fs::path& commitDir,
                   const std::set<std::string>& owned) {
  std::error_code ec;
  // The manifest moves last: without it, an interruption came after it was
  // installed and only the emptied folder is left. (Reading its absence as
  // an empty run would remove every file the new run just moved in.)
  if (!fs::exists(commitDir / kManifest, ec)) {
    fs::remove_all(commitDir, ec);
    return Status::ok();
  }
  const std::set<std::string> next = readManifest(commitDir / kManifest);
  std::set<std::string> previous = readManifest(dir / kManifest);
  previous.insert(owned.begin(), owned.end());
  for (const std::string& name : previous) {
    if (next.count(name) == 0) fs::remove(dir / name, ec);
  }
  for (const std::string& name : next) {
    const fs::path from = commitDir / name;
    if (!fs::exists(from, ec)) continue;  // moved before an interruption
    const fs::path to = dir / name;
    fs::create_directories(to.parent_path(), ec);
    fs::rename(from, to, ec);
    if (ec) return ioError(to, "cannot move the new file into place", ec);
  }
  fs::rename(commitDir / kManifest, dir / kManifest, ec);
  if (ec) return ioError(dir / kManifest, "cannot install the manifest", ec);
  fs::remove_all(commitDir, ec);
  return Status::ok();
}

}  // namespace

Status finishInterruptedCommit(const fs::path& dir) {
  std::error_code ec;
  const fs::path commitDir = dir / kCommit;
  if (!fs::is_directory(commitDir, ec)) return Status::ok();
  SignalsHeld held;
  return rollForward(dir, commitDir, {});
}

Status checkHoldsOwnRun(const fs::path& dir, const std::set<std::string>& owned) {
  std::vector<std::string> foreign;
  for (const std::string& name : readManifest(dir / kManifest)) {
    if (owned.count(name) == 0) foreign.push_back(name);
  }
  if (foreign.empty()) return Status::ok();
  constexpr std::size_t kNamed = 4;
  std::string names;
  for (std::size_t i = 0; i < foreign.size() && i < kNamed; ++i)
    names += (i == 0 ? "" : ", ") + foreign[i];
  if (foreign.size() > kNamed) names += fmt::format(" and {} more", foreign.size() - kNamed);
  return {ErrorCode::kInvalidArgument,
          fmt::format("{}: holds the results of another ebb command ({}; listed in {}), which "
                      "this run would remove: give another folder or move them away (nothing "
                      "was changed in {})",
                      dir.string(), names, (dir / kManifest).string(), dir.string())};
}

std::string prepareRunFolder(const std::string& dir, const std::set<std::string>& names,
                             CreatedFolders& created) {
  if (Status s = prepareOutputFolder(dir, "--out", &created); !s.isOk()) return s.toString();
  // A folder (or file) in the way of a result, or another command's run:
  // said now, not after the run.
  for (Status s : {checkReplaceable(dir, names), checkHoldsOwnRun(dir, names)}) {
    if (!s.isOk()) return "--out: " + s.toString();
  }
  return {};
}

Result<OutputSet> OutputSet::begin(const fs::path& dir, std::set<std::string> owned) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return ioError(dir, "cannot create the folder", ec);
  if (Status s = finishInterruptedCommit(dir); !s.isOk()) return s;
  if (Status s = checkHoldsOwnRun(dir, owned); !s.isOk()) return s;
  // The error_code forms throughout: a folder changing under us is no crash.
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(kStagingPrefix, 0) == 0 && !processAlive(name.substr(kStagingPrefix.size()))) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
  ec.clear();  // leftovers not removed are harmless
  const fs::path staging = dir / fmt::format("{}{}", kStagingPrefix, ::getpid());
  fs::remove_all(staging, ec);
  fs::create_directories(staging, ec);
  if (ec) return ioError(staging, "cannot create the staging folder", ec);
  return OutputSet(dir, staging, std::move(owned));
}

OutputSet::OutputSet(fs::path dir, fs::path staging, std::set<std::string> owned)
    : dir_(std::move(dir)), staging_(std::move(staging)), owned_(std::move(owned)) {}

OutputSet::OutputSet(OutputSet&& other) noexcept
    : dir_(std::move(other.dir_)),
      staging_(std::move(other.staging_)),
      owned_(std::move(other.owned_)),
      done_(other.done_) {
  other.done_ = true;
}

OutputSet::~OutputSet() {
  if (done_) return;
  std::error_code ignored;
  fs::remove_all(staging_, ignored);
}

Status OutputSet::write(std::string_view relative, std::string_view contents) {
  const fs::path path = staging_ / relative;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return ioError(path.parent_path(), "cannot create the folder", ec);
  return writeFile(path, contents);
}

Status checkReplaceable(const fs::path& dir, const std::set<std::string>& names) {
  for (const std::string& name : names) {
    // Each folder on the way must be a folder (or absent), the file itself a
    // file (or absent): else the move would fail halfway through the set.
    fs::path at = dir;
    const fs::path rel(name);
    for (auto part = rel.begin(); part != rel.end(); ++part) {
      at /= *part;
      const bool last = std::next(part) == rel.end();
      std::error_code ec;
      const fs::file_status st = fs::symlink_status(at, ec);
      if (!fs::exists(st)) break;
      if (last ? fs::is_directory(st) : !fs::is_directory(st)) {
        return {ErrorCode::kIo,
                fmt::format("{}: is {}, where the run writes {} (move it away; nothing was "
                            "changed in {})",
                            at.string(), last ? "a folder" : "not a folder", name, dir.string())};
      }
    }
  }
  return Status::ok();
}

Status OutputSet::commit() {
  std::set<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(staging_, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) files.insert(fs::relative(it->path(), staging_, ec).string());
  }
  if (ec) return ioError(staging_, "cannot list the run's files", ec);
  // Checked before the commit point: a file that cannot take its place
  // leaves the folder as it was, never a mix of two runs.
  if (Status s = checkReplaceable(dir_, files); !s.isOk()) return s;
  std::string manifest;
  for (const std::string& f : files)
    manifest += f + "\n";
  if (Status s = writeFile(staging_ / kManifest, manifest); !s.isOk()) return s;
  SignalsHeld held;
  const fs::path commitDir = dir_ / kCommit;
  fs::rename(staging_, commitDir, ec);  // the commit point
  if (ec) return ioError(commitDir, "cannot commit the run's files", ec);
  done_ = true;
  return rollForward(dir_, commitDir, owned_);
}

}  // namespace ebb
