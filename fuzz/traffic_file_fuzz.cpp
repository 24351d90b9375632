// libFuzzer target: the native traffic file readers (workload::TrafficReader,
// text and binary, the form chosen by the magic, and validateTrafficFile).
// Any input must stream as messages in time order with positive sizes, or
// stop at an E_PARSE / E_INVALID error naming the file; never a crash, a
// sanitizer report or an exception.
#include <algorithm>

#include <fmt/format.h>

#include "fuzz/fuzz_util.h"
#include "workload/message_limit.h"
#include "workload/traffic_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ebb;
  static fuzz::ScratchFile file("ebb-fuzz-traffic");
  const std::string& path = file.write(data, size);

  auto reader = workload::TrafficReader::open(path);
  EBB_FUZZ_CHECK(reader.isOk(), reader.status().toString());
  std::uint64_t messages = 0, bytes = 0;
  std::uint32_t maxHost = 0;
  bool sameHost = false, tooBig = false;
  const workload::MessageLimit limit;  // the validator's default
  TimePs last = 0;
  bool failed = false;
  while (true) {
    auto m = (*reader)->next();
    if (!m) {
      EBB_FUZZ_CHECK(m.status().code() == ErrorCode::kParse, m.status().toString());
      fuzz::checkNamesSource(m.status().message(), path);
      failed = true;
      break;
    }
    if (!m->has_value()) break;
    const workload::TrafficMessage& msg = **m;
    EBB_FUZZ_CHECK(msg.time >= last,
                   fmt::format("{}: time {} ps after {} ps", (*reader)->where(), msg.time, last));
    EBB_FUZZ_CHECK(msg.bytes > 0, fmt::format("{}: {} bytes", (*reader)->where(), msg.bytes));
    last = msg.time;
    ++messages;
    bytes += static_cast<std::uint64_t>(msg.bytes);
    maxHost = std::max({maxHost, msg.src, msg.dst});
    sameHost = sameHost || msg.src == msg.dst;
    tooBig = tooBig || msg.bytes > limit.maxBytes();
  }

  // The validator reads the same messages and adds the fabric's rules.
  constexpr std::uint32_t kHosts = 64;
  auto sum = workload::validateTrafficFile(path, kHosts, limit);
  if (sum) {
    EBB_FUZZ_CHECK(!failed && messages > 0 && maxHost < kHosts && !sameHost && !tooBig,
                   "validation accepted what the reader rejects");
    EBB_FUZZ_CHECK(sum->messages == messages && sum->bytes == bytes && sum->lastTime == last,
                   "validation totals differ from the reader's");
  } else {
    EBB_FUZZ_CHECK(failed || messages == 0 || maxHost >= kHosts || sameHost || tooBig,
                   "validation rejected a good file: " + sum.status().toString());
    fuzz::checkNamesSource(sum.status().message(), path);
  }
  return 0;
}
