// Tables II, III and IV of Georgakoudis et al. (seed 004), marker by marker: the
// overhead a packet gets at each marked point of Figures 3-5 and the time
// credited to each state of the idle period before it. Expected values are
// built from the figures' timestamps (t_f: fast-wake starts, t_s: sleep
// signalling starts, t_q: quiet starts), for every hold of Table VI and every
// link speed of Table I.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "policies/lpi_link.h"

namespace ebb::policies {
namespace {

constexpr auto at(LpiState s) {
  return static_cast<std::size_t>(s);
}

// Time credited to each state of the idle period before the packet.
struct Credit {
  TimePs hold = 0, fastWake = 0, signal = 0, quiet = 0, refresh = 0;
};

struct Marker {
  std::string name;  // "II.4" = Table II, marker 4
  TimePs x;          // packet ready x after the previous transmission ended
  TimePs overhead;   // Overhead (T_x) column
  Credit credit;
};

constexpr TimePs kEnd = 1'000'000;  // the previous packet is active on [0, kEnd)

void check(const LpiParams& p, const Marker& m) {
  SCOPED_TRACE(m.name + " at t_end + " + std::to_string(m.x) + " ps, mode " + toString(p.mode) +
               ", hold " + std::to_string(p.hold));
  LpiLink l(p, 0);
  ASSERT_EQ(l.packetReady(0), 0);
  l.transmissionEnded(kEnd);
  const TimePs t = kEnd + m.x;
  EXPECT_EQ(l.packetReady(t), m.overhead);
  const LpiTimes& c = l.times();
  EXPECT_EQ(c[at(LpiState::kHold)], m.credit.hold);
  EXPECT_EQ(c[at(LpiState::kFastWake)], m.credit.fastWake);
  EXPECT_EQ(c[at(LpiState::kSleepSignal)], m.credit.signal);
  EXPECT_EQ(c[at(LpiState::kQuiet)], m.credit.quiet);
  EXPECT_EQ(c[at(LpiState::kRefresh)], m.credit.refresh);
  EXPECT_EQ(c[at(LpiState::kActive)], kEnd);
  EXPECT_EQ(c[at(LpiState::kWaking)], 0);  // nothing credited ahead of time
  // The wake-up is spent at full power, then the packet is transmitted.
  EXPECT_EQ(l.stateAt(t), m.overhead > 0 ? LpiState::kWaking : LpiState::kActive);
  l.transmissionEnded(t + m.overhead + 500);
  EXPECT_EQ(c[at(LpiState::kWaking)], m.overhead);
  EXPECT_EQ(c[at(LpiState::kActive)], kEnd + 500);
}

// The paper's P_DS cell for a packet d after t_q: d - ceil(d / T_q - 1) T_r
// (Table IV; Table II prints the same expression garbled, without T_r). It
// assumes one refresh per T_q and a whole refresh interval before the packet.
TimePs paperQuiet(TimePs d, const LpiParams& p) {
  // ceil(d / T_q - 1) = ceil((d - T_q) / T_q), in integers.
  const TimePs n = d <= p.quiet ? 0 : (d - p.quiet + p.quiet - 1) / p.quiet;
  return d - n * p.refresh;
}

std::vector<LpiParams> variants(LpiMode mode, std::vector<int> holds) {
  std::vector<LpiParams> out;
  for (const LinkSpeedRow& speed : linkSpeedTable()) {
    for (int h : holds) {
      LpiParams p = LpiParams::table6(mode, h);
      EXPECT_TRUE(p.setLinkSpeed(speed.name).isOk());
      EXPECT_TRUE(p.validate().isOk());
      out.push_back(p);
    }
  }
  // Short quiet periods, so that markers several cycles in are cheap to place.
  LpiParams shortQ = LpiParams::table6(mode, holds.back());
  shortQ.quiet = 20'000'000;
  shortQ.refresh = 3'000'000;
  out.push_back(shortQ);
  return out;
}

// Deep-sleep (Figure 3): active, hold [0, T_h), sleep signalling [t_s, t_q),
// then quiet T_q and refresh T_r in turn.
TEST(LpiTables, TableIIDeepSleep) {
  for (const LpiParams& p : variants(LpiMode::kDeepSleep, {0, 1, 2, 4})) {
    const TimePs th = p.hold, ts = th, tq = ts + p.sleepSignal;
    const TimePs T_q = p.quiet, T_r = p.refresh, wake = p.wakeDeepSleep;
    std::vector<Marker> m = {
        {"II.1 active (back to back)", 0, 0, {}},
        {"II.3 sleep signalling", ts + p.sleepSignal / 2, wake, {th, 0, p.sleepSignal / 2, 0, 0}},
        {"II.3 sleep signalling ends", tq - 1, wake, {th, 0, p.sleepSignal - 1, 0, 0}},
        {"II.4 quiet starts", tq, wake, {th, 0, p.sleepSignal, 0, 0}},
        {"II.4 quiet", tq + T_q / 3, wake, {th, 0, p.sleepSignal, T_q / 3, 0}},
        {"II.4 quiet ends", tq + T_q - 1, wake, {th, 0, p.sleepSignal, T_q - 1, 0}},
        {"II.5 refresh starts", tq + T_q, wake, {th, 0, p.sleepSignal, T_q, 0}},
        {"II.5 refresh", tq + T_q + T_r / 2, wake, {th, 0, p.sleepSignal, T_q, T_r / 2}},
        {"II.4 second quiet", tq + T_q + T_r + 7, wake, {th, 0, p.sleepSignal, T_q + 7, T_r}},
        {"II.5 third refresh",
         tq + 3 * T_q + 2 * T_r + 11,
         wake,
         {th, 0, p.sleepSignal, 3 * T_q, 2 * T_r + 11}},
    };
    if (th > 0) {
      m.push_back({"II.3 sleep signalling starts", ts, wake, {th, 0, 0, 0, 0}});
      m.push_back({"II.2 hold", th / 2, 0, {th / 2, 0, 0, 0, 0}});
      m.push_back({"II.2 hold ends", th - 1, 0, {th - 1, 0, 0, 0, 0}});
    } else {
      m.push_back({"II.3 zero hold: just after the end", 1, wake, {0, 0, 1, 0, 0}});
    }
    for (const Marker& mk : m)
      check(p, mk);
  }
}

// The P_DS column as printed: equal to the credited quiet time for a packet in
// the first quiet period (marker 4); for a packet in a refresh interval
// (marker 5) the paper counts the whole refresh interval, ebb only the part
// that elapsed, so ebb credits T_r - (time into the refresh) more quiet time.
TEST(LpiTables, PaperQuietFormula) {
  for (LpiMode mode : {LpiMode::kDeepSleep, LpiMode::kHybrid}) {
    for (const LpiParams& p : variants(mode, {1, 2, 4})) {
      const TimePs tq = p.hold + (mode == LpiMode::kHybrid ? p.hybridFastWake : 0) + p.sleepSignal;
      const auto quietAt = [&](TimePs d) {
        LpiLink l(p, 0);
        l.packetReady(0);
        l.transmissionEnded(kEnd);
        l.packetReady(kEnd + tq + d);
        return l.times()[at(LpiState::kQuiet)];
      };
      for (TimePs d : {TimePs{1}, p.quiet / 5, p.quiet / 2, p.quiet - 1, p.quiet}) {
        EXPECT_EQ(quietAt(d), paperQuiet(d, p)) << "marker 4, d=" << d;
      }
      for (TimePs z : {TimePs{1}, p.refresh / 2, p.refresh - 1}) {
        const TimePs d = p.quiet + z;
        EXPECT_EQ(quietAt(d) - paperQuiet(d, p), p.refresh - z) << "marker 5, d=" << d;
      }
    }
  }
}

// Fast-wake (Figure 4): hold [0, t_f), then fast-wake until the packet.
TEST(LpiTables, TableIIIFastWake) {
  for (const LpiParams& p : variants(LpiMode::kFastWake, {0, 1, 2, 4})) {
    const TimePs tf = p.hold, wake = p.wakeFastWake;
    std::vector<Marker> m = {
        {"III.1 active (back to back)", 0, 0, {}},
        {"III.3 fast-wake", tf + 123'456, wake, {tf, 123'456, 0, 0, 0}},
        {"III.3 fast-wake, a second later",
         tf + 1'000'000'000'000,
         wake,
         {tf, 1'000'000'000'000, 0, 0, 0}},
    };
    if (tf > 0) {
      m.push_back({"III.3 fast-wake starts", tf, wake, {tf, 0, 0, 0, 0}});
      m.push_back({"III.2 hold", tf / 3, 0, {tf / 3, 0, 0, 0, 0}});
      m.push_back({"III.2 hold ends", tf - 1, 0, {tf - 1, 0, 0, 0, 0}});
    }
    for (const Marker& mk : m)
      check(p, mk);
  }
}

// Hybrid (Figure 5): hold [0, t_f) (T_h,FW), fast-wake [t_f, t_s) (T_h,DS),
// sleep signalling [t_s, t_q), then quiet and refresh in turn.
TEST(LpiTables, TableIVHybrid) {
  std::vector<LpiParams> ps = variants(LpiMode::kHybrid, {1, 2, 4});
  LpiParams distinct = LpiParams::table6(LpiMode::kHybrid, 1);
  distinct.hybridFastWake = 3 * distinct.sleepSignal;  // T_h,DS != T_h,FW
  ps.push_back(distinct);
  for (const LpiParams& p : ps) {
    const TimePs tf = p.hold, ts = tf + p.hybridFastWake, tq = ts + p.sleepSignal;
    const TimePs fw = ts - tf, sig = p.sleepSignal, T_q = p.quiet, T_r = p.refresh;
    const TimePs wds = p.wakeDeepSleep, wfw = p.wakeFastWake;
    const std::vector<Marker> m = {
        {"IV.1 active (back to back)", 0, 0, {}},
        {"IV.2 hold", tf / 2, 0, {tf / 2, 0, 0, 0, 0}},
        {"IV.2 hold ends", tf - 1, 0, {tf - 1, 0, 0, 0, 0}},
        {"IV.3 fast-wake starts", tf, wfw, {tf, 0, 0, 0, 0}},
        {"IV.3 fast-wake", tf + fw / 2, wfw, {tf, fw / 2, 0, 0, 0}},
        {"IV.3 fast-wake ends", ts - 1, wfw, {tf, fw - 1, 0, 0, 0}},
        {"IV.4 sleep signalling starts", ts, wds, {tf, fw, 0, 0, 0}},
        {"IV.4 sleep signalling", ts + sig / 2, wds, {tf, fw, sig / 2, 0, 0}},
        {"IV.5 quiet starts", tq, wds, {tf, fw, sig, 0, 0}},
        {"IV.5 quiet", tq + T_q / 4, wds, {tf, fw, sig, T_q / 4, 0}},
        {"IV.6 refresh starts", tq + T_q, wds, {tf, fw, sig, T_q, 0}},
        {"IV.6 refresh", tq + T_q + T_r - 1, wds, {tf, fw, sig, T_q, T_r - 1}},
        {"IV.5 fourth quiet", tq + 3 * (T_q + T_r) + 5, wds, {tf, fw, sig, 3 * T_q + 5, 3 * T_r}},
    };
    for (const Marker& mk : m)
      check(p, mk);
  }
}

// Hold 0 for hybrid is deep-sleep (the paper leaves it out for that reason).
TEST(LpiTables, HybridWithZeroHoldIsDeepSleep) {
  const LpiParams h = LpiParams::table6(LpiMode::kHybrid, 0);
  const LpiParams d = LpiParams::table6(LpiMode::kDeepSleep, 0);
  for (TimePs x : {TimePs{0}, TimePs{1}, h.sleepSignal, h.sleepSignal + 5 * h.quiet / 3}) {
    LpiLink a(h, 0), b(d, 0);
    a.packetReady(0);
    b.packetReady(0);
    a.transmissionEnded(kEnd);
    b.transmissionEnded(kEnd);
    EXPECT_EQ(a.packetReady(kEnd + x), b.packetReady(kEnd + x)) << x;
    EXPECT_EQ(a.times(), b.times()) << x;
  }
}

// Without LPI (ACT) an idle link stays ready at full power.
TEST(LpiTables, ActiveModeNeverDelays) {
  const LpiParams p;
  for (TimePs x : {TimePs{0}, TimePs{1}, TimePs{1'000'000'000'000}})
    check(p, {"ACT", x, 0, {x, 0, 0, 0, 0}});
}

// Table I: wake-up times per link speed, and the MTU latency column is 1500 B
// at the link rate.
TEST(LpiTables, TableILinkSpeeds) {
  const auto rows = linkSpeedTable();
  ASSERT_EQ(rows.size(), 3u);
  const struct {
    const char* name;
    double wakeDsUs, wakeFwUs, mtuUs;
  } paper[] = {{"25GBASE-R", 14.25, 0.34, 0.48},
               {"40GBASE-R", 5.50, 0.34, 0.30},
               {"100GBASE-R", 5.50, 0.34, 0.12}};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_STREQ(rows[i].name, paper[i].name);
    EXPECT_NEAR(toMicroseconds(rows[i].wakeDeepSleep), paper[i].wakeDsUs, 1e-9);
    EXPECT_NEAR(toMicroseconds(rows[i].wakeFastWake), paper[i].wakeFwUs, 1e-9);
    EXPECT_NEAR(toMicroseconds(rows[i].mtuLatency), paper[i].mtuUs, 1e-9);
    EXPECT_NEAR(1500.0 * 8 / (rows[i].gbps * 1e3), paper[i].mtuUs, 1e-9) << paper[i].name;
    LpiParams p;
    ASSERT_TRUE(p.setLinkSpeed(paper[i].name).isOk());
    EXPECT_EQ(p.wakeDeepSleep, rows[i].wakeDeepSleep);
    EXPECT_EQ(p.wakeFastWake, rows[i].wakeFastWake);
  }
  LpiParams p;
  const Status s = p.setLinkSpeed("10GBASE-T");
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("10GBASE-T"), std::string::npos);
}

// Table VI defaults.
TEST(LpiTables, TableVIDefaults) {
  const LpiParams p;
  EXPECT_EQ(p.sleepSignal, microseconds(11) / 10);
  EXPECT_EQ(p.wakeDeepSleep, microseconds(55) / 10);
  EXPECT_EQ(p.wakeFastWake, nanoseconds(340));
  EXPECT_DOUBLE_EQ(p.powerDeepSleep, 0.1);
  EXPECT_DOUBLE_EQ(p.powerFastWake, 0.6);
  EXPECT_EQ(p.quiet, microseconds(1800));  // ebb's choice
  EXPECT_EQ(p.refresh, microseconds(2));   // ebb's choice
  for (int h : {0, 1, 2, 4}) {
    for (LpiMode m : {LpiMode::kDeepSleep, LpiMode::kFastWake, LpiMode::kHybrid}) {
      const LpiParams t = LpiParams::table6(m, h);
      EXPECT_EQ(t.mode, m);
      EXPECT_EQ(t.hold, h * microseconds(11) / 10);
      EXPECT_EQ(t.hybridFastWake, t.hold);  // T_h,FW = T_h,DS
    }
  }
}

}  // namespace
}  // namespace ebb::policies
