#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "workload/rate_profile.h"
#include "workload/traffic_file.h"

namespace ebb::workload {

enum class GenPattern { kUniform, kPermutation, kHotspot, kIncast };

// What `ebb gen` writes: messages in time order for `hosts` hosts.
struct GenSpec {
  GenPattern pattern = GenPattern::kUniform;
  std::uint32_t hosts = 0;
  RateProfile rate;  // flits/cycle/node (uniform, permutation, hotspot)
  TimePs cyclePs = 1000;
  std::int64_t flitBytes = 4;
  std::int64_t messageBytes = 64;
  std::uint64_t seed = 1;
  std::uint32_t hotspotHost = 0;
  double hotspotFraction = 0.2;  // share of messages sent to the hot spot
  std::uint32_t incastSenders = 8;
  TimePs incastPeriodPs = 10'000'000;
  TimePs endPs = 0;  // incast: generate until here
  Status validate() const;
  // incast, once validated: rounds at 0, period, 2 x period, ... before endPs.
  std::int64_t incastRounds() const { return (endPs - 1) / incastPeriodPs + 1; }
  // The flits a message occupies on a link, its last flit whole (the rate
  // counts these; the file holds no packet size, so a message is one run
  // of flits).
  std::int64_t flitsPerMessage() const {
    return (std::max<std::int64_t>(messageBytes, 1) + flitBytes - 1) / flitBytes;
  }
};

// Streams the generated messages into `out`; returns how many were written.
Result<std::uint64_t> generateTraffic(const GenSpec& spec, TrafficWriter& out);

}  // namespace ebb::workload
