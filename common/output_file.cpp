#include "common/output_file.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

namespace ebb {

namespace fs = std::filesystem;

Result<OutputFile> OutputFile::open(const std::string& path) {
  std::error_code ec;
  fs::path target(path);
  const fs::file_status st = fs::status(target, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return Status(ErrorCode::kIo, fmt::format("cannot create {}", path));
    return OutputFile(path, "", std::move(out));
  }
  // A symbolic link keeps pointing at the new file: replace its target.
  if (fs::is_symlink(fs::symlink_status(target, ec))) {
    const fs::path real = fs::canonical(target, ec);
    if (!ec) target = real;  // a dangling link is replaced
  }
  static std::atomic<unsigned> serial{0};
  const std::string tmp =
      fmt::format("{}.ebb-{}-{}.tmp", target.string(), ::getpid(), serial.fetch_add(1));
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) return Status(ErrorCode::kIo, fmt::format("cannot create {}", path));
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
