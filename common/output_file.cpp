#include "common/output_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "common/fs_util.h"

namespace ebb {

namespace fs = std::filesystem;

namespace {

// Removes the temporary files of `target` (<target>.ebb-<pid>-<n>.tmp) that
// runs killed outright left behind: those of processes no longer running.
void removeLeftovers(const fs::path& target) {
  const std::string prefix = target.filename().string() + ".ebb-";
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() + 4 || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - 4, 4, ".tmp") != 0)
      continue;
    const std::string rest = name.substr(prefix.size());  // <pid>-<n>.tmp
    const std::size_t dash = rest.find('-');
    if (dash == std::string::npos || processAlive(rest.substr(0, dash))) continue;
    std::error_code ignored;
    fs::remove(it->path(), ignored);
  }
}

// After a failed std::ofstream open: its errno says why (a missing folder,
// permissions).
Status createError(const std::string& path) {
  const int err = errno;
  if (err == 0) return {ErrorCode::kIo, fmt::format("cannot create {}", path)};
  return {ErrorCode::kIo, fmt::format("cannot create {}: {}", path, std::strerror(err))};
}

}  // namespace

Result<OutputFile> OutputFile::open(const std::string& path) {
  // Said before trying: an empty path would write a temporary file into the
  // working folder and fail only at the rename, and a folder fails with no
  // reason from the stream.
  if (path.empty()) return Status(ErrorCode::kIo, "cannot create '': empty path");
  std::error_code ec;
  fs::path target(path);
  const fs::file_status st = fs::status(target, ec);
  if (fs::is_directory(st)) {
    return Status(ErrorCode::kIo, fmt::format("cannot create {}: is a directory", path));
  }
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return createError(path);
    return OutputFile(path, "", std::move(out));
  }
  // A symbolic link keeps pointing at the new file: replace its target.
  if (fs::is_symlink(fs::symlink_status(target, ec))) {
    const fs::path real = fs::canonical(target, ec);
    if (!ec) target = real;  // a dangling link is replaced
  }
  removeLeftovers(target);
  static std::atomic<unsigned> serial{0};
  const std::string tmp =
      fmt::format("{}.ebb-{}-{}.tmp", target.string(), ::getpid(), serial.fetch_add(1));
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) return createError(path);
  return OutputFile(target.string(), tmp, std::move(out));
}

OutputFile::OutputFile(std::string target, std::string tmp, std::ofstream out)
    : target_(std::move(target)), tmp_(std::move(tmp)), out_(std::move(out)) {}

OutputFile::OutputFile(OutputFile&& o) noexcept
    : target_(std::move(o.target_)), tmp_(std::exchange(o.tmp_, {})), out_(std::move(o.out_)) {}

OutputFile::~OutputFile() {
  if (tmp_.empty()) return;
  out_.close();
  std::error_code ignored;
  fs::remove(tmp_, ignored);
}

Status OutputFile::writeError() const {
  return {ErrorCode::kIo, fmt::format("cannot write {}", target_)};
}

Status OutputFile::commit() {
  out_.close();
  if (!out_) return writeError();
  if (tmp_.empty()) return Status::ok();
  std::error_code ec;
  fs::rename(tmp_, target_, ec);
  if (ec) return {ErrorCode::kIo, fmt::format("cannot write {}: {}", target_, ec.message())};
  tmp_.clear();
  return Status::ok();
}

}  // namespace ebb
