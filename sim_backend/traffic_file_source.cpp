#include "sim_backend/traffic_file_source.h"

namespace ebb::sim {

TrafficFileSource::TrafficFileSource(FabricEmulator& emu,
                                     std::unique_ptr<workload::TrafficReader> reader)
    : emu_(emu), reader_(std::move(reader)) {}

void TrafficFileSource::start() {
  auto m = reader_->next();
  if (!m) {
    status_ = m.status();
    return;
  }
  next_ = *m;
  if (next_) emu_.scheduler().at(next_->time, agent::Phase::kNetwork, [this] { inject(); });
}

void TrafficFileSource::inject() {
  // Every message due now, then schedule the next one.
  while (next_ && next_->time <= emu_.scheduler().now()) {
    emu_.sendMessage(fabric::HostId(next_->src), fabric::HostId(next_->dst), next_->bytes,
                     next_->job);
    ++generated_;
    bytes_ += static_cast<std::uint64_t>(next_->bytes);
    auto m = reader_->next();
    if (!m) {
      status_ = m.status();
      next_.reset();
      return;
    }
    next_ = *m;
  }
  if (next_) emu_.scheduler().at(next_->time, agent::Phase::kNetwork, [this] { inject(); });
}

}  // namespace ebb::sim
