// The real test fabric: ibsim simulates a tree ebb wrote, real OpenSM brings
// the subnet up, the real ibnetdiscover walks it, and ebb reads it back.
#include <gtest/gtest.h>
#include <signal.h>

#include <fmt/format.h>

#include <filesystem>
#include <sstream>

#include "fabric/ibnetdiscover.h"
#include "fabric/kary_tree.h"
#include "tests/fabric/topology_compare.h"
#include "tests/harness/ibsim_fabric.h"

namespace ebb::testing {
namespace {

void discoverAndCompare(int k, int n) {
  const fabric::Topology tree = fabric::KAryNTree::make(k, n).value().build();
  std::string scratch;
  {
    IbsimFabric fab(tree);
    scratch = fab.scratchDir();
    EXPECT_GT(fab.ibsimPid(), 0);
    EXPECT_GT(fab.openSmPid(), 0);
    const CommandResult r = fab.runClient({"ibnetdiscover"});
    ASSERT_FALSE(r.timedOut);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::istringstream in(r.out);
    auto discovered = fabric::parseIbnetdiscover(in, "ibnetdiscover");
    ASSERT_TRUE(discovered) << discovered.status().toString();
    fabric::testing::expectSameFabric(tree, *discovered);
    // OpenSM assigned LIDs: the discovered output carries non-zero ones.
    EXPECT_NE(r.out.find("lid 1 "), std::string::npos);
  }
  // Torn down by PID: the scratch folder (with the preload's sys-* dirs) is gone.
  EXPECT_FALSE(std::filesystem::exists(scratch));
}

TEST(IbsimFabric, DiscoversA4Ary3TreeAsWritten) {
  discoverAndCompare(4, 3);
}

TEST(IbsimFabric, DiscoversA2Ary2TreeAsWritten) {
  discoverAndCompare(2, 2);
}

TEST(IbsimFabric, UnlinkIsSeenByDiscoveryAndRelinkRestoresIt) {
  const fabric::Topology tree = fabric::KAryNTree::make(2, 3).value().build();
  IbsimFabric fab(tree);
  // S2_0_0 up port 3 (label 2) goes to S1_0_0 — a non-trivial switch link.
  fab.unlink("S2_0_0", 4);
  CommandResult r = fab.runClient({"ibnetdiscover"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::istringstream in(r.out);
  auto cut = fabric::parseIbnetdiscover(in, "ibnetdiscover");
  ASSERT_TRUE(cut) << cut.status().toString();
  EXPECT_EQ(cut->numLinks(), tree.numLinks() - 1);
  fab.relink("S2_0_0", 4);
  r = fab.runClient({"ibnetdiscover"});
  std::istringstream in2(r.out);
  auto back = fabric::parseIbnetdiscover(in2, "ibnetdiscover");
  ASSERT_TRUE(back) << back.status().toString();
  fabric::testing::expectSameFabric(tree, *back);
}

TEST(IbsimFabric, CountersSetFromTheConsoleAreReadWithPerfquery) {
  const fabric::Topology tree = fabric::KAryNTree::make(2, 2).value().build();
  IbsimFabric fab(tree);
  const std::string guid = fmt::format("{:#x}", tree.sw(tree.findSwitch("S1_0").value()).guid);
  fab.setCounter("S1_0", 3, "PortCountersExtended.PortXmitData", 123456789012ULL);
  fab.setCounter("S1_0", 3, "PortCounters.PortXmitWait", 4242);
  // -G: the switch by GUID (resolved through OpenSM's SA); -x: extended counters.
  CommandResult r = fab.runClient({"perfquery", "-x", "-G", guid, "3"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("123456789012"), std::string::npos) << r.out;
  r = fab.runClient({"perfquery", "-G", guid, "3"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("4242"), std::string::npos) << r.out;
}

TEST(IbsimFabric, RejectedConsoleCommandsThrow) {
  const fabric::Topology tree = fabric::KAryNTree::make(2, 2).value().build();
  IbsimFabric fab(tree, {.startOpenSm = false});
  EXPECT_THROW(fab.unlink("NoSuchSwitch", 1), std::runtime_error);
  EXPECT_THROW(fab.unlink("S1_0", 9), std::runtime_error);
  EXPECT_THROW(fab.relink("S1_0", 3), std::runtime_error);  // never unlinked
  EXPECT_THROW(fab.setCounter("S1_0", 3, "PortCountersExtended.Bogus", 1), std::runtime_error);
  // console() itself hands back ibsim's reply and leaves judging it to the caller.
  EXPECT_NE(fab.console("Bogus").find("unknown"), std::string::npos);
  EXPECT_NO_THROW(fab.unlink("S1_0", 3));
  EXPECT_NO_THROW(fab.relink("S1_0", 3));
}

TEST(IbsimFabric, AConsoleCommandAfterIbsimDiedThrowsInsteadOfKillingTheTest) {
  const fabric::Topology tree = fabric::KAryNTree::make(2, 2).value().build();
  IbsimFabric fab(tree, {.startOpenSm = false});
  ASSERT_EQ(::kill(fab.ibsimPid(), SIGKILL), 0);
  EXPECT_THROW(fab.unlink("S1_0", 3), std::runtime_error);
  EXPECT_THROW(fab.unlink("S1_0", 3), std::runtime_error);  // the pipe is broken now
}

TEST(IbsimFabric, MissingProgramIsAClearError) {
  ChildProcess::Spec spec;
  spec.argv = {"ebb-no-such-program"};
  try {
    ChildProcess p(spec);
    FAIL() << "starting a missing program must throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("ebb-no-such-program"), std::string::npos);
  }
}

}  // namespace
}  // namespace ebb::testing
