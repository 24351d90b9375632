#include "sim_backend/traffic_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

#include "configs/proto/traffic.pb.h"
#include "sim_backend/fabric_emulator.h"

namespace ebb::sim {

namespace {

constexpr std::size_t kMagicLen = sizeof(kBinaryTrafficMagic) - 1;

class TextReader final : public TrafficReader {
 public:
  TextReader(std::string path, std::ifstream in) : path_(std::move(path)), in_(std::move(in)) {}

  std::string where() const override { return fmt::format("{}:{}", path_, lineNo_); }

  Result<std::optional<TrafficMessage>> next() override {
    std::string line;
    while (std::getline(in_, line)) {
      ++lineNo_;
      const auto hash = line.find('#');
      if (hash != std::string::npos) line.resize(hash);
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      return parse(line);
    }
    if (in_.bad()) return Status(ErrorCode::kIo, fmt::format("{}: read error", path_));
    return std::optional<TrafficMessage>{};
  }

 private:
  Status error(const std::string& rule) const {
    return {ErrorCode::kParse, fmt::format("{}:{}: {}", path_, lineNo_, rule)};
  }

  Result<std::optional<TrafficMessage>> parse(const std::string& line) {
    std::string_view s(line);
    std::string_view fields[6];
    int n = 0;
    while (!s.empty()) {
      const auto b = s.find_first_not_of(" \t\r,");
      if (b == std::string_view::npos) break;
      s.remove_prefix(b);
      const auto e = s.find_first_of(" \t\r,");
      if (n == 6) return error("too many fields: expected <time_ns> <src> <dst> <bytes> [job]");
      fields[n++] = s.substr(0, e);
      s.remove_prefix(e == std::string_view::npos ? s.size() : e);
    }
    if (n < 4 || n > 5) {
      return error(fmt::format("{} fields: expected <time_ns> <src> <dst> <bytes> [job]", n));
    }
    TrafficMessage m;
    double ns = 0;
    {
      const std::string t(fields[0]);
      char* end = nullptr;
      ns = std::strtod(t.c_str(), &end);
      if (end != t.c_str() + t.size() || !std::isfinite(ns) || ns < 0 || ns > 9.2e15) {
        return error(fmt::format("time '{}' is not a non-negative number of nanoseconds", t));
      }
    }
    m.time = static_cast<TimePs>(std::llround(ns * 1000.0));
    const auto num = [&](std::string_view f, auto& out, const char* what) -> Status {
      auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), out);
      if (ec != std::errc() || p != f.data() + f.size()) {
        return error(fmt::format("{} '{}' is not a non-negative integer", what, f));
      }
      return Status::ok();
    };
    if (Status st = num(fields[1], m.src, "source"); !st.isOk()) return st;
    if (Status st = num(fields[2], m.dst, "destination"); !st.isOk()) return st;
    if (Status st = num(fields[3], m.bytes, "bytes"); !st.isOk()) return st;
    if (m.bytes <= 0) return error("bytes must be > 0");
    if (n == 5) {
      if (Status st = num(fields[4], m.job, "job"); !st.isOk()) return st;
    }
    if (m.time < last_) {
      return error(
          fmt::format("time {} ns goes back (the previous message was at {} ns): sort "
                      "the file by time",
                      ns, static_cast<double>(last_) / 1000.0));
    }
    last_ = m.time;
    return std::optional<TrafficMessage>(m);
  }

  std::string path_;
  std::ifstream in_;
  int lineNo_ = 0;
  TimePs last_ = 0;
};

class BinaryReader final : public TrafficReader {
 public:
  BinaryReader(std::string path, std::unique_ptr<std::ifstream> in)
      : path_(std::move(path)), in_(std::move(in)), zin_(in_.get()) {}

  std::string where() const override { return fmt::format("{}: record {}", path_, record_); }

  Result<std::optional<TrafficMessage>> next() override {
    config::TrafficRecord r;
    bool clean = false;
    ++record_;
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&r, &zin_, &clean)) {
      if (clean) return std::optional<TrafficMessage>{};
      return Status(ErrorCode::kParse,
                    fmt::format("{}: record {}: truncated or corrupt record", path_, record_));
    }
    if (r.time_ps() < last_ || r.bytes() <= 0 || r.time_ps() < 0) {
      return Status(ErrorCode::kParse,
                    fmt::format("{}: record {}: {}", path_, record_,
                                r.bytes() <= 0 ? "bytes must be > 0" : "time goes back"));
    }
    last_ = r.time_ps();
    return std::optional<TrafficMessage>(
        TrafficMessage{r.time_ps(), r.src(), r.dst(), r.bytes(), r.job()});
  }

 private:
  std::string path_;
  std::unique_ptr<std::ifstream> in_;
  google::protobuf::io::IstreamInputStream zin_;
  std::uint64_t record_ = 0;
  TimePs last_ = 0;
};

class TextWriter final : public TrafficWriter {
 public:
  explicit TextWriter(std::ofstream out) : out_(std::move(out)) {
    out_ << "# ebb traffic file: <time_ns> <src> <dst> <bytes> [job]\n";
  }
  Status write(const TrafficMessage& m) override {
    out_ << fmt::format("{:.3f} {} {} {} {}\n", static_cast<double>(m.time) / 1000.0, m.src, m.dst,
                        m.bytes, m.job);
    return out_ ? Status::ok() : Status(ErrorCode::kIo, "write failed");
  }
  Status close() override {
    out_.close();
    return out_ ? Status::ok() : Status(ErrorCode::kIo, "close failed");
  }

 private:
  std::ofstream out_;
};

class BinaryWriter final : public TrafficWriter {
 public:
  explicit BinaryWriter(std::ofstream out) : out_(std::move(out)) {
    out_.write(kBinaryTrafficMagic, kMagicLen);
  }
  Status write(const TrafficMessage& m) override {
    config::TrafficRecord r;
    r.set_time_ps(m.time);
    r.set_src(m.src);
    r.set_dst(m.dst);
    r.set_bytes(m.bytes);
    r.set_job(m.job);
    if (!google::protobuf::util::SerializeDelimitedToOstream(r, &out_)) {
      return {ErrorCode::kIo, "write failed"};
    }
    return Status::ok();
  }
  Status close() override {
    out_.close();
    return out_ ? Status::ok() : Status(ErrorCode::kIo, "close failed");
  }

 private:
  std::ofstream out_;
};

}  // namespace

Result<std::unique_ptr<TrafficReader>> TrafficReader::open(const std::string& path) {
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in) return Status(ErrorCode::kIo, fmt::format("cannot open traffic file {}", path));
  char magic[kMagicLen] = {};
  in->read(magic, kMagicLen);
  if (in->gcount() == static_cast<std::streamsize>(kMagicLen) &&
      std::memcmp(magic, kBinaryTrafficMagic, kMagicLen) == 0) {
    return std::unique_ptr<TrafficReader>(std::make_unique<BinaryReader>(path, std::move(in)));
  }
  in->close();
  std::ifstream text(path);
  return std::unique_ptr<TrafficReader>(std::make_unique<TextReader>(path, std::move(text)));
}

Result<TrafficFileSummary> validateTrafficFile(const std::string& path, std::uint32_t hosts) {
  auto reader = TrafficReader::open(path);
  if (!reader) return reader.status();
  TrafficFileSummary sum;
  while (true) {
    auto m = (*reader)->next();
    if (!m) return m.status();
    if (!m->has_value()) break;
    const TrafficMessage& msg = **m;
    if (msg.src >= hosts || msg.dst >= hosts) {
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("{}: host {} is beyond the fabric's {} hosts (0..{})",
                                (*reader)->where(), std::max(msg.src, msg.dst), hosts, hosts - 1));
    }
    if (msg.src == msg.dst) {
      return Status(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: source and destination are both host {}", (*reader)->where(), msg.src));
    }
    ++sum.messages;
    sum.bytes += static_cast<std::uint64_t>(msg.bytes);
    sum.lastTime = msg.time;
  }
  if (sum.messages == 0) {
    return Status(ErrorCode::kInvalidArgument, fmt::format("{}: no messages", path));
  }
  return sum;
}

TrafficFileSource::TrafficFileSource(FabricEmulator& emu, std::unique_ptr<TrafficReader> reader)
    : emu_(emu), reader_(std::move(reader)) {}

void TrafficFileSource::start() {
  auto m = reader_->next();
  if (!m) {
    status_ = m.status();
    return;
  }
  next_ = *m;
  if (next_) emu_.scheduler().at(next_->time, agent::Phase::kNetwork, [this] { inject(); });
}

void TrafficFileSource::inject() {
  // Every message due now, then schedule the next one.
  while (next_ && next_->time <= emu_.scheduler().now()) {
    emu_.sendMessage(fabric::HostId(next_->src), fabric::HostId(next_->dst), next_->bytes,
                     next_->job);
    ++generated_;
    bytes_ += static_cast<std::uint64_t>(next_->bytes);
    auto m = reader_->next();
    if (!m) {
      status_ = m.status();
      next_.reset();
      return;
    }
    next_ = *m;
  }
  if (next_) emu_.scheduler().at(next_->time, agent::Phase::kNetwork, [this] { inject(); });
}

Result<std::unique_ptr<TrafficWriter>> TrafficWriter::create(const std::string& path, bool binary) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status(ErrorCode::kIo, fmt::format("cannot create {}", path));
  if (binary) return std::unique_ptr<TrafficWriter>(std::make_unique<BinaryWriter>(std::move(out)));
  return std::unique_ptr<TrafficWriter>(std::make_unique<TextWriter>(std::move(out)));
}

}  // namespace ebb::sim
