// Anti-flap: a link turned off more than the limit within the window is held
// on, the hold doubles while flapping goes on, and a quiet window resets it.
#include "agent/flap_damper.h"

#include <gtest/gtest.h>

#include "agent/safety_guard.h"
#include "fabric/kary_tree.h"

namespace ebb::agent {
namespace {

using fabric::LinkId;

TEST(FlapDamper, HoldsALinkThatFlapsAndDoublesTheHold) {
  FlapDamper d;
  d.setLimits({3, milliseconds(100), milliseconds(50)});
  const LinkId a(4), b(5);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(d.check(a, milliseconds(10 * i), "a").isOk()) << i;
    d.noteOff(a, milliseconds(10 * i));
  }
  // The fourth turn-off within 100 ms is refused: held on for 50 ms.
  const Status s = d.check(a, milliseconds(30), "a");
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("went off 3 times within 100 ms; held on for 50 ms"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(d.holds(), 1u);
  EXPECT_EQ(d.heldAt(milliseconds(31)), 1u);
  EXPECT_NE(d.check(a, milliseconds(79), "a").message().find("held on for 1 ms more"),
            std::string::npos);
  EXPECT_TRUE(d.check(b, milliseconds(31), "b").isOk());  // per link
  // The hold (50 ms) is shorter than the window (100 ms): when it ends the
  // three turn-offs are still within the window, so the next one is refused
  // at once, held twice as long. Never more than the limit in any window.
  EXPECT_NE(d.check(a, milliseconds(80), "a").message().find("held on for 100 ms"),
            std::string::npos);
  EXPECT_EQ(d.heldAt(milliseconds(179)), 1u);
  EXPECT_EQ(d.heldAt(milliseconds(180)), 0u);
  // By then the old turn-offs have left the window: free again.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(d.check(a, milliseconds(180 + i), "a").isOk()) << i;
    d.noteOff(a, milliseconds(180 + i));
  }
  // Quiet for a whole window after the hold ended: back to 50 ms.
  for (int i = 0; i < 3; ++i)
    d.noteOff(a, milliseconds(300 + i));
  EXPECT_NE(d.check(a, milliseconds(305), "a").message().find("held on for 50 ms"),
            std::string::npos);
  EXPECT_EQ(d.holds(), 3u);
}

TEST(FlapDamper, OffByDefaultAndValidated) {
  FlapDamper d;
  for (int i = 0; i < 100; ++i)
    d.noteOff(LinkId(0), i);
  EXPECT_TRUE(d.check(LinkId(0), 100, "a").isOk());
  EXPECT_TRUE(FlapLimits{}.validate().isOk());
  EXPECT_NE((FlapLimits{-1, 1, 0}).validate().message().find("flap_limit"), std::string::npos);
  EXPECT_NE((FlapLimits{3, 0, 0}).validate().message().find("flap_window"), std::string::npos);
}

// Through the guard: checkRate refuses the held link and counts it.
TEST(FlapDamper, TheGuardRefusesAHeldLink) {
  const fabric::Topology t = fabric::KAryNTree::make(2, 2).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(t).value();
  SafetyGuard g(t, mt, fabric::LinkStates::allOn(t));
  RateLimits r;
  r.flap = {2, milliseconds(10), 0};
  g.setRateLimits(r);
  const LinkId l(2);
  g.noteOff(l, 0);
  g.noteOff(l, 1);
  const Status s = g.checkRate(l, 2);
  EXPECT_NE(s.message().find("flap damping: " + t.describeLink(l)), std::string::npos)
      << s.message();
  EXPECT_EQ(g.flapHolds(), 1u);
  EXPECT_EQ(g.linksHeldOn(3), 1u);
  EXPECT_EQ(g.refused(), 1u);
}

// The daemon logs a hold once when it starts (the refusal) and once when it
// ends: holdsEnded() tells each hold's end once, and not while a longer hold
// follows at once.
TEST(FlapDamper, TellsTheEndOfEachHoldOnce) {
  FlapDamper d;
  d.setLimits({2, milliseconds(100), milliseconds(200)});
  const LinkId a(3);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(d.check(a, milliseconds(i), "a").isOk());
    d.noteOff(a, milliseconds(i));
  }
  EXPECT_TRUE(d.holdsEnded(milliseconds(5)).empty());      // no hold yet
  EXPECT_FALSE(d.check(a, milliseconds(10), "a").isOk());  // held until 210 ms
  EXPECT_FALSE(d.check(a, milliseconds(50), "a").isOk());  // the same hold
  EXPECT_TRUE(d.holdsEnded(milliseconds(209)).empty());
  EXPECT_EQ(d.holdsEnded(milliseconds(210)), std::vector<LinkId>{a});
  EXPECT_TRUE(d.holdsEnded(milliseconds(300)).empty());  // told once
}

}  // namespace
}  // namespace ebb::agent
