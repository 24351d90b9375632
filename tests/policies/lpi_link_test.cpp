#include "policies/lpi_link.h"

#include <gtest/gtest.h>

namespace ebb::policies {
namespace {

constexpr auto kActive = static_cast<std::size_t>(LpiState::kActive);
constexpr auto kHold = static_cast<std::size_t>(LpiState::kHold);
constexpr auto kFw = static_cast<std::size_t>(LpiState::kFastWake);
constexpr auto kSignal = static_cast<std::size_t>(LpiState::kSleepSignal);
constexpr auto kQuiet = static_cast<std::size_t>(LpiState::kQuiet);
constexpr auto kRefresh = static_cast<std::size_t>(LpiState::kRefresh);
constexpr auto kWaking = static_cast<std::size_t>(LpiState::kWaking);

// A link whose last transmission ended at t = 1000 (so "active" precedes idle).
LpiLink afterOnePacket(const LpiParams& p) {
  LpiLink l(p, 0);
  EXPECT_EQ(l.packetReady(0), 0);  // starts in hold: no delay
  l.transmissionEnded(1000);
  return l;
}

struct Marker {
  TimePs at;  // since the link went idle
  TimePs overhead;
  TimePs quiet;
  TimePs fastWake;
};

void checkMarker(const LpiParams& p, const Marker& m) {
  LpiLink l = afterOnePacket(p);
  const TimePs t = 1000 + m.at;
  EXPECT_EQ(l.packetReady(t), m.overhead) << "at +" << m.at;
  EXPECT_EQ(l.times()[kQuiet], m.quiet) << "at +" << m.at;
  EXPECT_EQ(l.times()[kFw], m.fastWake) << "at +" << m.at;
  EXPECT_EQ(l.times()[kWaking], m.overhead);
  EXPECT_EQ(l.times()[kActive], 1000);
  // Everything between going idle and the packet is accounted for, once.
  TimePs idle = 0;
  for (auto s : {kHold, kFw, kSignal, kQuiet, kRefresh})
    idle += l.times()[s];
  EXPECT_EQ(idle, m.at);
}

// Table II (deep-sleep): markers 1-5. Hold T_h = 2 T_s.
TEST(LpiLink, Table2DeepSleepMarkers) {
  const LpiParams p = LpiParams::table6(LpiMode::kDeepSleep, 2);
  const TimePs th = p.hold, ts = p.sleepSignal, tq = p.quiet, tr = p.refresh;
  const TimePs q0 = th + ts;  // t_q relative to going idle
  // 1: right after the previous packet (active); 2: inside hold.
  checkMarker(p, {0, 0, 0, 0});
  checkMarker(p, {th / 2, 0, 0, 0});
  checkMarker(p, {th - 1, 0, 0, 0});
  // 3: sleep signalling: pays T_w,DS, no low-power time.
  checkMarker(p, {th, p.wakeDeepSleep, 0, 0});
  checkMarker(p, {th + ts / 2, p.wakeDeepSleep, 0, 0});
  // 4: quiet: pays T_w,DS, credited t - t_q at P_DS.
  checkMarker(p, {q0 + 12345, p.wakeDeepSleep, 12345, 0});
  // 5: refresh after the first quiet period: T_q at P_DS, refresh at full power.
  checkMarker(p, {q0 + tq + tr / 2, p.wakeDeepSleep, tq, 0});
  // Later cycles: each completed refresh is subtracted.
  checkMarker(p, {q0 + 3 * (tq + tr) + 777, p.wakeDeepSleep, 3 * tq + 777, 0});
}

// Table III (fast-wake): markers 1-3.
TEST(LpiLink, Table3FastWakeMarkers) {
  const LpiParams p = LpiParams::table6(LpiMode::kFastWake, 1);
  const TimePs tf = p.hold;
  checkMarker(p, {0, 0, 0, 0});
  checkMarker(p, {tf / 3, 0, 0, 0});
  checkMarker(p, {tf, p.wakeFastWake, 0, 0});
  checkMarker(p, {tf + 5'000'000'000, p.wakeFastWake, 0, 5'000'000'000});
}

// Table IV (hybrid): markers 1-6, T_h,FW = T_h,DS = T_s.
TEST(LpiLink, Table4HybridMarkers) {
  const LpiParams p = LpiParams::table6(LpiMode::kHybrid, 1);
  const TimePs tf = p.hold;
  const TimePs tsig = tf + p.hybridFastWake;  // t_s
  const TimePs tq0 = tsig + p.sleepSignal;    // t_q
  checkMarker(p, {0, 0, 0, 0});
  checkMarker(p, {tf - 1, 0, 0, 0});
  checkMarker(p, {tf + 100, p.wakeFastWake, 0, 100});                        // 3
  checkMarker(p, {tsig + 10, p.wakeDeepSleep, 0, tsig - tf});                // 4
  checkMarker(p, {tq0 + 999, p.wakeDeepSleep, 999, tsig - tf});              // 5
  checkMarker(p, {tq0 + p.quiet + 1, p.wakeDeepSleep, p.quiet, tsig - tf});  // 6
}

TEST(LpiLink, WithoutLpiTheLinkStaysReady) {
  const LpiParams p;  // mode off
  checkMarker(p, {10'000'000'000, 0, 0, 0});
}

TEST(LpiLink, StatesAndTimersFollowTheTimeline) {
  const LpiParams p = LpiParams::table6(LpiMode::kDeepSleep, 1);
  LpiLink l(p, 0);
  EXPECT_EQ(l.stateAt(0), LpiState::kHold);
  EXPECT_EQ(l.nextTransition(0), p.hold);
  EXPECT_EQ(l.stateAt(p.hold), LpiState::kSleepSignal);
  EXPECT_EQ(l.nextTransition(p.hold), p.hold + p.sleepSignal);
  const TimePs q = p.hold + p.sleepSignal;
  EXPECT_EQ(l.stateAt(q), LpiState::kQuiet);
  EXPECT_EQ(l.nextTransition(q + 5), q + p.quiet);
  EXPECT_EQ(l.stateAt(q + p.quiet), LpiState::kRefresh);
  EXPECT_EQ(l.nextTransition(q + p.quiet), q + p.quiet + p.refresh);
  const TimePs d = l.packetReady(q + 10);
  EXPECT_EQ(d, p.wakeDeepSleep);
  EXPECT_EQ(l.stateAt(q + 11), LpiState::kWaking);
  EXPECT_EQ(l.stateAt(q + 10 + d), LpiState::kActive);
  l.transmissionEnded(q + 10 + d + 500);
  EXPECT_EQ(l.times()[kActive], 500);
  EXPECT_EQ(l.stateAt(q + 10 + d + 501), LpiState::kHold);
}

TEST(LpiLink, BackToBackPacketsPayNothing) {
  LpiLink l(LpiParams::table6(LpiMode::kDeepSleep, 0), 0);
  TimePs t = 0;
  EXPECT_EQ(l.packetReady(t), 0);
  for (int i = 0; i < 10; ++i) {
    t += 100;
    l.transmissionEnded(t);
    EXPECT_EQ(l.packetReady(t), 0);  // zero hold: still exactly at the end
  }
}

TEST(LpiLink, ParamsValidationNamesTheField) {
  LpiParams p;
  EXPECT_TRUE(p.validate().isOk());
  p.hold = -1;
  EXPECT_NE(p.validate().message().find("lpi.hold_ps"), std::string::npos);
  p = LpiParams{};
  p.quiet = 0;
  EXPECT_NE(p.validate().message().find("lpi.quiet_ps"), std::string::npos);
  p = LpiParams{};
  p.powerDeepSleep = 1.5;
  EXPECT_FALSE(p.validate().isOk());
  EXPECT_TRUE(p.setLinkSpeed("25GBASE-R").isOk());
  EXPECT_EQ(p.wakeDeepSleep, 14'250'000);
  EXPECT_TRUE(p.setLinkSpeed("100GBASE-R").isOk());
  EXPECT_EQ(p.wakeDeepSleep, 5'500'000);
  EXPECT_EQ(p.wakeFastWake, 340'000);
  EXPECT_FALSE(p.setLinkSpeed("10GBASE-T").isOk());
}

}  // namespace
}  // namespace ebb::policies

namespace ebb::policies {
namespace {

// A transmitter with data waiting for credits is not idle: pinned in hold it
// does not enter low-power idle, and the next packet pays nothing.
TEST(LpiLink, PinnedLinkStaysInHold) {
  const LpiParams p = LpiParams::table6(LpiMode::kDeepSleep, 1);
  LpiLink l(p, 0);
  l.packetReady(0);
  l.transmissionEnded(100);
  l.pin(200);
  EXPECT_EQ(l.stateAt(100 + 100 * p.hold), LpiState::kHold);
  EXPECT_EQ(l.packetReady(100 + 100 * p.hold), 0);
  EXPECT_EQ(l.times()[static_cast<std::size_t>(LpiState::kHold)], 100 * p.hold);
  // Pinning a link that is already asleep changes nothing.
  l.transmissionEnded(200 + 100 * p.hold);
  const TimePs asleep = 200 + 100 * p.hold + p.hold + p.sleepSignal + 10;
  l.pin(asleep);
  EXPECT_EQ(l.packetReady(asleep + 5), p.wakeDeepSleep);
}

}  // namespace
}  // namespace ebb::policies
