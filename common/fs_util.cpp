#include "common/fs_util.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include <fmt/format.h>

namespace ebb {

namespace fs = std::filesystem;

namespace {

Status listError(const fs::path& p, const std::error_code& ec) {
  return {ErrorCode::kIo, fmt::format("cannot read {}: {}", p.string(), ec.message())};
}

// Adds `e` to `files` when it is a wanted regular file; E_IO when its type
// cannot be found.
Status consider(const fs::directory_entry& e, const std::function<bool(const fs::path&)>& wanted,
                std::vector<fs::path>& files) {
  if (wanted && !wanted(e.path())) return Status::ok();
  std::error_code ec;
  const fs::file_status st = e.status(ec);  // follows symlinks
  if (ec) return listError(e.path(), ec);
  if (fs::is_regular_file(st)) files.push_back(e.path());
  return Status::ok();
}

// Walks `dir` with an iterator of type It, the error_code way throughout.
template <class It>
Result<std::vector<fs::path>> walk(const fs::path& dir,
                                   const std::function<bool(const fs::path&)>& wanted) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (It it(dir, ec); !ec && it != It(); it.increment(ec)) {
    if (Status s = consider(*it, wanted, files); !s.isOk()) return s;
  }
  if (ec) return listError(dir, ec);
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

Result<std::vector<fs::path>> listRegularFiles(const fs::path& dir, bool recursive,
                                               const std::function<bool(const fs::path&)>& wanted) {
  return recursive ? walk<fs::recursive_directory_iterator>(dir, wanted)
                   : walk<fs::directory_iterator>(dir, wanted);
}

std::string absolutePath(const fs::path& p) {
  std::error_code ec;
  const fs::path a = fs::absolute(p, ec);
  return ec ? p.string() : a.string();
}

bool processAlive(const std::string& pidText) {
  long pid = 0;
  const char* end = pidText.data() + pidText.size();
  const auto [ptr, ec] = std::from_chars(pidText.data(), end, pid);
  if (ec != std::errc() || ptr != end || pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace ebb
