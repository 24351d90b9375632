#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "ib_backend/mad_transport.h"

namespace ebb::ib {

// A MadTransport whose wire is a function: tests script the replies (good,
// malformed, late or missing) and the real TID matching, deadlines, retries
// and outstanding bound run unchanged, in virtual time.
class FakeMadTransport final : public MadTransport {
 public:
  // Returns the bytes to deliver after `latencyPs`, or nothing (lost MAD).
  using Responder =
      std::function<std::optional<std::vector<std::uint8_t>>(const MadAddress&, const MadBytes&)>;

  FakeMadTransport(agent::Scheduler& scheduler, TransportOptions opts, Responder responder,
                   TimePs latencyPs = 35'000'000);
  // Makes transmit() fail (the wire is gone) or work again.
  void setBroken(bool broken) { broken_ = broken; }
  // Delivers arbitrary bytes as if received now (fuzzing the receive path).
  void inject(std::span<const std::uint8_t> bytes) { onReceive(bytes); }
  std::size_t transmitted() const { return transmitted_; }
  std::size_t setsTransmitted() const { return sets_; }

 protected:
  Status transmit(const MadAddress& to, const MadBytes& mad) override;

 private:
  Responder responder_;
  TimePs latencyPs_;
  bool broken_ = false;
  std::size_t transmitted_ = 0;
  std::size_t sets_ = 0;
};

// Turns a request into its GetResp skeleton (same header, TID, method 0x81,
// status 0): a responder fills the payload.
std::vector<std::uint8_t> replyTo(const MadBytes& request);

}  // namespace ebb::ib
