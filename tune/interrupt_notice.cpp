#include "tune/interrupt_notice.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace ebb::tune {

namespace {

// The handler may only use async-signal-safe calls: the line's two halves are
// laid out beforehand, the count is formatted by hand.
std::atomic<std::size_t> gStored{0};
std::array<char, 64> gHead{};
std::array<char, 4096> gTail{};
std::size_t gHeadLen = 0, gTailLen = 0;
constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
struct sigaction gOld[kSignals.size()];

void writeAll(const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(2, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void onSignal(int sig) {
  char digits[24];
  std::size_t len = 0;
  std::size_t n = gStored.load();
  do {
    digits[sizeof digits - 1 - len++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n > 0);
  writeAll(gHead.data(), gHeadLen);
  writeAll(digits + sizeof digits - len, len);
  writeAll(gTail.data(), gTailLen);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

std::size_t copyIn(std::array<char, 4096>& to, const std::string& s) {
  const std::size_t n = std::min(s.size(), to.size());
  std::memcpy(to.data(), s.data(), n);
  return n;
}

}  // namespace

InterruptNotice::InterruptNotice(const std::string& cacheDir) {
  gStored = 0;
  const char head[] = "\nebb tune: interrupted: ";
  std::memcpy(gHead.data(), head, sizeof head - 1);
  gHeadLen = sizeof head - 1;
  gTailLen = copyIn(gTail, " runs computed now are safe in " + cacheDir +
                               " with those cached before; the same command resumes the "
                               "sweep, computing only what is missing\n");
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  for (std::size_t i = 0; i < kSignals.size(); ++i)
    ::sigaction(kSignals[i], &sa, &gOld[i]);
}

InterruptNotice::~InterruptNotice() {
  for (std::size_t i = 0; i < kSignals.size(); ++i)
    ::sigaction(kSignals[i], &gOld[i], nullptr);
}

std::atomic<std::size_t>* InterruptNotice::stored() {
  return &gStored;
}

}  // namespace ebb::tune
