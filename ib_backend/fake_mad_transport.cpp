#include "ib_backend/fake_mad_transport.h"

#include <infiniband/mad.h>

namespace ebb::ib {

FakeMadTransport::FakeMadTransport(agent::Scheduler& scheduler, TransportOptions opts,
                                   Responder responder, TimePs latencyPs)
    : MadTransport(scheduler, opts), responder_(std::move(responder)), latencyPs_(latencyPs) {}

Status FakeMadTransport::transmit(const MadAddress& to, const MadBytes& mad) {
  if (broken_) return {ErrorCode::kUnavailable, "fake wire is broken"};
  ++transmitted_;
  if (mad_get_field(const_cast<std::uint8_t*>(mad.data()), 0, IB_MAD_METHOD_F) ==
      static_cast<std::uint32_t>(Method::kSet)) {
    ++sets_;
  }
  auto reply = responder_(to, mad);
  if (!reply) return Status::ok();
  scheduler().after(latencyPs_, agent::Phase::kBackend,
                    [this, bytes = std::move(*reply)] { onReceive(bytes); });
  return Status::ok();
}

std::vector<std::uint8_t> replyTo(const MadBytes& request) {
  std::vector<std::uint8_t> r(request.begin(), request.end());
  mad_set_field(r.data(), 0, IB_MAD_METHOD_F, static_cast<std::uint32_t>(Method::kGet));
  mad_set_field(r.data(), 0, IB_MAD_RESPONSE_F, 1);
  mad_set_field(r.data(), 0, IB_MAD_STATUS_F, 0);
  return r;
}

}  // namespace ebb::ib
