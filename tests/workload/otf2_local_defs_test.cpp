// A location's local definitions (<archive>/<location>.def) carry its clock
// offsets and mapping tables; a lost file is not silently read without them.

#include <gtest/gtest.h>

#include "workload/otf2_trace.h"

#ifdef EBB_HAVE_OTF2
#include "tests/workload/otf2_test_archive.h"

namespace ebb::workload {
namespace {

using testing::Otf2Archive;
using testing::Otf2Event;

// Two single-threaded ranks: rank 0 sends twice to rank 1, each call 20
// ticks, the second 200 ticks after the first; with `localDefs` every
// location has a .def: rank 1's with `offsets1`, rank 0's with constant
// offsets when those are given, both with a mapping table if `mapping`.
Otf2Archive twoRanks(bool localDefs, std::vector<std::pair<OTF2_TimeStamp, std::int64_t>> offsets1,
                     bool mapping) {
  const auto calls = [](OTF2_RegionRef region, Otf2Event::Kind kind, std::uint32_t peer) {
    std::vector<Otf2Event> out;
    for (const OTF2_TimeStamp t : {OTF2_TimeStamp{100}, OTF2_TimeStamp{300}}) {
      out.push_back({Otf2Event::kEnter, t, 0, 0, 0, region});
      out.push_back({kind, t + 10, peer, 64});
      out.push_back({Otf2Event::kLeave, t + 20, 0, 0, 0, region});
    }
    return out;
  };
  Otf2Archive a;
  a.world = {0, 1};
  a.locations = {{0, 0, calls(testing::kMpiSend, Otf2Event::kSend, 1)},
                 {1, 1, calls(testing::kMpiRecv, Otf2Event::kRecv, 0)}};
  for (auto& l : a.locations) {
    l.localDefs = localDefs;
    l.mapping = mapping;
  }
  if (!offsets1.empty()) a.locations[0].clockOffsets = {{0, 0}, {1000, 0}};
  a.locations[1].clockOffsets = std::move(offsets1);
  return a;
}

TimePs computeOf(const std::vector<MpiOp>& ops) {
  TimePs sum = 0;
  for (const MpiOp& op : ops) {
    if (op.kind == MpiOpKind::kCompute) sum += op.duration;
  }
  return sum;
}

// The library corrects a location's timestamps with its clock offsets: rank
// 1's clock runs at half the global rate (offset t at local time t), so its
// 180 ticks between calls are 360 ns.
TEST(Otf2LocalDefs, ClockOffsetsCorrectTheLocationsTimestamps) {
  const auto dir = testing::otf2ScratchDir("offsets");
  Otf2Stats st;
  auto t =
      readOtf2Trace(writeOtf2Archive(dir, twoRanks(true, {{0, 0}, {1000, 1000}}, true)), {}, &st);
  ASSERT_TRUE(t) << t.status().toString();
  EXPECT_EQ(computeOf(t->ranks[0]), 180000);
  EXPECT_EQ(computeOf(t->ranks[1]), 360000);
  EXPECT_TRUE(st.warnings.empty());
  std::filesystem::remove_all(dir);
}

// Rank 1's .def lost while rank 0's carries clock offsets and mappings: its
// timestamps would stay on its own clock (180 ns instead of 360) and its
// references unmapped. It was read without a word; now refused naming the
// file and the consequence.
TEST(Otf2LocalDefs, AMissingDefFileIsAnErrorWhenTheOthersCarryOffsets) {
  const auto dir = testing::otf2ScratchDir("nodef");
  for (const bool mapping : {true, false}) {
    const std::string anchor =
        writeOtf2Archive(dir, twoRanks(true, {{0, 0}, {1000, 1000}}, mapping));
    std::filesystem::remove(dir / "traces" / "1.def");
    auto t = readOtf2Trace(anchor);
    ASSERT_FALSE(t) << "a trace without 1.def was read";
    EXPECT_EQ(t.status().code(), ErrorCode::kParse);
    const std::string carried = mapping ? "clock offsets and mapping tables" : "clock offsets";
    EXPECT_NE(t.status().message().find((dir / "traces" / "1.def").string() +
                                        " (rank 1) is missing, while the other locations' local "
                                        "definitions carry " +
                                        carried + " (" + (dir / "traces" / "0.def").string() +
                                        "): without it location 1's event references are not "
                                        "mapped to the global definitions and its timestamps are "
                                        "not corrected to the global clock"),
              std::string::npos)
        << t.status().message();
  }
  std::filesystem::remove_all(dir);
}

// A trace without local definitions is valid OTF2 (ids already global, one
// clock): read as it is. One where only some locations have a .def and
// theirs carry neither offsets nor mappings loses nothing ebb uses: read,
// with a warning on stderr naming the missing file.
TEST(Otf2LocalDefs, WithoutOffsetsOrMappingsAMissingDefFileIsAWarning) {
  const auto dir = testing::otf2ScratchDir("nodefwarn");
  Otf2Stats st;
  auto none = readOtf2Trace(writeOtf2Archive(dir, twoRanks(false, {}, false)), {}, &st);
  ASSERT_TRUE(none) << none.status().toString();
  EXPECT_TRUE(st.warnings.empty());
  const std::string anchor = writeOtf2Archive(dir, twoRanks(true, {}, false));
  std::filesystem::remove(dir / "traces" / "1.def");
  ::testing::internal::CaptureStderr();
  auto t = readOtf2Trace(anchor, {}, &st);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(t) << t.status().toString();
  const std::string warning = (dir / "traces" / "1.def").string() +
                              " (rank 1) is missing while other locations have local "
                              "definitions; theirs carry no clock offsets nor mapping tables";
  ASSERT_EQ(st.warnings.size(), 1u);
  EXPECT_NE(st.warnings[0].find(warning), std::string::npos) << st.warnings[0];
  EXPECT_NE(err.find("warning: " + warning), std::string::npos) << err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ebb::workload
#endif
