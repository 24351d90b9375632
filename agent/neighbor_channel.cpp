#include "agent/neighbor_channel.h"

namespace ebb::agent {

void NeighborChannel::send(fabric::SwitchId to, messages::NeighborMessage msg) {
  ++sent_;
  sched_.after(latency_, Phase::kControl, [this, to, m = std::move(msg)] {
    const auto it = handlers_.find(to.value());
    if (it != handlers_.end()) it->second(m);
  });
}

}  // namespace ebb::agent
