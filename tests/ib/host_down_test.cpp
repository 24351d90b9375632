// A host powered off before `ebb agent` starts (its cable Unlinked on ibsim:
// the leaf port has no peer) is a failed part, not a pair to keep connected:
// the agents gate around it as if it were up, no refusal blames it, and when
// it comes back (ReLink: trap 128 through ebb's OpenSM plugin, or a re-probe)
// its link is taken in as repaired and every host pair is routed again
// (docs/ib_agent.md, *Fail safe*).
#include <gtest/gtest.h>

#include <csignal>

#include <algorithm>
#include <chrono>
#include <regex>

#include "fabric/minimal_tree.h"
#include "tests/harness/ibsim_fabric.h"
#include "tests/ib/daemon_rig.h"

namespace ebb::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const fabric::Topology& tree() {
  return fourAryThreeTree();
}

fabric::LinkId hostLink(const std::string& name) {
  for (const fabric::Host& h : tree().hosts()) {
    if (h.name == name) return h.link;
  }
  throw std::runtime_error("no host " + name);
}

std::size_t upLinksOff(fabric::SwitchId leaf, const std::set<fabric::LinkId>& off) {
  std::size_t n = 0;
  for (std::uint16_t p : tree().sw(leaf).upPorts)
    n += off.count(tree().sw(leaf).ports[p].link);
  return n;
}

TEST(ResilienceHostDown, AHostOffAtStartBlocksNoTurnOffAndIsTakenInWhenItComesBack) {
  IbsimFabric fab(tree(), withOsmEventPlugin());
  const std::string host = "H5";  // on another leaf than the daemon's (H1)
  const fabric::LinkId cable = hostLink(host);
  const fabric::SwitchId leaf = tree().link(cable).upper.sw;
  fab.unlink(host, 1);  // powered off before ebb starts
  const auto mt = fabric::MinimalTree::build(tree()).value();
  Daemon d(fab, {.topo = &tree(),
                 .fabric = "kary_n_tree { k: 4 n: 3 }",
                 .agentFields = "osm_events: \"osm-events.sock\" restore_timeout_ms: 20000",
                 .name = "host_down"});
  PhysicalLayer phys(fab, d, {.tree = &mt});
  playUntilQuiet(d, phys, 30s);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_NE(d.out().find("down at start, taken as failed: " + tree().describeLink(cable)),
            std::string::npos)
      << d.out();
  // No refusal blames the host that is off.
  const std::regex blamesHost("\\b" + host + "\\b");
  for (const Decision& x : d.all()) {
    EXPECT_FALSE(x.refused && std::regex_search(x.why, blamesHost)) << x.why;
  }
  // Gated as with the host up: before, every turn-off anywhere was refused
  // ("leaves no up*/down* path from H5 to H0"); now its own leaf's up links
  // go off like the others'.
  EXPECT_GE(phys.down().size(), 20u) << d.out() << d.err();
  EXPECT_GE(upLinksOff(leaf, phys.down()), 1u) << d.out() << d.err();

  // The host comes back: its link is taken in as repaired (a re-homing).
  const std::size_t sweeps = openSmSweeps(fab);
  fab.relink(host, 1);
  const std::string repaired = "re-homed after " + tree().describeLink(cable) + " up";
  const auto deadline = Clock::now() + 15s;
  while (Clock::now() < deadline && d.out().find(repaired) == std::string::npos) {
    phys.play(d.next(200ms));
  }
  EXPECT_NE(d.out().find(repaired), std::string::npos) << d.out() << d.err();
  // Every pair, the host's included, has a route again.
  waitForSweepAfter(fab, sweeps, 5s);
  std::string broken = "not checked";
  for (int i = 0; i < 10 && !broken.empty(); ++i) {
    phys.play(d.next(0ms));
    broken = checkAllPairs(
        fab, tree(), [&] { phys.play(d.next(0ms)); }, [&] { return phys.cut(); });
    if (!broken.empty()) waitForSweepAfter(fab, openSmSweeps(fab), 1s);
  }
  EXPECT_EQ(broken, "") << d.out() << d.err();
  d.proc().signal(SIGTERM);
  for (int i = 0; i < 300 && d.proc().running(); ++i)
    phys.play(d.next(100ms));
  EXPECT_EQ(d.proc().stop(10s), 0) << d.err();
  EXPECT_EQ(d.err().find("failed safe"), std::string::npos) << d.err();
}

}  // namespace
}  // namespace ebb::testing
