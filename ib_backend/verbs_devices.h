#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace ebb::ib {

// The local RDMA devices and ports as libibverbs sees them: on real hardware
// this names the HCA and port ebb should talk through. Under ibsim only
// libibumad is simulated (libumad2sim), so libibverbs sees no device.
struct VerbsPort {
  int number = 0;
  std::string state;  // "PORT_ACTIVE", "PORT_DOWN", ... (ibv_port_state_str)
  int physState = 0;  // PortPhysicalState: 5 = LinkUp
  std::uint16_t lid = 0;
  std::uint16_t smLid = 0;
  std::string linkLayer;  // "InfiniBand", "Ethernet", "unspecified"
  bool active = false;
  bool infiniband = false;
};
struct VerbsDevice {
  std::string name;  // e.g. mlx5_0: the umad CA name too
  std::string nodeType;
  std::uint64_t nodeGuid = 0;  // host order
  std::vector<VerbsPort> ports;
  std::string error;  // why it could not be opened or queried, if so
};

// Every device libibverbs lists, with its ports. An empty list is not an
// error (no RDMA hardware, or ibsim); E_UNAVAILABLE when libibverbs itself
// fails (e.g. no kernel support), naming errno.
Result<std::vector<VerbsDevice>> listVerbsDevices();

// The first ACTIVE InfiniBand port (the default umad CA and port ebb uses
// when agent.ca is not set); none when there is no such port.
struct DevicePort {
  std::string ca;
  int port = 0;
};
std::optional<DevicePort> pickDefaultPort(const std::vector<VerbsDevice>& devices);

// A table for `ebb agent --list-devices` and the startup log; for no device a
// sentence saying so and why ebb still works under ibsim.
std::string describeDevices(const std::vector<VerbsDevice>& devices);

}  // namespace ebb::ib
