#pragma once

#include <string>
#include <vector>

#include "agent/switch_agent.h"
#include "common/status.h"
#include "common/time.h"
#include "configs/proto/ebb.pb.h"  // generated
#include "fabric/topology.h"
#include "ib_backend/ib_backend.h"
#include "ib_backend/mad_transport.h"
#include "ib_backend/umad_transport.h"

namespace ebb::daemon {

// Everything `ebb agent` needs, validated before anything touches the fabric.
struct DaemonSettings {
  ib::UmadPortSpec port;
  ib::TransportOptions transport;
  ib::IbBackendOptions backend;
  agent::AgentConfig agent;
  std::vector<fabric::SwitchId> managed;  // one agent each: the allow-listed switches, or all
  bool readOnly = false;                  // nothing allow-listed: dry run over all switches
  bool keepStateOnExit = false;
  std::string metricsListen = "127.0.0.1:9464";  // empty: off
  std::string decisionLog;                       // empty: none
  std::string osmEvents;  // Unix datagram socket for OpenSM's events; empty: none
  std::string lockFile;   // agent.lock_file; empty: defaultLockPath (daemon/instance_lock.h)
  std::string stateFile;  // agent.state_file; empty: defaultStatePath (daemon/instance_lock.h)
  TimePs runForPs = 0;    // 0: until a signal
  TimePs openTimeoutPs = 10'000'000'000'000;  // opening the umad port
  int sweeps = 0;  // > 0: time this many counter sweeps of the whole fabric, then exit
  std::string policyName;
  agent::Resilience resilience = agent::Resilience::kSingleLink;
};

// Reads cfg.agent() and cfg.gating() against the topology: GUIDs in the
// allow-list must name switches of the topology, periods and limits must be
// positive. Errors name the field and the rule ("agent.allow_switches[2]:
// 0x... is not a switch of the topology").
Result<DaemonSettings> buildDaemonSettings(const config::Config& cfg, const std::string& baseDir,
                                           const fabric::Topology& topo);

}  // namespace ebb::daemon
