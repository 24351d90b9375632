#include "common/file_io.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "common/output_file.h"

namespace ebb {

namespace fs = std::filesystem;

Status writeFile(const fs::path& path, std::string_view contents) {
  Result<OutputFile> file = OutputFile::open(path.string());
  if (!file) return file.status();
  file->stream().write(contents.data(), static_cast<std::streamsize>(contents.size()));
  return file->commit();
}

Status checkReadableFile(const fs::path& path, std::string_view what) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) {
    return {ErrorCode::kIo, fmt::format("{} {}: no such file", what, path.string())};
  }
  if (fs::is_directory(st)) {
    return {ErrorCode::kIo,
            fmt::format("{} {}: is a folder, expected a file", what, path.string())};
  }
  std::ifstream probe(path, std::ios::binary);
  if (!probe) {
    return {ErrorCode::kIo,
            fmt::format("{} {}: cannot be opened for reading (permissions?)", what, path.string())};
  }
  return Status::ok();
}

std::string_view withoutUtf8Bom(std::string_view text) {
  if (text.substr(0, kUtf8Bom.size()) == kUtf8Bom) text.remove_prefix(kUtf8Bom.size());
  return text;
}

void skipUtf8Bom(std::istream& in) {
  // Byte by byte with peek, so a pipe works too; a text whose first bytes
  // only begin the mark is not UTF-8 text, and its reader refuses it anyway.
  for (char c : kUtf8Bom) {
    if (in.peek() != static_cast<unsigned char>(c)) return;
    in.get();
  }
}

bool readBoundedLine(std::istream& in, std::string& line, bool& tooLong, std::size_t maxBytes) {
  line.clear();
  tooLong = false;
  std::streambuf* sb = in.rdbuf();
  if (sb == nullptr || !in.good()) return false;
  for (;;) {
    const int c = sb->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return !line.empty();
    }
    if (c == '\n') return true;
    if (line.size() >= maxBytes) {
      tooLong = true;
      return false;
    }
    line.push_back(static_cast<char>(c));
  }
}

std::string lineTooLongRule(std::string_view what) {
  return fmt::format("line longer than {} bytes: not a text {}", kMaxTextLine, what);
}

std::string binaryLineRule(std::string_view line, std::string_view what) {
  if (line.find('\0') == std::string_view::npos) return {};
  return fmt::format("binary data (NUL byte): not a text {}", what);
}

namespace {
bool isControl(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  return c < 0x20 || c == 0x7F;
}
}  // namespace

bool hasControlBytes(std::string_view text) {
  return std::any_of(text.begin(), text.end(), isControl);
}

std::string printable(std::string_view text, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i == max) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (isControl(text[i])) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

namespace {
// Proves `dir` writable with a probe file; E_IO naming `what` otherwise.
Status probeWritable(const fs::path& dir, const std::string& what) {
  std::error_code ec;
  const fs::path probe = dir / fmt::format(".ebb-write-probe.{}", ::getpid());
  std::ofstream out(probe, std::ios::binary | std::ios::trunc);
  out << "probe\n";
  out.close();
  const bool ok = static_cast<bool>(out);
  fs::remove(probe, ec);
  if (ok) return Status::ok();
  return {ErrorCode::kIo,
          fmt::format("{}: cannot write into the folder (permissions, read-only file system or "
                      "full disk)",
                      what)};
}
}  // namespace

Status checkOutputFile(const fs::path& path, std::string_view option,
                       const std::vector<fs::path>& inputs) {
  if (path.empty())
    return {ErrorCode::kInvalidArgument, fmt::format("{}: an empty file name", option)};
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("{} {}: is a folder, expected a file name", option, path.string())};
  }
  for (const fs::path& in : inputs) {
    if (fs::equivalent(path, in, ec) && !ec) {
      return {ErrorCode::kInvalidArgument,
              fmt::format("{} {}: is the input {} itself: writing it would destroy it", option,
                          path.string(), in.string())};
    }
  }
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) {
    return {ErrorCode::kIo,
            fmt::format("{} {}: its folder {} {}", option, path.string(), dir.string(),
                        fs::exists(dir, ec) ? "is not a folder" : "does not exist")};
  }
  return probeWritable(dir, fmt::format("{} {}", option, path.string()));
}

namespace {
// The folders an interrupted run removes: fixed storage, as a signal handler
// may not allocate. One CreatedFolders is live at a time (one command).
constexpr std::size_t kMaxInterruptFolders = 32;
constexpr std::size_t kMaxInterruptPath = 4096;
char gInterruptFolders[kMaxInterruptFolders][kMaxInterruptPath];
volatile std::sig_atomic_t gInterruptCount = 0;

extern "C" void removeFoldersAndDie(int sig) {
  for (auto i = static_cast<std::size_t>(gInterruptCount); i-- > 0;)
    ::rmdir(gInterruptFolders[i]);  // fails on a folder that holds anything
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// Registers `folders` (outermost first) and, for SIGINT and SIGTERM still at
// their default, the handler; an empty list takes the handler back off.
void setInterruptFolders(const std::vector<fs::path>& folders) {
  gInterruptCount = 0;
  std::size_t n = 0;
  for (const fs::path& f : folders) {
    const std::string s = fs::absolute(f).string();
    if (n == kMaxInterruptFolders || s.size() >= kMaxInterruptPath) break;
    std::memcpy(gInterruptFolders[n], s.c_str(), s.size() + 1);
    ++n;
  }
  gInterruptCount = static_cast<std::sig_atomic_t>(n);
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction now {};
    if (::sigaction(sig, nullptr, &now) != 0) continue;
    if (n > 0 && now.sa_handler == SIG_DFL) {
      struct sigaction act {};
      act.sa_handler = removeFoldersAndDie;
      sigemptyset(&act.sa_mask);
      ::sigaction(sig, &act, nullptr);
    } else if (n == 0 && now.sa_handler == removeFoldersAndDie) {
      ::signal(sig, SIG_DFL);  // a handler another part set since stays
    }
  }
}
}  // namespace

void CreatedFolders::keep() {
  created_.clear();
  setInterruptFolders(created_);
}

CreatedFolders::~CreatedFolders() {
  setInterruptFolders({});
  std::error_code ec;
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    if (!fs::is_directory(*it, ec) || !fs::is_empty(*it, ec)) return;
    fs::remove(*it, ec);
  }
}

std::error_code CreatedFolders::create(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> missing;  // innermost first
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir, ec);
  if (ec) return ec;
  created_.insert(created_.end(), missing.rbegin(), missing.rend());
  setInterruptFolders(created_);
  return ec;
}

Status prepareOutputFolder(const std::string& dir, std::string_view option,
                           CreatedFolders* created) {
  if (dir.empty()) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("{}: an empty folder name (give a folder, e.g. {} out)", option, option)};
  }
  std::error_code ec;
  const fs::path path(dir);
  if (fs::exists(path, ec) && !fs::is_directory(path, ec)) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("{} {}: exists and is not a folder", option, dir)};
  }
  if (created != nullptr) {
    ec = created->create(path);
  } else {
    fs::create_directories(path, ec);
  }
  if (ec) {
    return {ErrorCode::kIo,
            fmt::format("{} {}: cannot create the folder: {}", option, dir, ec.message())};
  }
  return probeWritable(path, fmt::format("{} {}", option, dir));
}

}  // namespace ebb
