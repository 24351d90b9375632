#pragma once

// Helpers shared by the fuzz targets: a scratch file the readers can open by
// path (they are fuzzed through their public, file-based API), and a check
// that turns a broken promise of a reader into a crash libFuzzer records.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace ebb::fuzz {

// A reader's documented promise does not hold for this input: report and
// abort, so libFuzzer saves the input as a crash.
[[noreturn]] inline void broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz: broken promise: %s: %s\n", what, detail.c_str());
  std::abort();
}

#define EBB_FUZZ_CHECK(cond, detail)                   \
  do {                                                 \
    if (!(cond)) ::ebb::fuzz::broken(#cond, (detail)); \
  } while (false)

// A file under the system's temporary directory, unique to this process,
// rewritten for each input and removed at exit.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& stem)
      : path_(std::filesystem::temp_directory_path() /
              (stem + "-" + std::to_string(::getpid()) + ".txt")) {}
  ~ScratchFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::string& write(const std::uint8_t* data, std::size_t size) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out) broken("scratch file written", path_.string());
    name_ = path_.string();
    return name_;
  }

 private:
  std::filesystem::path path_;
  std::string name_;
};

// An error of a reader must name its input (the file, or the source name).
inline void checkNamesSource(const std::string& message, const std::string& source) {
  EBB_FUZZ_CHECK(message.find(source) != std::string::npos, message);
}

}  // namespace ebb::fuzz
