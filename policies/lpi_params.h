#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/time.h"

namespace ebb::policies {

// Low-power idle modes (Georgakoudis et al., seed 004, sections II-III).
enum class LpiMode { kOff, kDeepSleep, kFastWake, kHybrid };
const char* toString(LpiMode m);

// A row of Table I of seed 004 (backplane links): wake-up delays and the time
// to transmit a 1500-byte MTU.
struct LinkSpeedRow {
  const char* name;  // "25GBASE-R", "40GBASE-R", "100GBASE-R"
  int gbps;
  TimePs wakeDeepSleep;  // T_w,DS
  TimePs wakeFastWake;   // T_w,FW
  TimePs mtuLatency;     // T_x of 1500 B
};
std::span<const LinkSpeedRow> linkSpeedTable();

// The adaptive hold (ebb, in the spirit of PerfBound, IEEE TC 2018): each
// link direction keeps a delay account that earns `delayBudget` per packet
// and pays every wake-up delay; a link whose account is negative when it goes
// idle stays at full power for that idle period, so the wake-up delay it adds
// stays within budget x packets + one wake-up. The hold doubles when a
// wake-up overdraws the account (short gaps then pass in hold, free) and
// halves when an idle period outlasts kLongIdleHolds holds (the hold was
// energy spent for nothing), within [minHold, maxHold].
struct AdaptiveHold {
  bool enabled = false;
  TimePs delayBudget = 0;  // per packet, > 0
  TimePs minHold = 0;
  TimePs maxHold = 0;
  static constexpr int kLongIdleHolds = 8;
};

// The rule on a delay budget as written in a config (ns per packet):
// 0 < budget < 1e9. E_INVALID naming `field`.
Status checkDelayBudgetNs(double ns, std::string_view field);

// Timing and power of low-power idle on one link direction. Defaults: Table VI
// (100GBASE-*R); T_q and T_r are not given by the paper: ebb's choice.
struct LpiParams {
  LpiMode mode = LpiMode::kOff;
  TimePs hold = 0;                   // T_h: full power, no delay, after the last packet
  TimePs hybridFastWake = 0;         // hybrid: T_h,DS, time in fast-wake before deep-sleep
  TimePs sleepSignal = 1'100'000;    // T_s = 1.1 us
  TimePs wakeDeepSleep = 5'500'000;  // T_w,DS = 5.5 us
  TimePs wakeFastWake = 340'000;     // T_w,FW = 0.34 us
  TimePs quiet = 1'800'000'000;      // T_q = 1.8 ms (ebb)
  TimePs refresh = 2'000'000;        // T_r = 2 us (ebb)
  double powerDeepSleep = 0.1;       // P_DS / P_ACT
  double powerFastWake = 0.6;        // P_FW / P_ACT
  AdaptiveHold adaptive;             // off: the hold is fixed

  // Table VI: mode with hold = multiple x T_s (hybrid: T_h,FW = T_h,DS).
  static LpiParams table6(LpiMode mode, int holdMultiple);
  // Table I wake-up times for "25GBASE-R", "40GBASE-R" or "100GBASE-R".
  Status setLinkSpeed(const std::string& speed);
  // Non-negative times, T_q > 0 and T_r >= 0, powers in [0, 1]; an adaptive
  // hold has a budget > 0 and min <= hold <= max. E_INVALID names the field.
  Status validate() const;
};

}  // namespace ebb::policies
