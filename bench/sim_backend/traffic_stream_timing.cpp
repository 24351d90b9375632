// Streaming throughput of native traffic files (docs/performance.md, "Traffic
// file streaming"; issue 5: a 1 GB file streams at over 100 MB/s).
//
//   traffic_stream_timing [MB] [DIR]
//
// Writes a text traffic file of about MB megabytes (10^6 bytes; default 1000)
// and a binary one of the same messages into a scratch folder under DIR
// (default: the system's temporary directory), then times reading each back
// through the streaming reader (TrafficReader) and through
// validateTrafficFile, and a plain 1 MiB-block read of the file for the I/O
// ceiling; prints MB/s and messages/s, and removes the files. The files are
// read right after being written, so they come from the page cache: the
// numbers are the readers' CPU cost, not the disk's.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "workload/traffic_file.h"

namespace {

using namespace ebb;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kHosts = 4096;  // a 16-ary 3-tree

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

long peakRssMb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024;
}

// Deterministic messages like `ebb gen`'s on a 16-ary 3-tree: times rising by
// 0..4 ns, any source and a different destination, 64 B to 4 KiB.
class Messages {
 public:
  workload::TrafficMessage next() {
    workload::TrafficMessage m;
    time_ += static_cast<TimePs>(rand() % 4000);
    m.time = time_;
    m.src = static_cast<std::uint32_t>(rand() % kHosts);
    m.dst = static_cast<std::uint32_t>((m.src + 1 + rand() % (kHosts - 1)) % kHosts);
    m.bytes = static_cast<std::int64_t>(64 * (1 + rand() % 64));
    return m;
  }

 private:
  std::uint64_t rand() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return state_ >> 33;
  }
  std::uint64_t state_ = 42;
  TimePs time_ = 0;
};

struct Written {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;  // payload
};

Written writeFiles(const std::string& text, const std::string& binary, std::uint64_t targetBytes) {
  auto tw = workload::TrafficWriter::create(text, false);
  auto bw = workload::TrafficWriter::create(binary, true);
  if (!tw || !bw) {
    std::fprintf(stderr, "cannot create the scratch files\n");
    std::exit(1);
  }
  Messages gen;
  Written w;
  // Check the file size every 64 Ki messages (the writer buffers), on the
  // temporary file the writer fills until close() renames it to `text`.
  const std::string growing = (*tw)->writingPath();
  while (true) {
    for (int i = 0; i < 65536; ++i) {
      const workload::TrafficMessage m = gen.next();
      if (!(*tw)->write(m).isOk() || !(*bw)->write(m).isOk()) {
        std::fprintf(stderr, "write failed (disk full?)\n");
        std::exit(1);
      }
      ++w.messages;
      w.bytes += static_cast<std::uint64_t>(m.bytes);
    }
    if (fs::file_size(growing) >= targetBytes) break;
  }
  if (!(*tw)->close().isOk() || !(*bw)->close().isOk()) {
    std::fprintf(stderr, "close failed (disk full?)\n");
    std::exit(1);
  }
  return w;
}

struct Timing {
  double s = 0;
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
};

Timing readAll(const std::string& path) {
  const auto t0 = Clock::now();
  auto reader = workload::TrafficReader::open(path);
  if (!reader) {
    std::fprintf(stderr, "%s\n", reader.status().toString().c_str());
    std::exit(1);
  }
  Timing t;
  while (true) {
    auto m = (*reader)->next();
    if (!m) {
      std::fprintf(stderr, "%s\n", m.status().toString().c_str());
      std::exit(1);
    }
    if (!m->has_value()) break;
    ++t.messages;
    t.bytes += static_cast<std::uint64_t>((*m)->bytes);
  }
  t.s = seconds(t0, Clock::now());
  return t;
}

Timing validate(const std::string& path) {
  const auto t0 = Clock::now();
  auto sum = workload::validateTrafficFile(path, kHosts);
  if (!sum) {
    std::fprintf(stderr, "%s\n", sum.status().toString().c_str());
    std::exit(1);
  }
  return {seconds(t0, Clock::now()), sum->messages, sum->bytes};
}

Timing rawRead(const std::string& path) {
  const auto t0 = Clock::now();
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buf(1 << 20);
  std::uint64_t sum = 0;
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    sum += static_cast<unsigned char>(buf[0]);
    if (in.eof()) break;
  }
  return {seconds(t0, Clock::now()), 0, sum};
}

void row(const char* what, double fileBytes, const Timing& t, std::uint64_t messages) {
  std::printf("%-34s %8.2f s %9.1f MB/s %8.2f M messages/s\n", what, t.s, fileBytes / 1e6 / t.s,
              static_cast<double>(messages) / 1e6 / t.s);
}

}  // namespace

int main(int argc, char** argv) {
  const double mb = argc > 1 ? std::atof(argv[1]) : 1000.0;
  if (!(mb > 0)) {
    std::fprintf(stderr, "usage: traffic_stream_timing [MB] [DIR]\n");
    return 2;
  }
  const fs::path base = argc > 2 ? fs::path(argv[2]) : fs::temp_directory_path();
  const fs::path dir = base / ("ebb-traffic-stream-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string text = (dir / "traffic.txt").string();
  const std::string binary = (dir / "traffic.bin").string();

  const auto t0 = Clock::now();
  const Written w = writeFiles(text, binary, static_cast<std::uint64_t>(mb * 1e6));
  const double writeS = seconds(t0, Clock::now());
  const auto textBytes = static_cast<double>(fs::file_size(text));
  const auto binBytes = static_cast<double>(fs::file_size(binary));
  std::printf(
      "%llu messages (%.1f GB of payload); text %.1f MB (%.1f B/message), binary %.1f MB "
      "(%.1f B/message); written in %.1f s\n",
      static_cast<unsigned long long>(w.messages), static_cast<double>(w.bytes) / 1e9,
      textBytes / 1e6, textBytes / static_cast<double>(w.messages), binBytes / 1e6,
      binBytes / static_cast<double>(w.messages), writeS);

  bool ok = true;
  const auto check = [&](const Timing& t, const char* what) {
    if (t.messages != w.messages || t.bytes != w.bytes) {
      std::fprintf(
          stderr, "%s read %llu messages, %llu bytes; wrote %llu, %llu\n", what,
          static_cast<unsigned long long>(t.messages), static_cast<unsigned long long>(t.bytes),
          static_cast<unsigned long long>(w.messages), static_cast<unsigned long long>(w.bytes));
      ok = false;
    }
  };
  for (const auto& [form, path, fileBytes] :
       {std::tuple{"text", text, textBytes}, std::tuple{"binary", binary, binBytes}}) {
    const std::string name(form);
    row((name + ": plain read (1 MiB blocks)").c_str(), fileBytes, rawRead(path), w.messages);
    const Timing read = readAll(path);
    check(read, (name + " TrafficReader").c_str());
    row((name + ": TrafficReader").c_str(), fileBytes, read, w.messages);
    const Timing val = validate(path);
    check(val, (name + " validateTrafficFile").c_str());
    row((name + ": validateTrafficFile").c_str(), fileBytes, val, w.messages);
  }
  std::printf("peak RSS %ld MB\n", peakRssMb());

  std::error_code ec;
  fs::remove_all(dir, ec);
  return ok ? 0 : 1;
}
