#include "common/file_io.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <fmt/format.h>

namespace ebb {

namespace fs = std::filesystem;

Status writeFile(const fs::path& path, std::string_view contents) {
  const fs::path tmp = fmt::format("{}.{}.{}.tmp", path.string(), ::getpid(),
                                   std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      return {ErrorCode::kIo, fmt::format("cannot write {}", path.string())};
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return {ErrorCode::kIo, fmt::format("cannot write {}: {}", path.string(), ec.message())};
  }
  return Status::ok();
}

}  // namespace ebb
