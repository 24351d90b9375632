// libFuzzer target: the SimGrid time-independent trace reader
// (workload::readSimgridTrace). The input is split at lines "---" into up to 8
// per-rank files of one trace folder (one part: a single file), so
// collectives run over several ranks and the cross-rank checks are reached.
// Any input must give either a trace that keeps the reader's promises or an
// error naming the trace; never a crash, a sanitizer report or an exception.
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "fuzz/fuzz_util.h"
#include "workload/simgrid_trace.h"

namespace {

namespace fs = std::filesystem;

class ScratchDir {
 public:
  ScratchDir()
      : dir_(fs::temp_directory_path() / ("ebb-fuzz-simgrid-" + std::to_string(::getpid()))) {}
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Writes the parts as rank files r0.txt, r1.txt, ...; returns the folder,
  // or the one file when there is a single part.
  std::string write(const std::string& text) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    fs::create_directories(dir_);
    std::vector<std::string> parts(1);
    std::size_t pos = 0;
    while (pos <= text.size()) {
      auto nl = text.find('\n', pos);
      if (nl == std::string::npos) nl = text.size();
      const std::string_view line(text.data() + pos, nl - pos);
      if (line == "---" && parts.size() < 8) {
        parts.emplace_back();
      } else {
        parts.back().append(line);
        parts.back() += '\n';
      }
      pos = nl + 1;
    }
    for (std::size_t i = 0; i < parts.size(); ++i) {
      std::ofstream out(dir_ / fmt::format("r{}.txt", i), std::ios::binary);
      out << parts[i];
      if (!out) ebb::fuzz::broken("scratch file written", dir_.string());
    }
    return parts.size() == 1 ? (dir_ / "r0.txt").string() : dir_.string();
  }

 private:
  fs::path dir_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ebb;
  static ScratchDir dir;
  const std::string path = dir.write(std::string(reinterpret_cast<const char*>(data), size));
  workload::SimgridStats stats;
  Result<workload::MpiTrace> t = workload::readSimgridTrace(path, 1e9, &stats);
  if (!t) {
    EBB_FUZZ_CHECK(t.status().code() == ErrorCode::kParse, t.status().toString());
    fuzz::checkNamesSource(t.status().message(), path);
    return 0;
  }
  const auto ranks = t->ranks.size();
  EBB_FUZZ_CHECK(ranks > 0, "a trace without ranks");
  for (std::size_t r = 0; r < ranks; ++r) {
    for (const workload::MpiOp& op : t->ranks[r]) {
      if (op.kind == workload::MpiOpKind::kCompute) {
        EBB_FUZZ_CHECK(op.duration >= 0, fmt::format("rank {}: compute of {} ps", r, op.duration));
      } else if (op.kind != workload::MpiOpKind::kWait &&
                 op.kind != workload::MpiOpKind::kWaitall) {
        EBB_FUZZ_CHECK(op.peer < ranks,
                       fmt::format("rank {}: peer {} of {} ranks", r, op.peer, ranks));
        EBB_FUZZ_CHECK(op.bytes >= 0, fmt::format("rank {}: {} bytes", r, op.bytes));
      }
    }
  }
  return 0;
}
