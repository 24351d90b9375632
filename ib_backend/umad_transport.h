#pragma once

#include <atomic>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "agent/asio_scheduler.h"
#include "ib_backend/mad_transport.h"

namespace ebb::ib {

struct UmadPortSpec {
  std::string caName;  // empty: the first CA libibumad finds
  int port = 0;        // 0: the first active port
};

// MadTransport over libibumad: one umad port with agents registered for
// directed-route and LID-routed SMPs and for the performance class. Replies
// arrive through Boost.Asio: the umad file descriptor is watched with a
// stream_descriptor. Under ibsim the preload library (libumad2sim) hands out
// descriptors that exist only inside it, which epoll cannot watch; then a
// receive thread blocks in umad_recv() and posts each MAD to the io_context.
class UmadTransport final : public MadTransport {
 public:
  // Opens the port; E_UNAVAILABLE naming the CA/port and the likely cause
  // (no device, no permission on /dev/infiniband/umad*) on failure.
  static Result<std::unique_ptr<UmadTransport>> open(agent::AsioScheduler& scheduler,
                                                     const UmadPortSpec& spec,
                                                     TransportOptions opts);
  ~UmadTransport() override;
  // Stops receiving; pending requests fail with E_UNAVAILABLE.
  void close();
  bool usesReceiveThread() const { return thread_.joinable(); }

 protected:
  Status transmit(const MadAddress& to, const MadBytes& mad) override;

 private:
  UmadTransport(agent::AsioScheduler& scheduler, TransportOptions opts, int portId);
  Status registerAgents();
  void startReceiving();
  void watchDescriptor();
  void drain();
  void receiveLoop();

  agent::AsioScheduler& asio_;
  int portId_;
  int agentDirect_ = -1;
  int agentLid_ = -1;
  int agentPerf_ = -1;
  std::optional<boost::asio::posix::stream_descriptor> descriptor_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::shared_ptr<std::atomic<bool>> alive_;  // posted receive handlers check it
};

}  // namespace ebb::ib
