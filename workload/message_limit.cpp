#include "workload/message_limit.h"

#include <limits>

#include <fmt/format.h>

namespace ebb::workload {

std::int64_t MessageLimit::maxBytes() const {
  const auto cap = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  const auto packet = static_cast<std::uint64_t>(packetBytes > 0 ? packetBytes : 1);
  return maxPackets > cap / packet ? std::numeric_limits<std::int64_t>::max()
                                   : static_cast<std::int64_t>(maxPackets * packet);
}

Status MessageLimit::check(std::int64_t bytes, std::string_view where) const {
  if (bytes <= maxBytes()) return Status::ok();
  const std::int64_t packet = packetBytes > 0 ? packetBytes : 1;
  const std::int64_t packets = bytes / packet + (bytes % packet != 0 ? 1 : 0);
  return invalidArgument(fmt::format(
      "{}: a message of {} bytes is {} packets of {} bytes, over the limit of {} packets per "
      "message (raise workload.max_message_packets deliberately)",
      where, bytes, packets, packet, maxPackets));
}

}  // namespace ebb::workload
