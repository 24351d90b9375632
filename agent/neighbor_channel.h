#pragma once

#include <functional>
#include <unordered_map>

#include "agent/scheduler.h"
#include "configs/proto/neighbor.pb.h"  // generated
#include "fabric/ids.h"

namespace ebb::agent {

// Delivers NeighborMessages between switch agents. The in-process channel
// (emulator, and `ebb agent` hosting every switch in one process) delivers
// after a configurable control-plane latency on the shared Scheduler.
class NeighborChannel {
 public:
  using Handler = std::function<void(const messages::NeighborMessage&)>;

  NeighborChannel(Scheduler& scheduler, TimePs latency) : sched_(scheduler), latency_(latency) {}
  void subscribe(fabric::SwitchId sw, Handler handler) {
    handlers_[sw.value()] = std::move(handler);
  }
  // Sends to the switch named in the message; dropped if nobody listens there.
  void send(fabric::SwitchId to, messages::NeighborMessage msg);
  std::uint64_t sent() const { return sent_; }

 private:
  Scheduler& sched_;
  TimePs latency_;
  std::unordered_map<std::uint32_t, Handler> handlers_;
  std::uint64_t sent_ = 0;
};

}  // namespace ebb::agent
