#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "agent/backend.h"
#include "agent/scheduler.h"
#include "fabric/link_states.h"
#include "fabric/topology.h"
#include "ib_backend/mad_transport.h"

namespace ebb::ib {

// How a link is gated (MECHANISMS.md §6): taken down whole (PortPhysicalState
// Disabled, Polling to bring it back), or kept up at its narrowest width
// (LinkWidthEnabled, the width it had to bring it back).
enum class GatingAction { kDisablePort, kReduceWidth };
const char* gatingActionName(GatingAction a);  // "disable_port", "reduce_width"

struct IbBackendOptions {
  GatingAction action = GatingAction::kDisablePort;
  bool dryRun = false;                  // decide and log, never send a Set
  std::set<std::uint64_t> allowGuids;   // switches ebb may Set; empty = read-only
  std::uint64_t mKey = 0;               // M_Key for SMPs to protected switches
  TimePs linkPollPs = 100'000'000'000;  // re-read a port being enabled this often
  // Counter reads may fail this long (the SM re-routing after a link went
  // down) before contact with a switch counts as lost; meanwhile the agent
  // gets stale samples and holds.
  TimePs lostContactPs = 5'000'000'000'000;
  TimePs restoreTimeoutPs = 30'000'000'000'000;  // restoreAll gives up after this long
};

struct IbBackendStats {
  std::uint64_t setsSent = 0;
  std::uint64_t setsSuppressed = 0;  // dry run
  std::uint64_t counterSweeps = 0;
  std::uint64_t reroutes = 0;  // SMPs sent again on a new route after a timeout
  // Counter reads that failed past lostContactPs while the switch still
  // answered by directed route (no LID route to it): its agent holds.
  std::uint64_t countersHeld = 0;
  TimePs lastSweepPs = 0;           // duration of the last counter read of one switch
  std::uint64_t widthReduced = 0;   // LinkWidthEnabled Sets to the narrowest width
  std::uint64_t widthRestored = 0;  // LinkWidthEnabled Sets back to the width read before
  std::uint64_t rereads = 0;        // rereadPorts() calls (OpenSM events)
  std::uint64_t portChanges = 0;    // port changes they found
};

// A change rereadPorts() found at one port.
struct PortChange {
  fabric::PortId port;
  std::string what;  // "LinkUp", "Polling", "LinkWidthEnabled 1x|4x (someone widened it)"
};

// One PortInfo Set the fabric accepted (the daemon's audit log).
struct PortSetEvent {
  fabric::PortId port;
  PhysState phys = PhysState::kNoChange;  // kNoChange: a width Set
  std::uint8_t widthEnabled = 0;          // width Sets: LinkWidthEnabled written
  std::uint8_t widthBefore = 0;           // width Sets: LinkWidthEnabled read just before
  bool isWidth() const { return widthEnabled != 0; }
};

// The Backend over a real (or ibsim) InfiniBand subnet (MECHANISMS.md §6).
// The topology comes from a file or from `ebb topo --from-ibnetdiscover` and
// is checked against the fabric: every reachable switch's GUID along its
// directed route. Links are gated whole: Set(PortInfo) PhysPortState=Disabled
// at one end takes both directions down; Polling re-enables and the link
// retrains. A link is gated from its lower end when that switch is reachable
// and allow-listed, else from its upper end. SMPs go by directed route along
// links that are up, so a switch stays reachable while any path to it is on;
// PMA queries go to the switch's LID (OpenSM must have assigned LIDs).
class IbBackend final : public agent::Backend {
 public:
  IbBackend(const fabric::Topology& topo, MadTransport& transport, agent::Scheduler& scheduler,
            IbBackendOptions opts);

  // Finds the local port in the topology, walks the fabric by directed route
  // checking GUIDs, and reads every cabled port's state and each switch's LID.
  // Errors name the switch, its route and the rule.
  void initialize(std::function<void(Status)> done);
  // Which links are up, as read (valid after initialize).
  fabric::LinkStates linkStates() const;
  // The switch the management port attaches at (or next to); after initialize.
  std::optional<fabric::SwitchId> attachSwitch() const { return first_; }
  bool reachable(fabric::SwitchId sw) const { return sw_[sw.value()].reachable; }
  // The switch whose port 0 has this LID (as read at start), if any.
  std::optional<fabric::SwitchId> switchByLid(std::uint16_t lid) const;
  // Re-reads the PortInfo of every cabled port of `sw` at once (an OpenSM
  // event said something changed there) and takes in what changed without
  // ebb: a link that went down or came up (also one ebb is enabling: no need
  // to wait for the next poll), a reduced width someone else reset. The
  // agents hear of it as of any other change. Completes with the changes.
  void rereadPorts(fabric::SwitchId sw, Done<std::vector<PortChange>> done);
  const std::vector<fabric::LinkId>& disabledLinks() const { return disabled_; }
  // Links this backend gated in this run, either action (restoreAll brings them back).
  std::vector<fabric::LinkId> gatedLinks() const;
  // Links at reduced width (by this run or found so at start), with the
  // LinkWidthEnabled of each reduced end and the value that restores it.
  struct NarrowEnd {
    fabric::PortId end;
    std::uint8_t widthEnabled = 0;  // as set (or read at start)
    std::uint8_t restoreTo = 0;     // as read before the Set (or inferred at start)
  };
  struct Narrowed {
    std::vector<NarrowEnd> ends;
    bool bySelf = false;  // reduced by this run; false: found reduced at start
  };
  const std::map<std::uint32_t, Narrowed>& narrowedLinks() const { return narrowed_; }
  const GatingAction& gatingAction() const { return opts_.action; }
  // Sets Polling on every link this backend disabled, in waves: a link whose
  // ends are both out of reach (a dark switch) waits until links enabled
  // before it have trained and opened a route. `onSet` hears of each Set
  // (the daemon logs it); done when every link is set, or with the ones left
  // after restoreTimeoutPs.
  using RestoreObserver = std::function<void(fabric::LinkId, fabric::PortId)>;
  void restoreAll(std::function<void(Status)> done, RestoreObserver onSet = {});
  const IbBackendStats& stats() const { return stats_; }

  agent::Capabilities capabilities() const override { return {false, false, true}; }
  void setCallback(agent::BackendCallback* callback) override { callback_ = callback; }
  // Hears of every PortInfo Set the fabric accepted (the daemon's audit log).
  using SetObserver = std::function<void(const PortSetEvent&)>;
  void setSetObserver(SetObserver observer) { setObserver_ = std::move(observer); }
  void discoverPorts(fabric::SwitchId sw, Done<std::vector<agent::PortDescription>> done) override;
  void requestCounters(fabric::SwitchId sw, Done<agent::CounterSample> done) override;
  void applyLinkState(fabric::PortId port, bool on, Done<agent::LinkPowerState> done) override;
  void applyLpiEnabled(fabric::PortId port, bool enabled, Done<bool> done) override;

 private:
  struct SwitchState {
    DrPath path;
    bool reachable = false;
    bool visited = false;
    std::uint16_t lid = 0;
    std::vector<PortInfo> ports;  // by port label
    std::vector<agent::PortCounters> last;
    TimePs lastSampleAt = -1;
    int missed = 0;          // consecutive failed counter reads
    TimePs firstMissAt = 0;  // when the first of them started
    bool sweepInFlight = false;
  };
  struct Walk;  // initialize()'s state
  void visit(std::shared_ptr<Walk> w, fabric::SwitchId s);
  void recomputeRoutes();
  MadAddress drTo(fabric::SwitchId s) const;
  bool allowed(fabric::SwitchId s) const;
  double bandwidthOf(fabric::SwitchId s, std::uint16_t port) const;
  void sendSmp(fabric::SwitchId s, const std::function<MadBytes(const MadAddress&)>& build,
               MadTransport::Done done, int reroutes = 2);
  void setPhys(fabric::PortId end, PhysState phys, std::function<void(Status)> done);
  void pollUntilUp(fabric::LinkId link, fabric::PortId end);
  void linkChanged(fabric::LinkId link, bool up);
  std::optional<fabric::PortId> enableEnd(fabric::LinkId l) const;
  void enableLink(fabric::LinkId l, TimePs deadline, Done<agent::LinkPowerState> done);
  struct Restore;
  void restoreWave(std::shared_ptr<Restore> r);
  // Width reduction.
  void recoverWidths();
  void applyWidth(fabric::LinkId l, bool on, Done<agent::LinkPowerState> done);
  void setWidth(fabric::PortId end, std::uint8_t width, Done<NarrowEnd> done);
  void narrowEnds(fabric::LinkId l, std::vector<fabric::PortId> ends, std::vector<NarrowEnd> did,
                  std::function<void(Status)> done);
  void widenLink(fabric::LinkId l, std::function<void(Status)> done);
  template <class T>
  void later(Done<T> done, Result<T> r);

  const fabric::Topology& topo_;
  MadTransport& mad_;
  agent::Scheduler& sched_;
  IbBackendOptions opts_;
  IbBackendStats stats_;
  agent::BackendCallback* callback_ = nullptr;
  SetObserver setObserver_;
  std::vector<SwitchState> sw_;
  std::vector<char> linkUp_;        // by link: physically up as last read or set
  std::vector<std::uint64_t> gen_;  // by link: bumped by every Set, stops stale polls
  std::vector<fabric::LinkId> disabled_;
  std::map<std::uint32_t, fabric::PortId> disabledEnd_;  // by link: the end ebb set Disabled
  std::set<std::uint32_t> pendingGate_;         // links being re-enabled to reach a dark switch
  std::map<std::uint32_t, Narrowed> narrowed_;  // by link: reduced width (kReduceWidth)
  std::set<std::uint32_t> widthBusy_;           // links with a width Set on the wire
  std::set<std::uint32_t> disabling_;           // links with a Set Disabled on the wire
  std::set<std::uint32_t> enabling_;            // links set Polling, waiting for LinkUp
  DrPath attach_;                               // route to the first switch
  std::optional<fabric::SwitchId> first_;       // the switch we attach at (or next to)
};

}  // namespace ebb::ib
