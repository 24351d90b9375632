#include "ib_backend/umad_transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <infiniband/umad.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <vector>

namespace ebb::ib {
namespace {
constexpr std::uint32_t kGsiQkey = 0x80010000;
constexpr int kRecvPollMs = 50;  // receive thread: how often it checks for shutdown
}  // namespace

Result<std::unique_ptr<UmadTransport>> UmadTransport::open(agent::AsioScheduler& scheduler,
                                                           const UmadPortSpec& spec,
                                                           TransportOptions opts) {
  if (Status s = opts.validate(); !s.isOk()) return s;
  if (umad_init() < 0) {
    return Status(ErrorCode::kUnavailable, "libibumad: umad_init failed (is rdma-core installed?)");
  }
  const std::string what =
      fmt::format("umad port {}:{}", spec.caName.empty() ? "(first CA)" : spec.caName, spec.port);
  const int id = umad_open_port(spec.caName.empty() ? nullptr : spec.caName.c_str(), spec.port);
  if (id < 0) {
    return Status(ErrorCode::kUnavailable,
                  fmt::format("{}: cannot open ({}); check that the CA exists (ibstat) and that "
                              "this user may open /dev/infiniband/umad* (root or the rdma group)",
                              what, std::strerror(-id)));
  }
  std::unique_ptr<UmadTransport> t(new UmadTransport(scheduler, opts, id));
  if (Status s = t->registerAgents(); !s.isOk()) return Status(s.code(), what + ": " + s.message());
  t->startReceiving();
  return t;
}

UmadTransport::UmadTransport(agent::AsioScheduler& scheduler, TransportOptions opts, int portId)
    : MadTransport(scheduler, opts),
      asio_(scheduler),
      portId_(portId),
      alive_(std::make_shared<std::atomic<bool>>(true)) {}

UmadTransport::~UmadTransport() {
  close();
  umad_close_port(portId_);
}

Status UmadTransport::registerAgents() {
  struct Want {
    int* agent;
    MgmtClass cls;
    const char* name;
  };
  for (const Want& w : {Want{&agentDirect_, MgmtClass::kSmiDirect, "directed-route SMI"},
                        Want{&agentLid_, MgmtClass::kSmiLid, "LID-routed SMI"},
                        Want{&agentPerf_, MgmtClass::kPerf, "performance management"}}) {
    *w.agent = umad_register(portId_, static_cast<int>(w.cls), 1, 0, nullptr);
    if (*w.agent < 0) {
      return {ErrorCode::kUnavailable,
              fmt::format("cannot register a {} agent ({}); is another SM agent holding QP0 "
                          "without sharing?",
                          w.name, std::strerror(-*w.agent))};
    }
  }
  return Status::ok();
}

void UmadTransport::startReceiving() {
  const int fd = umad_get_fd(portId_);
  if (fd >= 0 && ::fcntl(fd, F_GETFD) != -1) {
    // A real descriptor: let epoll watch it. dup() so that Asio owns its copy.
    const int own = ::dup(fd);
    if (own >= 0) {
      descriptor_.emplace(asio_.context(), own);
      return watchDescriptor();
    }
  }
  thread_ = std::thread([this] { receiveLoop(); });
}

void UmadTransport::watchDescriptor() {
  descriptor_->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                          [this, alive = alive_](const boost::system::error_code& ec) {
                            if (ec || !*alive) return;
                            drain();
                            watchDescriptor();
                          });
}

// Reads every MAD that is ready without blocking.
void UmadTransport::drain() {
  std::vector<std::uint8_t> buf(umad_size() + kMadBytes);
  for (;;) {
    int len = static_cast<int>(kMadBytes);
    const int r = umad_recv(portId_, buf.data(), &len, 0);
    if (r < 0) return;                           // -EWOULDBLOCK/-ETIMEDOUT: nothing more now
    if (umad_status(buf.data()) != 0) continue;  // a send-side timeout report, not a reply
    const auto* mad = static_cast<const std::uint8_t*>(umad_get_mad(buf.data()));
    onReceive(std::span<const std::uint8_t>(mad, static_cast<std::size_t>(std::max(len, 0))));
  }
}

void UmadTransport::receiveLoop() {
  std::vector<std::uint8_t> buf(umad_size() + kMadBytes);
  while (!stopping_.load()) {
    int len = static_cast<int>(kMadBytes);
    const int r = umad_recv(portId_, buf.data(), &len, kRecvPollMs);
    if (r < 0 || umad_status(buf.data()) != 0) continue;
    const auto* mad = static_cast<const std::uint8_t*>(umad_get_mad(buf.data()));
    std::vector<std::uint8_t> bytes(mad, mad + std::max(len, 0));
    boost::asio::post(asio_.context(), [this, alive = alive_, bytes = std::move(bytes)] {
      if (*alive) onReceive(bytes);
    });
  }
}

void UmadTransport::close() {
  if (!*alive_) return;
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  if (descriptor_) {
    boost::system::error_code ignored;
    descriptor_->cancel(ignored);
    descriptor_->close(ignored);
  }
  *alive_ = false;
  failAll(Status(ErrorCode::kUnavailable, "the umad transport was closed"));
}

Status UmadTransport::transmit(const MadAddress& to, const MadBytes& mad) {
  std::vector<std::uint8_t> buf(umad_size() + kMadBytes, 0);
  std::memcpy(umad_get_mad(buf.data()), mad.data(), kMadBytes);
  int agent = agentDirect_;
  switch (to.mgmtClass) {
    case MgmtClass::kSmiDirect:
      umad_set_addr(buf.data(), 0xFFFF, 0, 0, 0);
      break;
    case MgmtClass::kSmiLid:
      agent = agentLid_;
      umad_set_addr(buf.data(), to.lid, 0, 0, 0);
      break;
    case MgmtClass::kPerf:
      agent = agentPerf_;
      umad_set_addr(buf.data(), to.lid, 1, 0, static_cast<int>(kGsiQkey));
      break;
  }
  // timeout 0, retries 0: ebb owns deadlines and retries (MadTransport).
  const int r = umad_send(portId_, agent, buf.data(), static_cast<int>(kMadBytes), 0, 0);
  if (r < 0) return {ErrorCode::kUnavailable, fmt::format("umad_send: {}", std::strerror(-r))};
  return Status::ok();
}

}  // namespace ebb::ib
