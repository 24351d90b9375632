#include "workload/traffic_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/unknown_field_set.h>
#include <google/protobuf/util/delimited_message_util.h>
#include "common/file_io.h"
#include "common/output_file.h"

#include "configs/proto/traffic.pb.h"

namespace ebb::workload {

namespace {

constexpr std::size_t kMagicLen = sizeof(kBinaryTrafficMagic) - 1;

// A file read in large blocks: the readers parse straight from the buffer
// (about 8x faster than std::getline plus a string per line).
class BlockInput {
 public:
  explicit BlockInput(std::unique_ptr<std::ifstream> in) : in_(std::move(in)), buf_(kFirstBlock) {}

  const char* data() const { return buf_.data() + pos_; }
  std::size_t available() const { return end_ - pos_; }
  void consume(std::size_t n) { pos_ += n; }
  bool atEnd() const { return eof_; }
  bool bad() const { return in_->bad(); }

  // Reads on until at least `n` bytes are available or the file ends (the
  // buffer grows for longer lines or records); returns what is available.
  std::size_t fill(std::size_t n) {
    if (available() >= n || eof_) return available();
    if (pos_ > 0) {
      std::memmove(buf_.data(), buf_.data() + pos_, available());
      end_ -= pos_;
      pos_ = 0;
    }
    // Small files take one small read; larger ones grow the block to kBlock.
    if (reads_ > 0 && buf_.size() < kBlock) buf_.resize(std::min(kBlock, 2 * buf_.size()));
    if (buf_.size() < n) buf_.resize(std::max(n, 2 * buf_.size()));
    while (end_ < n && !eof_) {
      in_->read(buf_.data() + end_, static_cast<std::streamsize>(buf_.size() - end_));
      ++reads_;
      const auto got = static_cast<std::size_t>(in_->gcount());
      end_ += got;
      if (got == 0 || !*in_) eof_ = true;
    }
    return available();
  }

  // The next line without its '\n' (the last one may lack it); false at the
  // end, or when a line runs past kMaxLine bytes (lineTooLong(): endless
  // input such as /dev/zero, or a file that is not text, is refused rather
  // than read into memory whole). The view lasts until the next call.
  static constexpr std::size_t kMaxLine = 1 << 20;
  bool lineTooLong() const { return tooLong_; }
  bool nextLine(std::string_view& line) {
    std::size_t scanned = 0;
    while (true) {
      const std::size_t avail = available();
      if (const void* nl = std::memchr(data() + scanned, '\n', avail - scanned)) {
        const auto len = static_cast<std::size_t>(static_cast<const char*>(nl) - data());
        if (len > kMaxLine) {  // the buffer may hold more than kMaxLine: the rule is the line's
          tooLong_ = true;
          return false;
        }
        line = std::string_view(data(), len);
        consume(len + 1);
        return true;
      }
      scanned = avail;
      if (avail > kMaxLine) {
        tooLong_ = true;
        return false;
      }
      if (eof_) {
        if (avail == 0) return false;
        line = std::string_view(data(), avail);
        consume(avail);
        return true;
      }
      fill(avail + 1);
    }
  }

 private:
  static constexpr std::size_t kFirstBlock = 16 << 10;
  static constexpr std::size_t kBlock = 1 << 20;
  std::unique_ptr<std::ifstream> in_;
  std::vector<char> buf_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  std::uint64_t reads_ = 0;
  bool eof_ = false;
  bool tooLong_ = false;
};

// A field as an error quotes it: bytes that do not print (a NUL, a control
// character) as \xNN, so the message shows why it is not a number.
std::string shown(std::string_view f) {
  std::string out;
  for (char c : f) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7F) {
      out += fmt::format("\\x{:02X}", u);
    } else {
      out += c;
    }
  }
  return out;
}

constexpr bool isSeparator(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == ',';
}

class TextReader final : public TrafficReader {
 public:
  TextReader(std::string path, std::unique_ptr<std::ifstream> in)
      : path_(std::move(path)), in_(std::move(in)) {}

  std::string where() const override { return fmt::format("{}:{}", path_, lineNo_); }

  Result<std::optional<TrafficMessage>> next() override {
    std::string_view line;
    while (in_.nextLine(line)) {
      ++lineNo_;
      line_ = line;
      if (const auto hash = line.find('#'); hash != std::string_view::npos) {
        line = line.substr(0, hash);
      }
      // Fields between separators (space, tab, CR, comma).
      std::string_view fields[6];
      int n = 0;
      std::size_t i = 0;
      const std::size_t len = line.size();
      while (true) {
        while (i < len && isSeparator(line[i]))
          ++i;
        if (i == len) break;
        const std::size_t b = i;
        while (i < len && !isSeparator(line[i]))
          ++i;
        if (n == 6) return error("too many fields: expected <time_ns> <src> <dst> <bytes> [job]");
        fields[n++] = line.substr(b, i - b);
      }
      // Blank (only spaces, tabs, CRs): skipped; commas alone are 0 fields.
      if (n == 0 && line.find(',') == std::string_view::npos) continue;
      return parse(fields, n);
    }
    if (in_.lineTooLong()) {
      ++lineNo_;
      // The view of the line before is stale: the buffer moved to take this one.
      line_ = {};
      return error(
          fmt::format("line longer than {} bytes: not a text traffic file", BlockInput::kMaxLine));
    }
    if (in_.bad()) return Status(ErrorCode::kIo, fmt::format("{}: read error", path_));
    return std::optional<TrafficMessage>{};
  }

 private:
  Status error(const std::string& rule) const {
    // A NUL byte outside a comment always breaks the line, so it is looked
    // for only here, off the fast path: binary data, as the topology reader
    // says, rather than whatever field it broke.
    if (const std::string binary = binaryLineRule(line_, "traffic file"); !binary.empty())
      return {ErrorCode::kParse, fmt::format("{}:{}: {}", path_, lineNo_, binary)};
    return {ErrorCode::kParse, fmt::format("{}:{}: {}", path_, lineNo_, rule)};
  }

  Result<std::optional<TrafficMessage>> parse(const std::string_view* fields, int n) {
    if (n < 4 || n > 5) {
      return error(fmt::format("{} fields: expected <time_ns> <src> <dst> <bytes> [job]", n));
    }
    TrafficMessage m;
    double ns = 0;
    {
      const std::string_view f = fields[0];
      auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), ns);
      if (ec != std::errc() || p != f.data() + f.size() || !std::isfinite(ns)) {
        // Decimal only, as every number ebb reads: strtod would take "0x10"
        // as 16, and inf and nan are no times.
        if (f.find_first_not_of("0123456789.eE+-") != std::string_view::npos) {
          return error(fmt::format(
              "time '{}' is not a non-negative number of nanoseconds (decimal digits, '.' and "
              "an exponent only: no hexadecimal, inf or nan)",
              shown(f)));
        }
        // A leading '+' or beyond a double's range: strtod's value, as the
        // reader always did (out of range then fails below).
        const std::string t(f);
        char* end = nullptr;
        ns = std::strtod(t.c_str(), &end);
        if (end != t.c_str() + t.size()) ns = std::numeric_limits<double>::quiet_NaN();
      }
      if (std::isnan(ns)) {
        return error(fmt::format("time '{}' is not a non-negative number of nanoseconds", f));
      }
      if (ns < 0 || ns > kMaxTrafficTimeNs) {
        return error(
            fmt::format("time '{}' ns is out of range: must be in [0, {:g}] ns (about "
                        "106 days)",
                        f, kMaxTrafficTimeNs));
      }
    }
    m.time = static_cast<TimePs>(std::llround(ns * 1000.0));
    const auto num = [&](std::string_view f, auto& out, const char* what) -> Status {
      auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), out);
      if (ec == std::errc::result_out_of_range) {
        return error(
            fmt::format("{} '{}' is out of range (at most {})", what, shown(f),
                        std::numeric_limits<std::remove_reference_t<decltype(out)>>::max()));
      }
      if (ec != std::errc() || p != f.data() + f.size()) {
        return error(fmt::format("{} '{}' is not a non-negative integer", what, shown(f)));
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
  BlockInput in_;
  std::string_view line_;  // the line being read, comment included (valid until next())
  int lineNo_ = 0;
  TimePs last_ = 0;
};

// Length-delimited records, read as protobuf's ParseDelimitedFromZeroCopyStream
// does (a varint32 size, then exactly that many bytes of one message), but
// parsed from the block buffer: about 3x faster. A record claiming more than
// kMaxRecord bytes is corrupt (ebb writes at most 55), so a garbled size never
// makes the reader buffer the rest of the file.
class BinaryReader final : public TrafficReader {
 public:
  BinaryReader(std::string path, std::unique_ptr<std::ifstream> in)
      : path_(std::move(path)), in_(std::move(in)) {}

  std::string where() const override { return fmt::format("{}: record {}", path_, record_); }
  static constexpr std::uint64_t kMaxRecord = 1 << 20;

  Result<std::optional<TrafficMessage>> next() override {
    ++record_;
    // The size: a varint of up to 10 bytes (a size past kMaxRecord, however
    // written, is corrupt: a 4 GiB prefix's low 32 bits once read as 8).
    const std::size_t avail = in_.fill(10);
    if (avail == 0) return std::optional<TrafficMessage>{};
    const auto* p = reinterpret_cast<const unsigned char*>(in_.data());
    std::uint64_t size = 0;
    std::size_t head = 0;
    bool complete = false;
    while (head < avail && head < 10) {
      const unsigned char b = p[head];
      if (head < 9) {
        size |= static_cast<std::uint64_t>(b & 0x7F) << (7 * head);
      } else if ((b & 0x7F) != 0) {
        size = ~std::uint64_t{0};  // past 63 bits
      }
      ++head;
      if ((b & 0x80) == 0) {
        complete = true;
        break;
      }
    }
    if (!complete || size > kMaxRecord || in_.fill(head + size) < head + size ||
        !record_buf_.ParseFromArray(in_.data() + head, static_cast<int>(size))) {
      return Status(ErrorCode::kParse,
                    fmt::format("{}: record {}: truncated or corrupt record", path_, record_));
    }
    if (const std::string rule = checkFields(record_buf_); !rule.empty()) {
      return Status(ErrorCode::kParse, fmt::format("{}: record {}: {}", path_, record_, rule));
    }
    in_.consume(head + size);
    const messages::TrafficRecord& r = record_buf_;
    if (r.time_ps() < 0 || r.time_ps() > kMaxTrafficTimePs) {
      // The text form's range, so the same message is refused in both forms.
      return Status(ErrorCode::kParse,
                    fmt::format("{}: record {}: time {} ps is out of range: must be in [0, {}] "
                                "ps ({:g} ns, about 106 days)",
                                path_, record_, r.time_ps(), kMaxTrafficTimePs, kMaxTrafficTimeNs));
    }
    if (r.time_ps() < last_ || r.bytes() <= 0) {
      return Status(ErrorCode::kParse,
                    fmt::format("{}: record {}: {}", path_, record_,
                                r.bytes() <= 0 ? "bytes must be > 0" : "time goes back"));
    }
    last_ = r.time_ps();
    return std::optional<TrafficMessage>(TrafficMessage{
        r.time_ps(), static_cast<std::uint32_t>(r.src()), static_cast<std::uint32_t>(r.dst()),
        r.bytes(), static_cast<std::uint32_t>(r.job())});
  }

 private:
  // The rules protobuf does not check: src, dst and job are 64-bit on the
  // wire (configs/proto/traffic.proto) so that a value wider than a host
  // index is seen, not cut to its low bits; a known field of the wrong wire
  // type, which protobuf keeps as an unknown field (the value silently 0),
  // is corrupt. Fields of a later version of the format are skipped.
  static std::string checkFields(const messages::TrafficRecord& r) {
    for (const auto& [name, v] : {std::pair<const char*, std::uint64_t>{"src", r.src()},
                                  {"dst", r.dst()},
                                  {"job", r.job()}}) {
      if (v > 0xFFFFFFFFu) {
        return fmt::format("{} {} is wider than the field's 32 bits: corrupt record", name, v);
      }
    }
    static const char* const kNames[] = {nullptr, "time_ps", "src", "dst", "bytes", "job"};
    const google::protobuf::UnknownFieldSet& unknown = r.GetReflection()->GetUnknownFields(r);
    for (int i = 0; i < unknown.field_count(); ++i) {
      const int number = unknown.field(i).number();
      if (number < 1 || number > 5) continue;
      return fmt::format("field {} ({}) has wire type {}, not 0 (varint): corrupt record", number,
                         kNames[number], wireType(unknown.field(i).type()));
    }
    return {};
  }
  static int wireType(google::protobuf::UnknownField::Type t) {
    switch (t) {
      case google::protobuf::UnknownField::TYPE_VARINT:
        return 0;
      case google::protobuf::UnknownField::TYPE_FIXED64:
        return 1;
      case google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED:
        return 2;
      case google::protobuf::UnknownField::TYPE_GROUP:
        return 3;
      case google::protobuf::UnknownField::TYPE_FIXED32:
        return 5;
    }
    return -1;
  }

  std::string path_;
  BlockInput in_;
  messages::TrafficRecord record_buf_;
  std::uint64_t record_ = 0;
  TimePs last_ = 0;
};

// What a reader takes, a writer writes: a time past the range (or before
// 0) would be a file `ebb replay` refuses (a probe saw ebb gen write one).
Status checkWritable(const TrafficMessage& m) {
  if (m.time >= 0 && m.time <= kMaxTrafficTimePs) return Status::ok();
  return invalidArgument(fmt::format(
      "a message at {} ps is outside a traffic file's time range [0, {:g}] ns: nothing written",
      m.time, static_cast<double>(kMaxTrafficTimePs) / 1000.0));
}

class TextWriter final : public TrafficWriter {
 public:
  explicit TextWriter(OutputFile file) : file_(std::move(file)), out_(file_.stream()) {
    out_ << "# ebb traffic file: <time_ns> <src> <dst> <bytes> [job]\n";
  }
  Status write(const TrafficMessage& m) override {
    if (Status st = checkWritable(m); !st.isOk()) return st;
    out_ << fmt::format("{:.3f} {} {} {} {}\n", static_cast<double>(m.time) / 1000.0, m.src, m.dst,
                        m.bytes, m.job);
    return out_ ? Status::ok() : file_.writeError();
  }
  Status close() override { return file_.commit(); }
  std::string writingPath() const override { return file_.writing(); }

 private:
  OutputFile file_;
  std::ofstream& out_;
};

class BinaryWriter final : public TrafficWriter {
 public:
  explicit BinaryWriter(OutputFile file) : file_(std::move(file)), out_(file_.stream()) {
    out_.write(kBinaryTrafficMagic, kMagicLen);
  }
  Status write(const TrafficMessage& m) override {
    if (Status st = checkWritable(m); !st.isOk()) return st;
    messages::TrafficRecord r;
    r.set_time_ps(m.time);
    r.set_src(m.src);
    r.set_dst(m.dst);
    r.set_bytes(m.bytes);
    r.set_job(m.job);
    if (!google::protobuf::util::SerializeDelimitedToOstream(r, &out_)) return file_.writeError();
    return Status::ok();
  }
  Status close() override { return file_.commit(); }
  std::string writingPath() const override { return file_.writing(); }

 private:
  OutputFile file_;
  std::ofstream& out_;
};

}  // namespace

Result<std::unique_ptr<TrafficReader>> TrafficReader::open(const std::string& path) {
  if (Status s = checkReadableFile(path, "traffic file"); !s.isOk()) return s;
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in) return Status(ErrorCode::kIo, fmt::format("cannot open traffic file {}", path));
  char magic[kMagicLen] = {};
  in->read(magic, kMagicLen);
  if (in->gcount() == static_cast<std::streamsize>(kMagicLen) &&
      std::memcmp(magic, kBinaryTrafficMagic, kMagicLen) == 0) {
    return std::unique_ptr<TrafficReader>(std::make_unique<BinaryReader>(path, std::move(in)));
  }
  in->clear();
  in->seekg(0);
  if (!*in) return Status(ErrorCode::kIo, fmt::format("cannot read traffic file {}", path));
  skipUtf8Bom(*in);
  return std::unique_ptr<TrafficReader>(std::make_unique<TextReader>(path, std::move(in)));
}

Result<TrafficFileSummary> validateTrafficFile(const std::string& path, std::uint32_t hosts,
                                               const MessageLimit& limit) {
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
    if (Status s = limit.check(msg.bytes, (*reader)->where()); !s.isOk()) return s;
    ++sum.messages;
    sum.bytes += static_cast<std::uint64_t>(msg.bytes);
    sum.lastTime = msg.time;
  }
  if (sum.messages == 0) {
    return Status(ErrorCode::kInvalidArgument, fmt::format("{}: no messages", path));
  }
  return sum;
}

Result<std::unique_ptr<TrafficWriter>> TrafficWriter::create(const std::string& path, bool binary) {
  Result<OutputFile> file = OutputFile::open(path);
  if (!file) return file.status();
  if (binary) {
    return std::unique_ptr<TrafficWriter>(std::make_unique<BinaryWriter>(std::move(*file)));
  }
  return std::unique_ptr<TrafficWriter>(std::make_unique<TextWriter>(std::move(*file)));
}

}  // namespace ebb::workload
