// libFuzzer target: the AMG2013 event CSV reader (workload::readAmgCsv).
// Any input must give either a trace that keeps the reader's promises or an
// E_PARSE error naming the file; never a crash, a sanitizer report or an
// exception.
#include <fmt/format.h>

#include "fuzz/fuzz_util.h"
#include "workload/mpi_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ebb;
  static fuzz::ScratchFile file("ebb-fuzz-amg");
  const std::string& path = file.write(data, size);
  Result<workload::MpiTrace> t = workload::readAmgCsv(path);
  if (!t) {
    EBB_FUZZ_CHECK(t.status().code() == ErrorCode::kParse, t.status().toString());
    fuzz::checkNamesSource(t.status().message(), path);
    return 0;
  }
  EBB_FUZZ_CHECK(!t->ranks.empty(), "a trace without ranks");
  const auto ranks = t->ranks.size();
  std::uint64_t sends = 0, bytes = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    for (const workload::MpiOp& op : t->ranks[r]) {
      switch (op.kind) {
        case workload::MpiOpKind::kCompute:
          EBB_FUZZ_CHECK(op.duration >= 0,
                         fmt::format("rank {}: compute of {} ps", r, op.duration));
          break;
        case workload::MpiOpKind::kIsend:
        case workload::MpiOpKind::kSend:
          ++sends;
          bytes += static_cast<std::uint64_t>(op.bytes);
          [[fallthrough]];
        case workload::MpiOpKind::kIrecv:
        case workload::MpiOpKind::kRecv:
          EBB_FUZZ_CHECK(op.peer < ranks,
                         fmt::format("rank {}: peer {} of {} ranks", r, op.peer, ranks));
          EBB_FUZZ_CHECK(op.bytes >= 0, fmt::format("rank {}: {} bytes", r, op.bytes));
          break;
        case workload::MpiOpKind::kWaitall:
          EBB_FUZZ_CHECK(op.count > 0, fmt::format("rank {}: waitall of 0 requests", r));
          break;
        case workload::MpiOpKind::kWait:
          break;
      }
    }
  }
  EBB_FUZZ_CHECK(sends == t->sends && bytes == t->sendBytes, "totals differ from the ops");
  return 0;
}
