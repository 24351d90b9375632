#pragma once

// The rig of the `ebb agent` integration tests on ibsim + OpenSM: the daemon
// under test, its decision log, the physical layer ibsim lacks (the test
// Unlinks a cable when ebb sets a port Disabled and ReLinks it on Polling),
// port states read by the real smpquery, and every host pair checked in
// OpenSM's forwarding tables. Parameterized by the topology ibsim simulates.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/child_process.h"
#include "fabric/minimal_tree.h"
#include "fabric/topology.h"
#include "tests/harness/ibsim_fabric.h"

namespace ebb::testing {

// Under the sanitizer build: the preload library comes first in the link
// order, and its own read() copies past its buffer (an ibsim bug, not ebb's
// memory), which the memcpy interceptor would report.
inline constexpr const char* kChildAsanOptions =
    "verify_asan_link_order=0:detect_leaks=0:replace_intrin=0:intercept_memcpy=0";

// A line of the decision log: a decision, or (event "port_set") a Set the
// fabric accepted, with the end that was set.
struct Decision {
  std::string sw;
  int port = 0;
  bool on = false;
  bool refused = false;
  std::string why;  // the refusal, "" when accepted
  std::string source;
  std::string rule;          // decisions: the policy's rule ("xmit-wait>W_on", ...)
  std::string event;         // "" for a decision
  std::string phys;          // port_set: "Disabled" or "Polling"
  std::string setAction;     // port_set: disable_port, enable_port, reduce_width, restore_width
  std::string gatingAction;  // decisions: disable_port or reduce_width
  double timeMs = 0;         // the daemon's clock (time_ps)
  bool accepted() const { return event.empty() && !refused && !sw.empty(); }
  bool isSet(const char* state) const { return event == "port_set" && phys == state; }
};

// One field of a JSON line ("" when absent): a string's text or a number.
std::string field(const std::string& line, const std::string& key);

using PortName = std::pair<std::string, int>;  // ("S1_0_0", 5): switch, IB port label

// The link at a switch port (IB port label, from 1).
fabric::LinkId linkOf(const fabric::Topology& topo, const std::string& sw, int ibPort);

// What the daemon runs on. The config written is
//   name, fabric { <fabric> }, gating { <gating> },
//   agent { check_period_ms: 200 mad_timeout_ms: 100 metrics_listen ...
//           decision_log ... allow_switches (every switch of topo) <agentFields> }
struct DaemonConfig {
  const fabric::Topology* topo = nullptr;
  std::string fabric;  // e.g. "kary_n_tree { k: 4 n: 3 }"
  std::string agentFields;
  std::string name;
  std::vector<std::string> extraArgs = {};
  std::string gating = "policy: DYNAMIC u_on: 0.15";
  std::string simHost = "H1";  // where the daemon's umad port attaches
};

// The daemon under test, started in the fabric's scratch folder.
class Daemon {
 public:
  Daemon(IbsimFabric& fab, const DaemonConfig& cfg);
  ChildProcess& proc() { return *proc_; }
  std::string out() const { return readWholeFile(out_); }
  std::string err() const { return readWholeFile(err_); }
  const std::string& logPath() const { return log_; }
  const std::string& outPath() const { return out_; }
  const std::string& errPath() const { return err_; }
  const fabric::Topology& topo() const { return topo_; }
  fabric::LinkId linkOf(const std::string& sw, int ibPort) const {
    return testing::linkOf(topo_, sw, ibPort);
  }

  // The links ebb has set Disabled by now and not back to Polling (the log
  // read afresh: it may be ahead of what the test has played).
  std::set<fabric::LinkId> offNow() const;
  std::set<fabric::LinkId> everDisabled() const;
  // Accepted decisions in the whole log from `source`.
  std::size_t countFrom(const std::string& source) const;
  // The whole log, parsed afresh.
  std::vector<Decision> all() const {
    std::size_t from = 0;
    return parse(from);
  }

  // Decisions logged since the last call, waiting up to `timeout` for one.
  std::vector<Decision> next(std::chrono::milliseconds timeout);

 private:
  std::vector<Decision> parse(std::size_t& from) const;
  const fabric::Topology& topo_;
  std::string dir_, config_, log_, out_, err_;
  std::unique_ptr<ChildProcess> proc_;
  std::size_t consumed_ = 0;
};

// The directed route from `probeHost`'s leaf to `target` that avoids the
// links in `avoid`, as smpquery -D takes it ("0,1,5,6"): breadth first over
// the cables. "" when there is none.
std::string routeFrom(const fabric::Topology& topo, const std::string& probeHost,
                      fabric::SwitchId target, const std::set<fabric::LinkId>& avoid);

// PhysLinkState of a port by `smpquery -D portinfo` at `probeHost`, or why not.
std::string readPhys(IbsimFabric& fab, const std::string& probeHost, const std::string& route,
                     int ibPort);

// Physical state of ports ("LinkUp", "Disabled", "Polling"...) as the real
// smpquery reads it by directed route around the links in `avoid` (a
// Disabled port passes no SMP: ibsim drops them as hardware would). A port
// whose switch is out of reach (gone dark) reads "dark".
std::map<PortName, std::string> portStates(IbsimFabric& fab, const fabric::Topology& topo,
                                           const std::vector<PortName>& ports,
                                           const std::set<fabric::LinkId>& avoid,
                                           const std::string& probeHost = "H2");

// Reads the ports until every one is in `want` (the decision is logged when
// ebb decides; the Set lands a moment later), at most `tries` rounds.
// `avoid` is asked afresh each round: ebb goes on gating meanwhile.
std::map<PortName, std::string> waitForStates(
    IbsimFabric& fab, const fabric::Topology& topo, const std::vector<PortName>& ports,
    const std::string& want, const std::function<std::set<fabric::LinkId>()>& avoid, int tries = 5);

// Every host pair has a route in OpenSM's forwarding tables (dump_fts) that
// follows cables of the topology and avoids `down` links. "" or the first
// broken pair.
std::string checkAllPairs(IbsimFabric& fab, const fabric::Topology& topo,
                          const std::set<fabric::LinkId>& down);
// The same, calling `meanwhile` about every 50 ms while dump_fts runs (the
// physical layer keeps answering ebb's Sets: dump_fts can take seconds while
// the fabric changes), and asking for the links to avoid once it is done.
std::string checkAllPairs(IbsimFabric& fab, const fabric::Topology& topo,
                          const std::function<void()>& meanwhile,
                          const std::function<std::set<fabric::LinkId>()>& down);

// How many heavy sweeps OpenSM has finished so far ("SUBNET UP" in its log).
std::size_t openSmSweeps(const IbsimFabric& fab);
// Waits until OpenSM has finished more than `sweeps` sweeps, up to `timeout`.
bool waitForSweepAfter(IbsimFabric& fab, std::size_t sweeps, std::chrono::milliseconds timeout);

// The physical layer ibsim lacks: a port Set Disabled loses its cable
// (Unlink), a port Set Polling gets it back (ReLink, as link training
// would). Cables can also fail without ebb (fail()): those stay out.
class PhysicalLayer {
 public:
  struct Options {
    // Read each port Set Disabled by smpquery before the Unlink and expect
    // "Disabled" (slow: one smpquery per Set).
    bool verifyDisabled = false;
    // Expect ebb never to decide or set off a link of this tree.
    const fabric::MinimalTree* tree = nullptr;
  };
  PhysicalLayer(IbsimFabric& fab, const Daemon& d, Options o) : fab_(fab), d_(d), o_(o) {}

  void play(const std::vector<Decision>& ds);
  // A cable fails without ebb: Unlinked at `at` (if ebb had not disabled it
  // already), never played back, whatever ebb sets later.
  void fail(const PortName& at);
  // A cable ebb disabled dies where it lies: a later Polling never brings it
  // back, and nothing reports it (no trap: it was down already).
  void die(fabric::LinkId l) {
    down_.erase(l);
    failed_.insert(l);
  }
  // From now on, no minimal-tree check (the tree is re-homed after a failure).
  void forgetTree() { o_.tree = nullptr; }

  const std::set<fabric::LinkId>& down() const { return down_; }  // ebb's, unlinked
  // The port ebb's Disabled Set for `l` went to (the link's gate), if any.
  std::optional<PortName> disabledAt(fabric::LinkId l) const {
    const auto it = unlinkedAt_.find(l);
    if (it == unlinkedAt_.end()) return std::nullopt;
    return it->second;
  }
  const std::set<fabric::LinkId>& failed() const { return failed_; }
  const std::set<fabric::LinkId>& everDisabled() const { return everDisabled_; }
  std::set<fabric::LinkId> cut() const;  // down() and failed()
  std::size_t unverified() const { return unverified_; }
  // Ports whose cable the player ReLinked (ebb set them Polling).
  const std::vector<PortName>& relinked() const { return relinked_; }

 private:
  void verify(const Decision& x, fabric::LinkId l);
  IbsimFabric& fab_;
  const Daemon& d_;
  Options o_;
  std::set<fabric::LinkId> down_, failed_, everDisabled_;
  std::map<fabric::LinkId, PortName> unlinkedAt_;
  std::vector<PortName> relinked_;
  std::size_t unverified_ = 0;
};

// Plays the physical layer until, after the agents started, a second passes
// with nothing new decided or set (a refusal is logged once), at most `limit`.
void playUntilQuiet(Daemon& d, PhysicalLayer& phys, std::chrono::seconds limit);

// The 4-ary 3-tree the daemon tests run on (built once).
const fabric::Topology& fourAryThreeTree();

// Fabric options with OpenSM loading ebb's event plugin (opensm_plugin/, on
// LD_LIBRARY_PATH), which forwards to osm-events.sock in OpenSM's folder.
IbsimFabric::Options withOsmEventPlugin();

}  // namespace ebb::testing
