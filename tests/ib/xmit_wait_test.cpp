// The congestion trigger on InfiniBand: `ebb agent` with gating.wait_on reads
// PortXmitWait (PortCounters) from real ibsim next to real OpenSM, and a leaf
// whose usable up links wait turns a link on with no bytes flowing.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "fabric/minimal_tree.h"
#include "tests/harness/ibsim_fabric.h"
#include "tests/ib/daemon_rig.h"

namespace ebb::testing {
namespace {

using namespace std::chrono_literals;

const fabric::Topology& tree() {
  return fourAryThreeTree();
}

// After gating settles at zero load, PortXmitWait rises on one leaf's up
// ports: a jump (ticks at the IBA's symbol time), then the saturated value.
// Each makes the leaf turn an up link on by the wait rule alone.
TEST(XmitWait, AWaitingLeafTurnsALinkOnWithNoBytesFlowing) {
  IbsimFabric fab(tree());
  const auto mt = fabric::MinimalTree::build(tree()).value();
  Daemon d(fab, {.topo = &tree(),
                 .fabric = "kary_n_tree { k: 4 n: 3 }",
                 .agentFields = "restore_timeout_ms: 120000",
                 .name = "xmitwait",
                 .gating = "policy: DYNAMIC u_on: 0.15 wait_on: 0.2"});
  PhysicalLayer phys(fab, d, {.tree = &mt});
  playUntilQuiet(d, phys, 90s);
  ASSERT_FALSE(phys.down().empty()) << d.out() << d.err();
  const fabric::SwitchId leaf = tree().switchesAtLevel(2).front();
  const std::string name = tree().sw(leaf).name;
  const auto waitRuleOn = [&](std::uint64_t ticks) {
    for (std::uint16_t p : tree().sw(leaf).upPorts)
      fab.setCounter(name, p + 1, "PortCounters.PortXmitWait", ticks);
    for (int i = 0; i < 10; ++i) {
      for (const Decision& x : d.next(1500ms)) {
        phys.play({x});
        if (x.accepted() && x.sw == name && x.on && x.rule == "xmit-wait>W_on") return true;
      }
    }
    return false;
  };
  // 4e9 ticks of at least 0.25 ns (the fastest lane) is a second: the whole
  // 1 s check period.
  EXPECT_TRUE(waitRuleOn(4'000'000'000)) << readWholeFile(d.logPath());
  playUntilQuiet(d, phys, 60s);
  // Saturated (it stops at 2^32 - 1): every period counts as waited whole.
  EXPECT_TRUE(waitRuleOn(0xFFFFFFFFu)) << readWholeFile(d.logPath());
  EXPECT_EQ(d.err().find("failed safe"), std::string::npos) << d.err();
  EXPECT_NE(d.out().find("xmit-wait>0.2"), std::string::npos) << d.out();
}

}  // namespace
}  // namespace ebb::testing
