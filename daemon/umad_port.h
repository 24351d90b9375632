#pragma once

#include <memory>
#include <string>

#include "agent/asio_scheduler.h"
#include "common/status.h"
#include "daemon/daemon_settings.h"
#include "ib_backend/umad_transport.h"

namespace ebb::daemon {

// Opens the umad port of `s.port` on a helper thread: under ibsim the preload
// library retries forever while no simulator listens (already when
// libibverbs looks at sysfs), and a daemon must not hang. E_UNAVAILABLE after
// s.openTimeoutPs; the helper thread may then still be blocked, so the caller
// must exit without unwinding. Without agent.ca the first active InfiniBand
// port libibverbs sees is taken; `note` gets the sentence for the startup log
// saying which port and why.
Result<std::unique_ptr<ib::UmadTransport>> openUmadPort(agent::AsioScheduler& sched,
                                                        const DaemonSettings& s, std::string& note);

}  // namespace ebb::daemon
