// OTF2 features ebb does not replay are refused saying why, never skipped.

#include <gtest/gtest.h>

#include "workload/otf2_trace.h"

#ifdef EBB_HAVE_OTF2
#include "tests/workload/otf2_test_archive.h"

namespace ebb::workload {
namespace {

// An MPI_Put (OTF2's RmaPut event) was skipped without a word: its bytes
// were missing from the replay.
TEST(Otf2Refusals, OneSidedCommunicationIsRefusedNotDropped) {
  const auto dir = testing::otf2ScratchDir("rma");
  testing::Otf2Archive a;
  a.world = {0, 1};
  testing::Otf2Event put{testing::Otf2Event::kRmaPut, 10, 1, 4096};
  a.locations = {{0, 0, {put}}, {1, 1, {}}};
  const std::string anchor = testing::writeOtf2Archive(dir, a);
  auto t = readOtf2Trace(anchor);
  ASSERT_FALSE(t) << "an RMA put was read";
  EXPECT_EQ(t.status().code(), ErrorCode::kParse);
  EXPECT_NE(t.status().message().find(anchor + ": rank 0, event 1: one-sided communication (an "
                                               "RMA put of 4096 bytes on RMA window 0) is not "
                                               "replayed: ebb replays two-sided MPI only"),
            std::string::npos)
      << t.status().message();
  std::filesystem::remove_all(dir);
}

// Broken global definitions are named by their file (<anchor>.def), not by
// the anchor, as a broken event file is.
TEST(Otf2Refusals, BrokenGlobalDefinitionsAreNamedByTheirFile) {
  const auto dir = testing::otf2ScratchDir("defs");
  testing::Otf2Archive a;
  a.world = {0, 1};
  a.locations = {{0, 0, {}}, {1, 1, {}}};
  const std::string anchor = testing::writeOtf2Archive(dir, a);
  const std::filesystem::path defs = std::filesystem::path(anchor).replace_extension(".def");
  ASSERT_TRUE(std::filesystem::exists(defs)) << defs;
  std::filesystem::resize_file(defs, 20);
  auto t = readOtf2Trace(anchor);
  ASSERT_FALSE(t) << "truncated global definitions were read";
  EXPECT_EQ(t.status().code(), ErrorCode::kParse);
  EXPECT_NE(t.status().message().find(defs.string() + ": unreadable global definitions ("),
            std::string::npos)
      << t.status().message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ebb::workload
#endif
