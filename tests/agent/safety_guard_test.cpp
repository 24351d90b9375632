#include "agent/safety_guard.h"

#include <gtest/gtest.h>

#include "fabric/kary_tree.h"

namespace ebb::agent {
namespace {

using fabric::Direction;
using fabric::LinkId;

TEST(SafetyGuard, RefusesMinimalTreeLinks) {
  const fabric::Topology t = fabric::KAryNTree::make(4, 3).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(t).value();
  SafetyGuard guard(t, mt, fabric::LinkStates::allOn(t));
  int refused = 0;
  for (LinkId::rep_type l = 0; l < t.numLinks(); ++l) {
    if (!mt.containsLink(LinkId(l))) continue;
    const Status s = guard.checkTurnOff(LinkId(l), Direction::kUp);
    EXPECT_FALSE(s.isOk());
    EXPECT_NE(s.message().find("minimal-tree link"), std::string::npos);
    ++refused;
  }
  EXPECT_EQ(guard.refused(), static_cast<std::uint64_t>(refused));
}

TEST(SafetyGuard, RefusesTheLastPathEvenForANonMtLink) {
  const fabric::Topology t = fabric::KAryNTree::make(2, 2).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(t).value();
  SafetyGuard guard(t, mt, fabric::LinkStates::allOn(t));
  // Leaf S1_1 has up ports 2 (MT) and 3. Pretend the MT link is already down
  // (e.g. a failure seen by the backend): its other up link is now the only way.
  const auto& leaf = t.sw(t.findSwitch("S1_1").value());
  const LinkId mtUp = leaf.ports[leaf.upPorts[0]].link;
  const LinkId other = leaf.ports[leaf.upPorts[1]].link;
  ASSERT_TRUE(mt.containsLink(mtUp));
  ASSERT_FALSE(mt.containsLink(other));
  guard.recordOff(mtUp, Direction::kUp);
  const Status s = guard.checkTurnOff(other, Direction::kUp);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("no up*/down* path"), std::string::npos) << s.message();
  // With the MT link back, the same action is allowed.
  guard.recordOn(mtUp, Direction::kUp);
  EXPECT_TRUE(guard.checkTurnOff(other, Direction::kUp).isOk());
  EXPECT_TRUE(guard.checkAll().isOk());
}

}  // namespace
}  // namespace ebb::agent
