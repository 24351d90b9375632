#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "common/time.h"
#include "workload/message_limit.h"

namespace ebb::workload {

struct TrafficMessage {
  TimePs time = 0;
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  std::int64_t bytes = 0;
  std::uint32_t job = 0;
};

// The latest message time a traffic file may hold, in either form: 9.2e15 ns
// (about 106 days), just inside what picoseconds in an int64 represent.
inline constexpr double kMaxTrafficTimeNs = 9.2e15;
inline constexpr std::int64_t kMaxTrafficTimePs = 9'200'000'000'000'000'000;

// Streams a native traffic file, text or binary (detected by the magic), one
// message at a time: files larger than memory replay. Messages must come in
// time order. Errors: E_PARSE "<file>:<line>: <rule>" (binary: record number),
// E_IO for a missing or unreadable file.
class TrafficReader {
 public:
  static Result<std::unique_ptr<TrafficReader>> open(const std::string& path);
  virtual ~TrafficReader() = default;
  // The next message, nullopt at the end, or the error.
  virtual Result<std::optional<TrafficMessage>> next() = 0;
  // "<file>:<line>" (or record) of the message last returned, for errors.
  virtual std::string where() const = 0;
};

struct TrafficFileSummary {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  TimePs lastTime = 0;
};

// Reads a whole traffic file once, checking every message against a fabric of
// `hosts` hosts (source and destination in range and different), so a bad file
// is rejected before anything runs.
// Every message is also checked against `limit` (workload/message_limit.h).
Result<TrafficFileSummary> validateTrafficFile(const std::string& path, std::uint32_t hosts,
                                               const MessageLimit& limit = {});

// Writes a native traffic file. Text: "<time_ns> <src> <dst> <bytes> [job]".
// The messages go to a temporary file beside `path` that close() renames over
// it once complete: a failed or interrupted run never leaves a partial file at
// `path`, nor replaces what was there. A writer destroyed without a successful
// close() removes its temporary file. A `path` that exists and is not a
// regular file (/dev/stdout, a FIFO) is written in place.
class TrafficWriter {
 public:
  static Result<std::unique_ptr<TrafficWriter>> create(const std::string& path, bool binary);
  virtual ~TrafficWriter() = default;
  virtual Status write(const TrafficMessage& m) = 0;
  // Completes the file and puts it at `path`. E_IO naming `path`.
  virtual Status close() = 0;
  // The file being written until close(): the temporary file, or `path`.
  virtual std::string writingPath() const { return {}; }
};

inline constexpr char kBinaryTrafficMagic[] = "EBBTRF1\n";

}  // namespace ebb::workload
