#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/child_process.h"
#include "fabric/topology.h"

namespace ebb::testing {

// A real-protocol InfiniBand test fabric: ibsim simulating the given topology,
// optionally real OpenSM on it, and real infiniband-diags clients, all through
// the libumad2sim preload. Every run gets its own scratch folder and ibsim
// socket name; the destructor stops everything by PID and removes the folder.
// Throws std::runtime_error with a clear message when a part cannot start.
class IbsimFabric {
 public:
  struct Options {
    bool startOpenSm = true;
    std::string routingEngine = "updn";
    std::chrono::milliseconds startTimeout{30000};
    // Lines of an opensm.conf written to the scratch folder and given to
    // OpenSM with -F (e.g. "event_plugin_name ebb_osm_events"); none: no -F.
    std::vector<std::string> openSmConfig = {};
    // More environment for OpenSM (e.g. LD_LIBRARY_PATH to find a plugin).
    std::map<std::string, std::string> openSmEnv = {};
  };

  IbsimFabric(const fabric::Topology& topo, Options options);
  explicit IbsimFabric(const fabric::Topology& topo) : IbsimFabric(topo, Options{}) {}
  ~IbsimFabric();

  // Runs a client (e.g. {"ibnetdiscover"}) attached at `simHost` (default: the
  // first host) under a deadline, in the scratch folder.
  CommandResult runClient(const std::vector<std::string>& argv, const std::string& simHost = "",
                          std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // The same, calling `meanwhile` about every 50 ms while the client runs.
  CommandResult runClient(const std::vector<std::string>& argv, const std::string& simHost,
                          std::chrono::milliseconds timeout,
                          const std::function<void()>& meanwhile);
  // The environment a client of this fabric needs (LD_PRELOAD, IBSIM_SOCKNAME, SIM_HOST).
  std::map<std::string, std::string> clientEnv(const std::string& simHost = "") const;

  // Sends one ibsim console command and waits (up to `timeout`) until ibsim
  // has executed it, i.e. printed its next prompt; returns what it printed in
  // between (empty for most successful commands). Throws std::runtime_error
  // when ibsim is gone or does not answer in time.
  std::string console(const std::string& command,
                      std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // Console helpers that play the physical layer (IB port numbers, from 1).
  // They throw when ibsim rejects the command (unknown node, bad port, a
  // ReLink without a previous Unlink, an unknown counter field).
  void unlink(const std::string& node, int port);
  void relink(const std::string& node, int port);
  // field: "PortCountersExtended.PortXmitData", "PortCounters.PortXmitWait", ...
  void setCounter(const std::string& node, int port, const std::string& field, std::uint64_t value);

  // Waits until OpenSM's log contains `needle` (e.g. a re-sweep), up to timeout.
  bool waitForOpenSmLog(const std::string& needle, std::chrono::milliseconds timeout);
  std::string openSmLog() const;
  // Kills ibsim now (to test lost contact).
  void killIbsim();
  std::string ibsimLog() const;

  const std::string& scratchDir() const { return scratch_; }
  const std::string& socketName() const { return socket_; }
  pid_t ibsimPid() const { return ibsim_ ? ibsim_->pid() : -1; }
  pid_t openSmPid() const { return opensm_ ? opensm_->pid() : -1; }

  // Location of libumad2sim.so ($EBB_UMAD2SIM or the Debian locations).
  static std::string preloadLibrary();

 private:
  void teardown();
  void checkedConsole(const std::string& command);

  std::size_t logOffset_ = 0;  // ibsim.log bytes up to the last prompt consumed

  std::string scratch_;
  std::string socket_;
  std::string preload_;
  std::string firstHost_;
  std::unique_ptr<ChildProcess> ibsim_;
  std::unique_ptr<ChildProcess> opensm_;
};

}  // namespace ebb::testing
