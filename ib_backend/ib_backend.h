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
#include "ib_backend/fan_in.h"
#include "ib_backend/mad_transport.h"
#include "ib_backend/port_info_write.h"
#include "ib_backend/topology_survey.h"

namespace ebb::ib {

class GatingStrategy;
struct RestoreRun;
class DisablePortGating;
class ReduceWidthGating;

// How a link is gated (docs/mechanisms.md §2.6): taken down whole (PortPhysicalState
// Disabled, Polling to bring it back), or kept up at its narrowest width
// (LinkWidthEnabled, the width it had to bring it back).
enum class GatingAction { kDisablePort, kReduceWidth };
const char* gatingActionName(GatingAction a);  // "disable_port", "reduce_width"

// What initialize() does when the fabric's cables differ from the topology
// (docs/ib_agent.md, *Topology versus fabric*): fail listing every
// difference, or go on with the links it cannot vouch for left alone.
enum class TopologyMismatch { kRefuse, kWarn };

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
  TopologyMismatch topologyMismatch = TopologyMismatch::kRefuse;
  // initialize() accepts switches with no LID yet (no subnet manager has
  // run): their counters are held until rereadLids() finds a LID.
  bool allowMissingLids = false;
  // Read PortXmitWait (PortCounters) with every counter sweep, for the
  // congestion trigger (gating.wait_on): one more PMA read per port.
  bool readXmitWait = false;
  // The time of one PortXmitWait tick; 0: the IBA's, one symbol time of the
  // port's lane (8 bits at its per-lane data rate). Vendors multiply it.
  TimePs xmitWaitTickPs = 0;
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
  std::uint64_t reprobes = 0;       // reprobeFailedLinks() rounds sent
  // Disabled Sets that landed after a turn-on had superseded them, undone
  // (Polling again at that end) or held as pending re-enables.
  std::uint64_t staleDisablesUndone = 0;
  // Turn-offs whose Get read the port down (a cable dead with no trap to
  // tell): taken in as failures, nothing Set.
  std::uint64_t failuresFoundBeforeSet = 0;
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

// A re-enable (Polling Set) that could not be delivered stays pending and is
// tried again, with backoff, until the switch acknowledges it or the link
// reads LinkUp (docs/ib_agent.md, *Fail safe*). What happened to one.
struct ReenableEvent {
  enum class Kind { kPending, kDelivered, kConfirmedUp };
  fabric::LinkId link;
  Kind kind = Kind::kPending;
  Status why;            // kPending: the failure that made it pending
  int attempts = 0;      // Sets tried so far
  TimePs pendingPs = 0;  // since it became pending
};

// A gate this backend holds on the fabric, as the daemon's state file keeps
// it (daemon/gate_record.h): a port it set Disabled (or is about to), or one
// it narrowed, with the LinkWidthEnabled that restores it. A run that starts
// after a crash takes back the gates its predecessor's file lists
// (adoptGates): restored on exit as its own.
struct HeldGate {
  fabric::PortId end;
  bool narrowed = false;          // false: Disabled
  std::uint8_t restoreWidth = 0;  // narrowed: LinkWidthEnabled before
  auto operator<=>(const HeldGate&) const = default;
};

// The subnet manager as the management port sees it (checkSubnetManager).
struct SubnetManagerState {
  bool master = false;      // the port is Active and a master SM answers SMInfo
  std::uint16_t smLid = 0;  // the port's MasterSMLID
  std::string why;          // when not master: what is missing
};

// The Backend over a real (or ibsim) InfiniBand subnet (docs/mechanisms.md §2.6).
// The topology comes from a file or from `ebb topo --from-ibnetdiscover` and
// is checked against the fabric: every reachable switch's GUID along its
// directed route. Links are gated whole: Set(PortInfo) PhysPortState=Disabled
// at one end takes both directions down; Polling re-enables and the link
// retrains. A link is gated from its lower end when that switch is reachable
// and allow-listed, else from its upper end. SMPs go by directed route along
// links that are up, so a switch stays reachable while any path to it is on;
// PMA queries go to the switch's LID (OpenSM must have assigned LIDs).
// When a switch answers neither by LID nor by directed route and the switch
// the management port attaches at does not answer either, contact with the
// fabric is lost: the callback hears onBackendError (once).
// Internals by concern: docs/ib_backend_internals.md.
class IbBackend final : public agent::Backend {
 public:
  IbBackend(const fabric::Topology& topo, MadTransport& transport, agent::Scheduler& scheduler,
            IbBackendOptions opts);
  ~IbBackend() override;

  // Finds the local port in the topology, walks the fabric by directed route
  // checking GUIDs, and reads every port's state and each switch's LID; asks
  // NodeInfo through every LinkUp port to learn the far end of its cable and
  // compares those cables with the topology (topologySurvey()). Errors name
  // the switch, its route and the rule; with TopologyMismatch::kRefuse every
  // difference, one per line. Sends no Set.
  void initialize(std::function<void(Status)> done);
  // The comparison of the topology with the cables found (after initialize).
  // A link it finds absent (missing, moved, unverified) reads off and is
  // never Set: turning it on answers kTurningOn and goes no further.
  const TopologySurvey& topologySurvey() const { return survey_; }
  // Which links are up, as read (valid after initialize).
  fabric::LinkStates linkStates() const;
  // The switch the management port attaches at (or next to); after initialize.
  std::optional<fabric::SwitchId> attachSwitch() const { return first_; }
  bool reachable(fabric::SwitchId sw) const { return sw_[sw.value()].reachable; }
  const fabric::Topology& topology() const { return topo_; }
  const IbBackendOptions& options() const { return opts_; }
  // Whether ebb may Set this switch's ports (allow-listed).
  bool allowed(fabric::SwitchId s) const;
  // Links found Disabled at start, with the end that reads so (the only one
  // that can bring the link back): the safety guard's starting gates.
  std::vector<fabric::PortId> foundDisabledEnds() const;
  // Who chooses the end of a link to disable (the safety guard:
  // SafetyGuard::gateEnd). Unset, or nullopt for a link: the lower end when
  // reachable and allow-listed, else the upper.
  using GateChooser = std::function<std::optional<fabric::PortId>(fabric::LinkId)>;
  void setGateChooser(GateChooser chooser) { gateChooser_ = std::move(chooser); }
  // The switch whose port 0 has this LID (as read at start), if any.
  std::optional<fabric::SwitchId> switchByLid(std::uint16_t lid) const;
  // Re-reads the PortInfo of every cabled port of `sw` at once (an OpenSM
  // event said something changed there) and takes in what changed without
  // ebb: a link that went down or came up (also one ebb is enabling: no need
  // to wait for the next poll), a reduced width someone else reset. The
  // agents hear of it as of any other change, and of a link that went down
  // or came up without ebb as onPortDown/onPortUp. Completes with the changes.
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
  // By link id; a snapshot.
  std::map<std::uint32_t, Narrowed> narrowedLinks() const;
  const GatingAction& gatingAction() const { return opts_.action; }
  // Sets Polling on every link this backend disabled, in waves: a link whose
  // ends are both out of reach (a dark switch) waits until links enabled
  // before it have trained and opened a route; widens every link it reduced.
  // `onSet` hears of each Set (the daemon logs it). Done OK once every link
  // is back (a disabled link when it reads LinkUp), else at restoreTimeoutPs
  // of scheduler time, whatever is in flight, with every link not back and
  // why, one per line.
  using RestoreObserver = std::function<void(fabric::LinkId, fabric::PortId)>;
  void restoreAll(std::function<void(Status)> done, RestoreObserver onSet = {});
  // Switches out of reach over the links that are up hide what failed (no
  // trap, no counter read gets out): re-enables, toward each, the first link
  // of the shortest way over links this backend disabled (each from the end
  // that can), so ebb can read them again and the agents re-home on what it
  // finds. Returns the links set going; `onSet` hears of each Set.
  std::vector<fabric::LinkId> reachOut(RestoreObserver onSet = {});
  const IbBackendStats& stats() const { return stats_; }

  // Re-enables (ib_reenable.cpp). A turn-on whose Set fails (no answer, the
  // end out of reach) stays pending and is retried with backoff (from
  // linkPollPs, doubling to kMaxReenableDelayPs) until acknowledged or the
  // link reads LinkUp; while any is pending no turn-off is sent.
  static constexpr TimePs kMaxReenableDelayPs = 5'000'000'000'000;  // 5 s
  using ReenableObserver = std::function<void(const ReenableEvent&)>;
  void setReenableObserver(ReenableObserver o) { reenableObserver_ = std::move(o); }
  std::vector<fabric::LinkId> pendingReenables() const;
  // Those, and the links whose re-enable is still under way (waiting for
  // its end to come in reach, or its Set on the wire): none of them is off
  // on purpose.
  std::vector<fabric::LinkId> reenablesNotDelivered() const;
  // A turn-off is refused while re-enables are pending (not OK naming
  // them), but for those at switches failures cut off: they wait for that
  // switch, which may be dead for days, not for the fabric.
  Status reenablesPendingRefusal() const;
  // Tries the pending re-enables now (contact came back): every one, or
  // those to set at switch `at`.
  void retryPendingReenables(std::optional<fabric::SwitchId> at = std::nullopt);

  // Re-probes (ib_reprobe.cpp): reads, from an end in reach, every link
  // that went down without ebb (a host link from its leaf), so a repair no trap told of is taken in
  // (onPortUp, routes, re-homing). One at a time; completes with the changes.
  void reprobeFailedLinks(Done<std::vector<PortChange>> done);
  // Links down without ebb (failed), not disabled by it: switch links and
  // host links (a host powered off, found so at start or gone later).
  std::vector<fabric::LinkId> failedLinks() const;
  std::size_t failedLinkCount() const;
  // Switches out of reach with a failed link: a failure, not ebb, cut them off.
  std::vector<fabric::SwitchId> switchesCutOff() const;

  // The subnet manager (ib_sm.cpp): PortInfo of the management port by
  // directed route (state Active, MasterSMLID set), then SMInfo from that LID
  // (SMState master). ebb relies on the SM to route around what it disables.
  void checkSubnetManager(Done<SubnetManagerState> done);
  // Reads every reachable switch's LID again (port 0 PortInfo): LIDs appear
  // once an SM ran. Completes with the switches whose LID changed.
  void rereadLids(std::function<void(std::size_t changed)> done);
  // A switch in reach has no LID (as last read).
  bool anyLidMissing() const;

  // Held gates (ib_held_gates.cpp). The observer hears of every change, and
  // before a Disabled or narrowing Set goes out (with that gate among
  // heldGates()): if it fails (the state file cannot be written), the Set is
  // not sent and the turn-off fails with its status.
  std::vector<HeldGate> heldGates() const;
  using HeldObserver = std::function<Status()>;
  void setHeldObserver(HeldObserver o) { heldObserver_ = std::move(o); }
  // After initialize(): the gates of `previous` the fabric still shows (the
  // port reads Disabled, or narrowed) become this run's, restored on exit
  // (restoreAll), width ends to the recorded width. Returns those taken back.
  std::vector<HeldGate> adoptGates(const std::vector<HeldGate>& previous);
  // The port of `g` was read (at start or since) and is not gated that way:
  // Disabled gates, not Disabled; narrowed ones, not at the narrowest width.
  // False when it could not be read (its switch out of reach).
  bool readsUngated(const HeldGate& g) const;

  agent::Capabilities capabilities() const override { return {false}; }
  void setCallback(agent::BackendCallback* callback) override { callback_ = callback; }
  // Hears of every PortInfo Set the fabric accepted (the daemon's audit log).
  using SetObserver = std::function<void(const PortSetEvent&)>;
  void setSetObserver(SetObserver observer) { setObserver_ = std::move(observer); }
  void discoverPorts(fabric::SwitchId sw, Done<std::vector<agent::PortDescription>> done) override;
  void requestCounters(fabric::SwitchId sw, Done<agent::CounterSample> done) override;
  void applyLinkState(fabric::PortId port, bool on, Done<agent::LinkPowerState> done) override;

 private:
  friend class DisablePortGating;
  friend class ReduceWidthGating;
  struct SwitchState {
    DrPath path;
    bool reachable = false;
    bool visited = false;
    std::uint16_t lid = 0;
    bool extSpeeds = false;       // port 0's CapabilityMask.IsExtendedSpeedsSupported
    std::vector<PortInfo> ports;  // by port label
    // Every port of the switch as found at start, by IB port number - 1.
    std::vector<PortSighting> seen;
    std::vector<agent::PortCounters> last;
    TimePs lastSampleAt = -1;
    int missed = 0;          // consecutive failed counter reads
    TimePs firstMissAt = 0;  // when the first of them started
    bool sweepInFlight = false;
    bool probing = false;  // probeLinksOf() under way
  };
  // Everything this backend knows of one link (docs/ib_backend_internals.md).
  struct LinkRecord {
    bool up = true;         // physically up as last read or set
    std::uint64_t gen = 0;  // bumped by every Set: stops stale polls
    // kDisablePort: the end ebb set Disabled (only it can bring the link
    // back); set iff the link is in disabled_.
    std::optional<fabric::PortId> disabledEnd;
    bool disabling = false;    // a Set Disabled on the wire
    bool enabling = false;     // set Polling, waiting for LinkUp
    bool pendingGate = false;  // being re-enabled to reach a dark switch
    bool pollingSet = false;   // a Set Polling on the wire
    bool reenabling = false;   // a turn-on's re-enable under way, not delivered yet
    // kReduceWidth: the link is at reduced width (by this run or found so).
    std::optional<Narrowed> narrowed;
    bool widthBusy = false;  // a width Set on the wire
    // Not in the fabric as configured, or its state unknown (topologySurvey):
    // never Set, re-reads leave it alone.
    bool absent = false;
    // Found Disabled at start at this end: the end that can bring it back.
    std::optional<fabric::PortId> foundDisabledAt;
    // The port holding the link down: ebb's own gate, else one found
    // Disabled at start (the only end a Polling Set brings it back from).
    std::optional<fabric::PortId> heldEnd() const {
      return disabledEnd ? disabledEnd : foundDisabledAt;
    }
  };
  LinkRecord& rec(fabric::LinkId l) { return links_[l.value()]; }
  const LinkRecord& rec(fabric::LinkId l) const { return links_[l.value()]; }
  // Up and at full width: usable for the agents.
  bool usable(fabric::LinkId l) const { return rec(l).up && !rec(l).narrowed; }

  // Discovery (ib_discovery.cpp).
  struct Walk;  // initialize()'s state
  void visit(std::shared_ptr<Walk> w, fabric::SwitchId s);
  void readPorts(std::shared_ptr<Walk> w, fabric::SwitchId s, std::uint16_t numPorts,
                 std::function<void()> finishOne);
  // Reads one LinkUp port's far end (NodeInfo through it) into `seen`.
  void probePeer(fabric::SwitchId s, std::uint16_t port, std::function<void()> then);
  void walkOn(std::shared_ptr<Walk> w, fabric::SwitchId s);
  // After the walk: compares the cables with the topology, sets up/absent.
  Status takeInSurvey();
  void recomputeRoutes();
  // Re-reads (ib_reread.cpp): takes in one port's PortInfo, with its changes.
  std::vector<PortChange> takeIn(fabric::PortId port, const PortInfo& pi);
  // A switch stopped answering (lost contact, no trap): reads, from the far
  // end, every link toward it that ebb believes up, so a failed cable is
  // taken in as a fault (onPortDown, re-homing) instead of a silent switch.
  // Completes with the changes found (none: the switch itself is silent).
  void probeLinksOf(fabric::SwitchId s, std::function<void(std::vector<PortChange>)> done);
  void readPortsAndTakeIn(std::vector<fabric::PortId> ports,
                          std::function<void(std::vector<PortChange>)> done);
  // probeLinksOf() for every switch the directed route to `s` passes.
  void probeRoute(fabric::SwitchId s);
  // Held gates (ib_held_gates.cpp): a Set that gates `g` is about to go.
  Status holdBeforeSet(const HeldGate& g);
  void heldChanged();  // tells the observer (its failure only matters before a Set)
  bool settledIntent(const HeldGate& g, const LinkRecord& r) const;
  void widened(fabric::PortId end);  // a width intent at `end` is over
  // Restore (ib_restore.cpp): ends a restoreAll once.
  void finishRestore(const std::shared_ptr<RestoreRun>& r, bool deadline);
  // Re-enables (ib_reenable.cpp): `l`'s turn-on failed with `why`.
  void keepReenabling(fabric::LinkId l, const Status& why);
  void retryReenable(fabric::LinkId l, std::uint64_t token);
  void retryReenableNow(fabric::LinkId l);  // unless a try is on the wire
  void scheduleReenable(fabric::LinkId l, TimePs delay);
  void reportReenable(fabric::LinkId l, ReenableEvent::Kind kind);
  // Counters (ib_counters.cpp).
  void lostContact(fabric::SwitchId s, const Status& why);
  // Core (ib_backend.cpp).
  MadAddress drTo(fabric::SwitchId s) const;
  // One direction's bandwidth in bytes/ps (docs/ib_agent.md, *Link speeds*).
  Result<double> bandwidthOf(fabric::SwitchId s, std::uint16_t port) const;
  // Reads the port's PortXmitWait into `pc` (counters read a moment before).
  void readXmitWait(fabric::SwitchId sw, std::uint16_t p, const MadAddress& to,
                    agent::PortCounters pc,
                    std::function<void(Result<agent::PortCounters>)> answer);
  // PortXmitWait read at `now` as cumulative wait time, continuing `before`
  // (the port's last sample): ticks at the port's tick time; a saturated
  // counter counts the whole time since that sample as waited.
  TimePs xmitWaitTime(fabric::SwitchId s, std::uint16_t port, std::uint32_t ticks,
                      const agent::PortCounters* before, TimePs beforeAt) const;
  // The data rate of a LinkUp port as read; E_INVALID naming the port.
  Result<double> activeGbps(fabric::SwitchId s, std::uint16_t port) const;
  void sendSmp(fabric::SwitchId s, const std::function<MadBytes(const MadAddress&)>& build,
               MadTransport::Done done, int reroutes = 2);
  // Read-modify-write of one port's PortInfo along the directed route of the
  // moment (port_info_write.h); counts the Sets sent.
  void writePort(fabric::PortId end, std::function<Result<PortInfoEdit>(const PortInfo&)> modify,
                 Done<PortInfoChange> done);
  // A link came up or went down: routes follow, both ends hear of it.
  void linkChanged(fabric::LinkId link, bool up);
  // ... without ebb asking (re-reads): also onPortDown/onPortUp.
  void linkFault(fabric::LinkId link, bool up);
  // The strategy that turns `l` on or off: the configured one, except that a
  // link found down is always brought back by Polling (ib_gating.cpp).
  GatingStrategy& strategyFor(fabric::LinkId l);
  // Completes `done` with `r` on the scheduler (never inside the call).
  template <class T>
  void later(Done<T> done, Result<T> r) {
    sched_.after(0, agent::Phase::kBackend,
                 [done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
  }

  const fabric::Topology& topo_;
  MadTransport& mad_;
  agent::Scheduler& sched_;
  IbBackendOptions opts_;
  IbBackendStats stats_;
  agent::BackendCallback* callback_ = nullptr;
  SetObserver setObserver_;
  GateChooser gateChooser_;
  std::vector<SwitchState> sw_;
  std::vector<LinkRecord> links_;         // by LinkId
  std::vector<fabric::LinkId> disabled_;  // links ebb set Disabled, in the order it did
  // Gates whose Set went out (or is about to) and is not confirmed yet: held
  // while the link reads down (Disabled), or until the narrowing ends.
  std::set<HeldGate> intents_;
  HeldObserver heldObserver_;
  DrPath attach_;                          // route to the first switch
  std::optional<fabric::SwitchId> first_;  // the switch we attach at (or next to)
  bool contactLost_ = false;               // onBackendError raised
  // Re-enables not delivered yet, by link (ib_reenable.cpp).
  struct PendingReenable {
    TimePs since = 0;
    TimePs delay = 0;  // before the next try
    int attempts = 0;
    bool inFlight = false;
    std::uint64_t token = 0;  // the retry scheduled now (older ones are void)
    Status why;
  };
  std::map<fabric::LinkId, PendingReenable> pending_;
  ReenableObserver reenableObserver_;
  bool restoring_ = false;  // restoreAll() took over every re-enable
  bool reprobing_ = false;  // reprobeFailedLinks() under way
  TopologySurvey survey_;
  std::unique_ptr<DisablePortGating> disable_;
  std::unique_ptr<ReduceWidthGating> width_;
};

}  // namespace ebb::ib
