#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace ebb::workload {

// The largest message ebb replays (docs/traffic.md, "Limits"). The emulator
// makes every packet of a message when the message is sent, so one message of
// 2^40 bytes would be 17 billion packets: refused when the workload is read,
// naming the place, the packets and the limit, before any memory is taken.
inline constexpr std::uint64_t kDefaultMaxMessagePackets = 1u << 20;

struct MessageLimit {
  std::int64_t packetBytes = 64;
  std::uint64_t maxPackets = kDefaultMaxMessagePackets;

  // The largest message in bytes.
  std::int64_t maxBytes() const;
  // E_INVALID "<where>: a message of B bytes is P packets of X bytes, over the
  // limit of L packets per message (workload.max_message_packets)" or OK.
  Status check(std::int64_t bytes, std::string_view where) const;
};

}  // namespace ebb::workload
