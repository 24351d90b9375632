// The guard's in-band management rule (setInBand, Resilience::kNone): on a fabric
// managed in-band, checkTurnOffLink() refuses a link whose loss would leave a
// switch that still has a switch link on out of reach of the switch the
// management port attaches at. Reach is over switch links fully on (both
// directions); switches with no switch link on do not count.
#include <gtest/gtest.h>

#include <string>

#include "agent/safety_guard.h"
#include "fabric/minimal_tree.h"
#include "fabric/topology_builder.h"

namespace ebb::agent {
namespace {

using fabric::Direction;
using fabric::LinkId;
using fabric::SwitchId;

// Three levels, two switches each, every switch cabled to both parents:
//
//        spine0   spine1          (spine0 has the lowest GUID: the MT root)
//         |   \  /   |
//        agg0  \/  agg1
//         |    /\    |
//        leaf0    leaf1           (two hosts each)
//
// The minimal tree is leaf0-agg0, leaf1-agg0, agg0-spine0 (lowest up ports).
fabric::Topology threeLevels() {
  fabric::TopologyBuilder b;
  const SwitchId spine0 = b.addSwitch("spine0", 0x10, 4);
  const SwitchId spine1 = b.addSwitch("spine1", 0x11, 4);
  const SwitchId agg0 = b.addSwitch("agg0", 0x20, 4);
  const SwitchId agg1 = b.addSwitch("agg1", 0x21, 4);
  const SwitchId leaf0 = b.addSwitch("leaf0", 0x30, 4);
  const SwitchId leaf1 = b.addSwitch("leaf1", 0x31, 4);
  const SwitchId leaves[] = {leaf0, leaf1};
  const SwitchId aggs[] = {agg0, agg1};
  for (std::uint16_t i = 0; i < 2; ++i) {
    for (std::uint16_t j = 0; j < 2; ++j) {
      // child port 2 + j goes to parent j; parent port i to child i.
      EXPECT_TRUE(b.connectSwitches({leaves[i], std::uint16_t(2 + j)}, {aggs[j], i}).isOk());
      EXPECT_TRUE(
          b.connectSwitches({aggs[i], std::uint16_t(2 + j)}, {j == 0 ? spine0 : spine1, i}).isOk());
    }
    for (std::uint16_t h = 0; h < 2; ++h) {
      const fabric::HostId host = b.addHost("h" + std::to_string(2 * i + h), 0x100u + 2u * i + h);
      EXPECT_TRUE(b.connectHost(host, 0, {leaves[i], h}).isOk());
    }
  }
  return b.build().value();
}

class ManagementReach : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(mt_.containsLink(link("leaf0", "agg0")));
    ASSERT_TRUE(mt_.containsLink(link("leaf1", "agg0")));
    ASSERT_TRUE(mt_.containsLink(link("agg0", "spine0")));
    ASSERT_EQ(mt_.numSwitchLinks(), 3u);
  }

  SwitchId sw(const std::string& name) const { return topo_.findSwitch(name).value(); }

  // The link from `lower`'s up port to `upper`.
  LinkId link(const std::string& lower, const std::string& upper) const {
    const fabric::Switch& s = topo_.sw(sw(lower));
    for (std::uint16_t p : s.upPorts) {
      const LinkId l = s.ports[p].link;
      if (topo_.link(l).upper.sw == sw(upper)) return l;
    }
    ADD_FAILURE() << "no link " << lower << " - " << upper;
    return LinkId();
  }

  // What an agent does on InfiniBand: check the whole link, then record it off.
  void turnOff(SafetyGuard& g, const std::string& lower, const std::string& upper) {
    const LinkId l = link(lower, upper);
    const Status s = g.checkTurnOffLink(l);
    ASSERT_TRUE(s.isOk()) << s.message();
    g.recordOff(l, Direction::kUp);
    g.recordOff(l, Direction::kDown);
  }

  const fabric::Topology topo_ = threeLevels();
  const fabric::MinimalTree mt_ = fabric::MinimalTree::build(topo_).value();
};

TEST_F(ManagementReach, AllowsARemovalThatLeavesAnotherWayIn) {
  SafetyGuard guard(topo_, mt_, fabric::LinkStates::allOn(topo_));
  guard.setInBand({sw("leaf0"), {}, Resilience::kNone});
  // agg1 stays in reach through leaf1, spine0 and spine1.
  EXPECT_TRUE(guard.checkTurnOffLink(link("leaf0", "agg1")).isOk());
  EXPECT_EQ(guard.refused(), 0u);
}

TEST_F(ManagementReach, RefusesCuttingOffASwitchWithLinksStillOnAndNamesIt) {
  SafetyGuard guard(topo_, mt_, fabric::LinkStates::allOn(topo_));
  guard.setInBand({sw("leaf0"), {}, Resilience::kNone});
  // Each of these keeps every switch in reach of leaf0.
  turnOff(guard, "agg1", "spine0");
  turnOff(guard, "leaf1", "agg1");
  turnOff(guard, "agg0", "spine1");
  // Now agg1 and spine1 hang off leaf0 by leaf0-agg1 alone, and agg1-spine1 is
  // still on: without leaf0-agg1 both would be out of reach. Every host pair
  // keeps its path (the MT is whole), so only the management rule refuses.
  const LinkId cut = link("leaf0", "agg1");
  const Status s = guard.checkTurnOffLink(cut);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  // It names the first switch cut off, by id: spine1 (added before agg1).
  EXPECT_NE(s.message().find("leaves spine1 (links still on) out of reach of the management port"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find(topo_.describeLink(cut)), std::string::npos) << s.message();
  EXPECT_EQ(guard.refused(), 1u);
  EXPECT_TRUE(guard.states().isFullyOn(cut));  // a check changes nothing
  EXPECT_TRUE(guard.checkAll().isOk());

  // The same view without in-band management allows it: the refusal is the
  // management rule's alone.
  SafetyGuard outOfBand(topo_, mt_, guard.states());
  EXPECT_TRUE(outOfBand.checkTurnOffLink(cut).isOk());
  // The rule is part of whole-link gating only (per-direction gating is the
  // emulator's, which has no in-band management).
  EXPECT_TRUE(guard.checkTurnOff(cut, Direction::kUp).isOk());
}

TEST_F(ManagementReach, SwitchesWithNoLinkOnDoNotCount) {
  SafetyGuard guard(topo_, mt_, fabric::LinkStates::allOn(topo_));
  guard.setInBand({sw("leaf0"), {}, Resilience::kNone});
  turnOff(guard, "agg1", "spine0");
  turnOff(guard, "leaf1", "agg1");
  turnOff(guard, "agg0", "spine1");
  turnOff(guard, "agg1", "spine1");  // spine1 now has no link on
  // leaf0-agg1 is agg1's last link: afterwards agg1 and spine1 are unreachable
  // but fully off, which is what gating wants.
  EXPECT_TRUE(guard.checkTurnOffLink(link("leaf0", "agg1")).isOk());
  EXPECT_EQ(guard.refused(), 0u);
}

TEST_F(ManagementReach, KeepsTheManagementSwitchItselfConnected) {
  // Management attached at spine1 (off the minimal tree): its last link may
  // not go, or management loses every other switch.
  SafetyGuard guard(topo_, mt_, fabric::LinkStates::allOn(topo_));
  guard.setInBand({sw("spine1"), {}, Resilience::kNone});
  turnOff(guard, "agg0", "spine1");
  const Status s = guard.checkTurnOffLink(link("agg1", "spine1"));
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("leaves spine0 (links still on) out of reach"), std::string::npos)
      << s.message();
}

TEST_F(ManagementReach, HalfOnLinksDoNotCarryManagement) {
  // In-band management needs both directions: a link with one direction off
  // neither reaches a switch nor keeps it counted.
  SafetyGuard guard(topo_, mt_, fabric::LinkStates::allOn(topo_));
  guard.setInBand({sw("leaf0"), {}, Resilience::kNone});
  turnOff(guard, "agg1", "spine0");
  turnOff(guard, "leaf1", "agg1");
  guard.recordOff(link("agg0", "spine1"), Direction::kDown);  // spine1 -> agg0 off
  // As in RefusesCuttingOff...: agg1 and spine1 would be cut off.
  EXPECT_FALSE(guard.checkTurnOffLink(link("leaf0", "agg1")).isOk());
}

}  // namespace
}  // namespace ebb::agent
