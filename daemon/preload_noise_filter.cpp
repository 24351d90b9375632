#include "daemon/preload_noise_filter.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace ebb::daemon {
namespace {

void writeAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

std::unique_ptr<PreloadNoiseFilter> PreloadNoiseFilter::installIfUnderIbsim() {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr || std::string_view(preload).find("umad2sim") == std::string_view::npos) {
    return nullptr;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return nullptr;
  std::fflush(stderr);
  auto f = std::make_unique<PreloadNoiseFilter>();
  f->realStderr_ = ::fcntl(2, F_DUPFD_CLOEXEC, 3);
  if (f->realStderr_ < 0 || ::dup2(fds[1], 2) < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    if (f->realStderr_ >= 0) ::close(f->realStderr_);
    return nullptr;
  }
  ::close(fds[1]);  // fd 2 is now the only write end
  f->readEnd_ = fds[0];
  f->reader_ = std::thread([p = f.get()] { p->pump(); });
  return f;
}

PreloadNoiseFilter::~PreloadNoiseFilter() {
  if (!reader_.joinable()) return;
  std::fflush(stderr);
  ::dup2(realStderr_, 2);  // closes the last write end: the reader sees EOF
  reader_.join();
  ::close(readEnd_);
  if (suppressed_ > 1) {
    writeAll(2, fmt::format("ebb agent: {} more \"{}\" lines from libumad2sim not shown\n",
                            suppressed_ - 1, kNoise));
  }
  ::close(realStderr_);
}

std::string PreloadNoiseFilter::filterLine(const std::string& line) {
  if (line.find(kNoise) == std::string::npos) return line;
  if (suppressed_++ > 0) return {};
  return "ebb agent: the ibsim simulator is gone (libumad2sim cannot write to it: \"" +
         std::string(kNoise) + "\"); its further lines are counted, not shown";
}

// Copies lines from the pipe to the real stderr through filterLine.
void PreloadNoiseFilter::pump() {
  std::string pending;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(readEnd_, buf, sizeof buf);
    if (n <= 0) break;
    pending.append(buf, static_cast<std::size_t>(n));
    std::size_t start = 0, nl;
    std::string out;
    while ((nl = pending.find('\n', start)) != std::string::npos) {
      const std::string kept = filterLine(pending.substr(start, nl - start));
      if (!kept.empty() || nl == start) out += kept + "\n";
      start = nl + 1;
    }
    pending.erase(0, start);
    writeAll(realStderr_, out);
  }
  if (!pending.empty()) writeAll(realStderr_, filterLine(pending));
}

}  // namespace ebb::daemon
