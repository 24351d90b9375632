#include "daemon/umad_port.h"

#include <fmt/format.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <utility>

#include "ib_backend/verbs_devices.h"

namespace ebb::daemon {
namespace {

// Without agent.ca: the first active InfiniBand port libibverbs sees (real
// hardware); with no verbs device (ibsim) libibumad picks its first CA.
// Returns the sentence for the startup log.
std::string pickPort(ib::UmadPortSpec& port) {
  auto devices = ib::listVerbsDevices();
  if (!devices) return devices.status().message() + "; libibumad picks the CA";
  if (devices->empty()) {
    return "libibverbs sees no RDMA device (no hardware, or ibsim: it simulates umad only); "
           "libibumad picks the CA";
  }
  if (const auto pick = ib::pickDefaultPort(*devices)) {
    port.caName = pick->ca;
    if (port.port == 0) port.port = pick->port;
    return fmt::format(
        "libibverbs: {} port {} is the first active InfiniBand port: ebb talks through it",
        pick->ca, port.port);
  }
  return fmt::format(
      "libibverbs sees {} RDMA devices but no active InfiniBand port; libibumad picks the CA "
      "(set agent.ca)",
      devices->size());
}

}  // namespace

Result<std::unique_ptr<ib::UmadTransport>> openUmadPort(agent::AsioScheduler& sched,
                                                        const DaemonSettings& s,
                                                        std::string& note) {
  using Opened = std::pair<Result<std::unique_ptr<ib::UmadTransport>>, std::string>;
  auto task = std::make_shared<std::packaged_task<Opened()>>([&sched, s] {
    ib::UmadPortSpec port = s.port;
    std::string why;
    if (port.caName.empty()) why = pickPort(port);
    return Opened(ib::UmadTransport::open(sched, port, s.transport), why);
  });
  auto fut = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (fut.wait_for(std::chrono::nanoseconds(s.openTimeoutPs / 1000)) != std::future_status::ready) {
    return Status(ErrorCode::kUnavailable,
                  fmt::format("opening the umad port took more than {} s: no HCA answers (under "
                              "ibsim: is ibsim running with this IBSIM_SOCKNAME?)",
                              toSeconds(s.openTimeoutPs)));
  }
  Opened o = fut.get();
  note = std::move(o.second);
  return std::move(o.first);
}

}  // namespace ebb::daemon
