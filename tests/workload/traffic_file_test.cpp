#include "workload/traffic_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>

#include <fmt/format.h>
#include <google/protobuf/util/delimited_message_util.h>

#include "configs/proto/traffic.pb.h"  // generated
#include "workload/arrival_gap.h"
#include "workload/traffic_gen.h"

namespace ebb::workload {
namespace {

std::string scratch(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ebb-traffic-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::vector<TrafficMessage> readAll(const std::string& path) {
  auto r = TrafficReader::open(path);
  EXPECT_TRUE(r) << r.status().toString();
  std::vector<TrafficMessage> out;
  while (true) {
    auto m = (*r)->next();
    EXPECT_TRUE(m) << m.status().toString();
    if (!m || !m->has_value()) break;
    out.push_back(**m);
  }
  return out;
}

class RoundTrip : public ::testing::TestWithParam<bool> {};

TEST_P(RoundTrip, WriteThenReadGivesTheSameMessages) {
  const bool binary = GetParam();
  const std::string path = scratch(binary ? "rt.bin" : "rt.txt");
  std::vector<TrafficMessage> in;
  std::mt19937 rng(3);
  const auto r32 = [&](std::uint32_t mod) { return static_cast<std::uint32_t>(rng() % mod); };
  TimePs t = 0;
  for (int i = 0; i < 1000; ++i) {
    t += static_cast<TimePs>(rng() % 5000) * 1000;  // whole ns: exact in text
    in.push_back({t, r32(64), r32(64), 1 + static_cast<std::int64_t>(r32(9000)), r32(4)});
  }
  auto w = TrafficWriter::create(path, binary);
  ASSERT_TRUE(w);
  for (const auto& m : in)
    ASSERT_TRUE((*w)->write(m).isOk());
  ASSERT_TRUE((*w)->close().isOk());
  const auto out = readAll(path);
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].time, in[i].time);
    EXPECT_EQ(out[i].src, in[i].src);
    EXPECT_EQ(out[i].dst, in[i].dst);
    EXPECT_EQ(out[i].bytes, in[i].bytes);
    EXPECT_EQ(out[i].job, in[i].job);
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, RoundTrip, ::testing::Values(false, true),
                         [](const auto& tpi) { return tpi.param ? "binary" : "text"; });

struct BadLine {
  const char* text;
  const char* expect;
};

// Reads `path` to its end; the error that stopped it (ok if none).
Status readError(const std::string& path) {
  auto r = TrafficReader::open(path);
  if (!r) return r.status();
  while (true) {
    auto m = (*r)->next();
    if (!m) return m.status();
    if (!m->has_value()) return Status::ok();
  }
}

TEST(TrafficFile, BadTextNamesTheFileAndLine) {
  const BadLine cases[] = {
      {"10 0 1 64\n20 0 1\n", ":2: 3 fields"},
      {"10 0 1 64\nabc 0 1 64\n", ":2: time 'abc'"},
      {"10 0 1 64\n5 0 1 64\n", ":2: time 5 ns goes back"},
      {"10 0 1 -64\n", ":1: bytes must be > 0"},
      {"10 0 1 0\n", ":1: bytes must be > 0"},
      {"10 x 1 64\n", ":1: source 'x'"},
      {"10 0 1 64 2 9\n", ":1: 6 fields"},
      {"# header\n\n-1 0 1 64\n", ":3: time '-1' ns is out of range: must be in [0, 9.2e+15] ns"},
      {"9.3e15 0 1 64\n", ":1: time '9.3e15' ns is out of range: must be in [0, 9.2e+15] ns"},
      {"1e400 0 1 64\n", ":1: time '1e400' ns is out of range"},
      {"nan 0 1 64\n", ":1: time 'nan' is not a non-negative number of nanoseconds"},
      // Decimal only (was: 0x10 read as 16 ns, exit 0).
      {"0 0 1 64\n0x10 1 0 64\n",
       ":2: time '0x10' is not a non-negative number of nanoseconds (decimal digits, '.' and an "
       "exponent only: no hexadecimal, inf or nan)"},
      {"0x1p4 0 1 64\n", ":1: time '0x1p4' is not a non-negative number of nanoseconds (decimal"},
      {"inf 0 1 64\n", ":1: time 'inf' is not a non-negative number of nanoseconds (decimal"},
      {"infinity 0 1 64\n", ":1: time 'infinity' is not a non-negative number"},
      {"10 0 1 6\x01"
       "4\n",
       ":1: bytes '6\\x014' is not a non-negative integer"},
      {"10 0 1 99999999999999999999\n",
       ":1: bytes '99999999999999999999' is out of range (at most 9223372036854775807)"},
  };
  for (const BadLine& c : cases) {
    const std::string path = scratch("bad.txt");
    std::ofstream(path) << c.text;
    const Status st = readError(path);
    EXPECT_EQ(st.code(), ErrorCode::kParse) << c.text;
    EXPECT_NE(st.message().find(path + c.expect), std::string::npos) << st.message();
  }
}

// Decimals, exponents and a leading '+' stay times (docs/traffic.md).
TEST(TrafficFile, DecimalTimesAndExponentsRead) {
  const std::string path = scratch("decimal.txt");
  std::ofstream(path) << "0.5 0 1 64\n1.5e1 1 0 64\n+20 0 1 64\n2.5E+1 1 0 64\n";
  const std::vector<TrafficMessage> m = readAll(path);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].time, 500);
  EXPECT_EQ(m[1].time, 15'000);
  EXPECT_EQ(m[2].time, 20'000);
  EXPECT_EQ(m[3].time, 25'000);
}

// A NUL byte is binary data, as the topology reader says, wherever it breaks
// the line (was: "1 fields: expected ...").
TEST(TrafficFile, ANulByteIsBinaryDataNotAFieldCount) {
  const std::string path = scratch("nul.txt");
  for (const std::string& text : {std::string("0 0 1 64\n\0\n", 11),
                                  std::string("0 0 1 6\0"
                                              "4\n",
                                              10),
                                  std::string("0 0 1 64 \0\0\0\0\0\0\0\n", 17)}) {
    std::ofstream(path, std::ios::binary) << text;
    const Status st = readError(path);
    EXPECT_EQ(st.code(), ErrorCode::kParse);
    EXPECT_NE(st.message().find(":" + std::to_string(std::count(text.begin(), text.end(), '\n')) +
                                ": binary data (NUL byte): not a text traffic file"),
              std::string::npos)
        << st.message();
  }
  // In a comment it is part of the comment.
  std::ofstream(path, std::ios::binary) << std::string("0 0 1 64 # \0\n", 13);
  EXPECT_EQ(readAll(path).size(), 1u);
}

TEST(TrafficFile, ValidationChecksHostsBeforeAnythingRuns) {
  const std::string path = scratch("hosts.txt");
  std::ofstream(path) << "1 0 1 64\n2 3 70 64\n";
  auto v = validateTrafficFile(path, 64);
  ASSERT_FALSE(v);
  EXPECT_NE(v.status().message().find("hosts.txt:2: host 70 is beyond"), std::string::npos)
      << v.status().message();
  std::ofstream(path) << "1 5 5 64\n";
  v = validateTrafficFile(path, 64);
  ASSERT_FALSE(v);
  EXPECT_NE(v.status().message().find("both host 5"), std::string::npos);
  std::ofstream(path) << "1 0 1 64\n2.5 1 0 100\n";
  v = validateTrafficFile(path, 64);
  ASSERT_TRUE(v) << v.status().toString();
  EXPECT_EQ(v->messages, 2u);
  EXPECT_EQ(v->bytes, 164u);
  EXPECT_EQ(v->lastTime, 2500);
  auto missing = validateTrafficFile("/nonexistent/traffic.txt", 64);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), ErrorCode::kIo);
}

TEST(TrafficFile, TruncatedBinaryIsAnError) {
  const std::string path = scratch("trunc.bin");
  {
    auto w = TrafficWriter::create(path, true);
    for (int i = 0; i < 10; ++i)
      ASSERT_TRUE((*w)->write({i * 1000, 0, 1, 64, 0}).isOk());
    ASSERT_TRUE((*w)->close().isOk());
  }
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  auto v = validateTrafficFile(path, 4);
  ASSERT_FALSE(v);
  EXPECT_NE(v.status().message().find("record 10: truncated"), std::string::npos)
      << v.status().message();
}

// The readers parse from blocks of the file (16 KiB growing to 1 MiB): lines,
// comments and records that cross block boundaries, a line longer than a
// block, CRLF and a last line without '\n' read as before.
TEST(TrafficFile, LargeFilesReadAcrossBlocks) {
  const std::string path = scratch("large.txt");
  const int kLines = 200'000;
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < kLines; ++i) {
      if (i == kLines / 2) out << "# " << std::string(1'000'000, 'x') << "\n";
      if (i % 1000 == 7) out << "\n  \t\n";
      out << i << ".5 " << i % 64 << ',' << (i + 1) % 64 << " 64" << (i % 3 == 0 ? "\r\n" : "\n");
    }
    out << "1e9 1 2 3";  // no final newline
  }
  auto r = TrafficReader::open(path);
  ASSERT_TRUE(r) << r.status().toString();
  int n = 0;
  while (true) {
    auto m = (*r)->next();
    ASSERT_TRUE(m) << m.status().toString();
    if (!m->has_value()) break;
    if (n < kLines) {
      ASSERT_EQ((*m)->time, static_cast<TimePs>(n) * 1000 + 500) << (*r)->where();
      ASSERT_EQ((*m)->src, static_cast<std::uint32_t>(n % 64));
    } else {
      EXPECT_EQ((*m)->time, 1'000'000'000'000);
      EXPECT_EQ((*m)->bytes, 3);
    }
    ++n;
  }
  EXPECT_EQ(n, kLines + 1);
  // 200 001 messages, 1 comment line, 200 x 2 blank lines.
  EXPECT_EQ((*r)->where(), path + ":" + std::to_string(kLines + 1 + 1 + 400));
  // An error after all that still names its line.
  std::ofstream(path, std::ios::app) << "\n5 1 2 3\n";
  auto v = validateTrafficFile(path, 64);
  ASSERT_FALSE(v);
  EXPECT_NE(v.status().message().find(path + ":" + std::to_string(kLines + 403) + ": time 5 ns"),
            std::string::npos)
      << v.status().message();

  const std::string bin = scratch("large.bin");
  {
    auto w = TrafficWriter::create(bin, true);
    for (int i = 0; i < kLines; ++i)
      ASSERT_TRUE((*w)->write({i, 1, 2, 1 + i, 0}).isOk());
    ASSERT_TRUE((*w)->close().isOk());
  }
  auto sum = validateTrafficFile(bin, 4);
  ASSERT_TRUE(sum) << sum.status().toString();
  EXPECT_EQ(sum->messages, static_cast<std::uint64_t>(kLines));
  EXPECT_EQ(sum->lastTime, kLines - 1);
  std::filesystem::resize_file(bin, std::filesystem::file_size(bin) - 1);
  sum = validateTrafficFile(bin, 4);
  ASSERT_FALSE(sum);
  EXPECT_NE(sum.status().message().find(": record 200000: truncated or corrupt record"),
            std::string::npos)
      << sum.status().message();
}

// A line past 1 MiB is refused wherever it comes, naming its line: after a
// megabyte of short lines the buffer had moved under the view of the line
// before, which the error then read (a use after free, a crash), and a
// line up to the buffer's size (2 MiB) was read when it held its '\n'.
TEST(TrafficFile, ALineLongerThanOneMebibyteIsRefusedAfterAnyPrefix) {
  for (const bool newline : {false, true}) {
    for (const int before : {10, 120'000}) {
      SCOPED_TRACE(testing::Message() << before << " lines before, newline " << newline);
      const std::string path = scratch("long-line.txt");
      {
        std::ofstream out(path, std::ios::binary);
        for (int i = 0; i < before; ++i)
          out << "0 0 1 64\n";
        out << "1 0 1 64 " << std::string(1'500'000, '0') << (newline ? "\n" : "");
      }
      auto v = validateTrafficFile(path, 4);
      ASSERT_FALSE(v);
      EXPECT_NE(v.status().message().find(path + ":" + std::to_string(before + 1) +
                                          ": line longer than 1048576 bytes"),
                std::string::npos)
          << v.status().message();
    }
  }
}

// Found by differential fuzzing of the rewritten binary reader against the
// former one (protobuf's ParseDelimitedFromZeroCopyStream): a record whose
// size is an overlong varint (more than 10 bytes) was taken for a clean end
// of the file, silently dropping every later record.
TEST(TrafficFile, GarbledBinaryRecordSizeIsAnErrorNotTheEnd) {
  const std::string path = scratch("garbled.bin");
  {
    auto w = TrafficWriter::create(path, true);
    ASSERT_TRUE((*w)->write({0, 0, 1, 64, 0}).isOk());
    ASSERT_TRUE((*w)->close().isOk());
  }
  const auto goodSize = std::filesystem::file_size(path);
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << std::string(11, '\xff') << '\x01';
  }
  auto v = validateTrafficFile(path, 4);
  ASSERT_FALSE(v);
  EXPECT_EQ(v.status().code(), ErrorCode::kParse);
  EXPECT_NE(v.status().message().find("garbled.bin: record 2: truncated or corrupt record"),
            std::string::npos)
      << v.status().message();
  // A size beyond any record (here 2 GiB) is corrupt at once.
  std::filesystem::resize_file(path, goodSize);
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << "\x80\x80\x80\x80\x08" << std::string(100, '\0');
  }
  v = validateTrafficFile(path, 4);
  ASSERT_FALSE(v);
  EXPECT_NE(v.status().message().find("record 2: truncated or corrupt record"), std::string::npos)
      << v.status().message();
  // Past 32 bits (2^32 + 8, then 2^32): corrupt, not its low 32 bits (8, a
  // valid record that followed; 0, "an empty record").
  for (const char* prefix : {"\x88\x80\x80\x80\x10", "\x80\x80\x80\x80\x10"}) {
    std::filesystem::resize_file(path, goodSize);
    {
      std::ofstream out(path, std::ios::binary | std::ios::app);
      out << prefix;
    }
    {
      // A valid 8-byte record after it, as the low 32 bits would read it.
      auto w = TrafficWriter::create(scratch("one.bin"), true);
      ASSERT_TRUE((*w)->write({0, 0, 1, 64, 0}).isOk());
      ASSERT_TRUE((*w)->close().isOk());
      std::ifstream one(scratch("one.bin"), std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(one)), std::istreambuf_iterator<char>());
      std::ofstream out(path, std::ios::binary | std::ios::app);
      out << bytes.substr(9);  // the record after the magic (8 bytes) and its 1-byte size
    }
    v = validateTrafficFile(path, 4);
    ASSERT_FALSE(v);
    EXPECT_NE(v.status().message().find("record 2: truncated or corrupt record"), std::string::npos)
        << v.status().message();
  }
}

// A binary record's time is held to the text form's range, naming the record:
// a time beyond it was read and then silently dropped by the replay.
TEST(TrafficFile, BinaryTimesBeyondTheTextRangeAreRefused) {
  const std::string path = scratch("late.bin");
  for (const TimePs late :
       {std::numeric_limits<TimePs>::max(), kMaxTrafficTimePs + 1, TimePs{-5}}) {
    {
      // ebb's writers refuse such a time: the file is made by hand.
      auto w = TrafficWriter::create(path, true);
      EXPECT_FALSE((*w)->write({late, 0, 1, 64, 0}).isOk()) << late;
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(kBinaryTrafficMagic, sizeof(kBinaryTrafficMagic) - 1);
      for (const TimePs t : {TimePs{0}, late}) {
        messages::TrafficRecord r;
        r.set_time_ps(t);
        r.set_dst(1);
        r.set_bytes(64);
        ASSERT_TRUE(google::protobuf::util::SerializeDelimitedToOstream(r, &out));
      }
    }
    auto v = validateTrafficFile(path, 4);
    ASSERT_FALSE(v) << late;
    EXPECT_EQ(v.status().code(), ErrorCode::kParse);
    EXPECT_NE(v.status().message().find(
                  fmt::format("late.bin: record 2: time {} ps is out of range: must be in [0, "
                              "9200000000000000000] ps",
                              late)),
              std::string::npos)
        << v.status().message();
  }
  {
    auto w = TrafficWriter::create(path, true);
    ASSERT_TRUE((*w)->write({kMaxTrafficTimePs, 0, 1, 64, 0}).isOk());
    ASSERT_TRUE((*w)->close().isOk());
  }
  EXPECT_TRUE(validateTrafficFile(path, 4));
}

// A binary record's fields as ebb's reader holds them, byte by byte: a src,
// dst or job varint wider than 32 bits wrapped (protobuf keeps the low bits),
// a field of the wrong wire type was taken for an unknown one (the host
// silently 0).
TEST(TrafficFile, BinaryFieldsAreReadWholeNotWrapped) {
  const std::string path = scratch("fields.bin");
  const auto varint = [](std::uint64_t v) {
    std::string out;
    do {
      out += static_cast<char>((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
      v >>= 7;
    } while (v);
    return out;
  };
  // Field `f` as a varint (wire type 0).
  const auto field = [&](std::uint64_t f, std::uint64_t v) { return varint(f << 3) + varint(v); };
  const auto error = [&](const std::string& record) {
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        << kBinaryTrafficMagic << varint(record.size()) << record;
    auto v = validateTrafficFile(path, 4);
    return v ? std::string("accepted") : v.status().message();
  };
  const std::string tail = field(3, 2) + field(4, 64);
  EXPECT_EQ(error(field(1, 1000) + field(2, 1) + tail), "accepted");
  // A field of a later format version is skipped, as protobuf does.
  EXPECT_EQ(error(field(1, 1000) + field(2, 1) + tail + field(9, 5) + varint((10 << 3) | 2) +
                  varint(3) + "abc"),
            "accepted");
  EXPECT_NE(error(field(1, 1000) + field(2, (1ull << 32) + 1) + tail)
                .find("fields.bin: record 1: src 4294967297 is wider than the field's 32 bits: "
                      "corrupt record"),
            std::string::npos)
      << error(field(1, 1000) + field(2, (1ull << 32) + 1) + tail);
  EXPECT_NE(error(field(1, 1000) + field(2, 1) + field(3, 1ull << 32) + field(4, 64))
                .find("record 1: dst 4294967296 is wider than the field's 32 bits"),
            std::string::npos);
  EXPECT_NE(error(field(1, 1000) + field(2, 1) + tail + field(5, (1ull << 40) + 7))
                .find("record 1: job 1099511627783 is wider than the field's 32 bits"),
            std::string::npos);
  const std::string wrongType = field(1, 1000) + varint((2 << 3) | 2) + varint(1) + "\x01" + tail;
  EXPECT_NE(
      error(wrongType).find(
          "fields.bin: record 1: field 2 (src) has wire type 2, not 0 (varint): corrupt record"),
      std::string::npos)
      << error(wrongType);
  // A varint cut off by the record's end, or a field number 0, is corrupt.
  EXPECT_NE(error(field(1, 1000) + "\x10\x80").find("record 1: truncated or corrupt record"),
            std::string::npos);
  EXPECT_NE(error(field(0, 1) + field(2, 1) + tail).find("record 1: truncated or corrupt record"),
            std::string::npos);
}

// The file appears at its path only when complete: until close() the earlier
// file is untouched, and a writer dropped without close() leaves it so, with
// no temporary file behind.
TEST(TrafficWriter, ReplacesTheFileOnlyWhenComplete) {
  const auto dir = std::filesystem::path(scratch("atomic"));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.txt").string();
  const auto text = [&] {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  std::ofstream(path) << "0 0 1 64\n";
  {
    auto w = TrafficWriter::create(path, false);
    ASSERT_TRUE(w);
    ASSERT_TRUE((*w)->write({0, 2, 3, 128, 0}).isOk());
    EXPECT_NE((*w)->writingPath(), path);
    EXPECT_EQ(text(), "0 0 1 64\n");
  }
  EXPECT_EQ(text(), "0 0 1 64\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
  auto w = TrafficWriter::create(path, true);
  ASSERT_TRUE(w);
  ASSERT_TRUE((*w)->write({0, 2, 3, 128, 0}).isOk());
  ASSERT_TRUE((*w)->close().isOk());
  const auto msgs = readAll(path);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].src, 2u);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
}

class CollectWriter final : public TrafficWriter {
 public:
  Status write(const TrafficMessage& m) override {
    msgs.push_back(m);
    return Status::ok();
  }
  Status close() override { return Status::ok(); }
  std::vector<TrafficMessage> msgs;
};

// A rate too small for the standard geometric draw (log(1 - p) rounds to 0)
// gives no message, not one per cycle; the draw saturates instead of
// overflowing, and larger rates keep the standard distribution's stream.
TEST(TrafficGen, ATinyRateGivesNoMessageNotFullRate) {
  for (double rate : {1e-13, 1e-16, 1e-17, 1e-300}) {
    GenSpec s;
    s.hosts = 2;
    s.rate = RateProfile::constant(rate, 200'000'000);
    CollectWriter w;
    ASSERT_TRUE(generateTraffic(s, w));
    EXPECT_TRUE(w.msgs.empty()) << rate;
  }
  // Over a span longer than kNoArrival too: "never" was sent as messages at
  // its multiples, and past 4 of them the times wrapped negative, for ever.
  for (const TimePs span : {TimePs{9'000'000'000'000'000'000}, kNoArrival * 3}) {
    GenSpec s;
    s.hosts = 2;
    s.rate = RateProfile::constant(1e-30, span);
    CollectWriter w;
    ASSERT_TRUE(generateTraffic(s, w));
    EXPECT_TRUE(w.msgs.empty()) << span;
  }
  EXPECT_FALSE(arrivalBefore(0, kNoArrival, std::numeric_limits<TimePs>::max()));
  EXPECT_FALSE(arrivalBefore(5, std::numeric_limits<TimePs>::max() - 2, 100));
  EXPECT_FALSE(arrivalBefore(90, 10, 100));
  EXPECT_EQ(arrivalBefore(89, 10, 100), TimePs{99});
  std::mt19937_64 a(3);
  EXPECT_EQ(bernoulliGap(1e-300, 1000, a), kNoArrival);
  EXPECT_EQ(poissonGap(1e-300, 1000, a), kNoArrival);
  EXPECT_GE(bernoulliGap(1e-13, 1000, a), 1000);
  std::mt19937_64 c(5), d(5);
  std::geometric_distribution<std::int64_t> g(0.01);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(bernoulliGap(0.01, 1000, c), (g(d) + 1) * 1000);
}

TEST(TrafficGen, PatternsHaveTheirShape) {
  GenSpec s;
  s.hosts = 64;
  s.rate = RateProfile::constant(0.2, 50'000'000);
  s.pattern = GenPattern::kPermutation;
  CollectWriter perm;
  ASSERT_TRUE(generateTraffic(s, perm));
  std::map<std::uint32_t, std::uint32_t> dstOf;
  for (std::size_t i = 0; i < perm.msgs.size(); ++i) {
    const auto& m = perm.msgs[i];
    EXPECT_NE(m.src, m.dst);
    if (i) {
      EXPECT_GE(m.time, perm.msgs[i - 1].time);
    }
    auto [it, fresh] = dstOf.emplace(m.src, m.dst);
    EXPECT_EQ(it->second, m.dst);
  }
  // 64 hosts x 50 000 cycles x 0.2 / 16 flits = 40 000 messages.
  EXPECT_NEAR(static_cast<double>(perm.msgs.size()), 40'000, 1'200);

  s.pattern = GenPattern::kHotspot;
  s.hotspotHost = 7;
  s.hotspotFraction = 0.5;
  CollectWriter hot;
  ASSERT_TRUE(generateTraffic(s, hot));
  const auto toHot = std::count_if(hot.msgs.begin(), hot.msgs.end(),
                                   [](const TrafficMessage& m) { return m.dst == 7; });
  EXPECT_NEAR(static_cast<double>(toHot) / static_cast<double>(hot.msgs.size()), 0.5, 0.03);

  s.pattern = GenPattern::kIncast;
  s.incastSenders = 12;
  s.incastPeriodPs = 1'000'000;
  s.endPs = 10'000'000;
  CollectWriter incast;
  ASSERT_TRUE(generateTraffic(s, incast));
  EXPECT_EQ(incast.msgs.size(), 10u * 12u);
  for (const auto& m : incast.msgs)
    EXPECT_EQ(m.dst, 7u);

  s.incastSenders = 64;
  CollectWriter none;
  EXPECT_FALSE(generateTraffic(s, none));
}

}  // namespace
}  // namespace ebb::workload
