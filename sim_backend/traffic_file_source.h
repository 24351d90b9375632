#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "common/status.h"
#include "sim_backend/fabric_emulator.h"
#include "workload/traffic_file.h"

namespace ebb::sim {

// Injects a traffic file into the emulator open-loop: each message at its
// time, reading one message ahead (the file is streamed, never loaded whole).
class TrafficFileSource {
 public:
  TrafficFileSource(FabricEmulator& emu, std::unique_ptr<workload::TrafficReader> reader);
  void start();
  std::uint64_t generated() const { return generated_; }
  std::uint64_t bytesGenerated() const { return bytes_; }
  const Status& status() const { return status_; }

 private:
  void inject();
  FabricEmulator& emu_;
  std::unique_ptr<workload::TrafficReader> reader_;
  std::optional<workload::TrafficMessage> next_;
  std::uint64_t generated_ = 0;
  std::uint64_t bytes_ = 0;
  Status status_;
};

}  // namespace ebb::sim
