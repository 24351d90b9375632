#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "agent/virtual_scheduler.h"
#include "fabric/topology.h"
#include "policies/gated_link.h"
#include "policies/lpi_link.h"
#include "policies/power_model.h"
#include "sim_backend/emulator_config.h"
#include "sim_backend/event_queue.h"
#include "sim_backend/iq_stage_masks.h"
#include "sim_backend/iq_state.h"
#include "sim_backend/routing.h"

namespace ebb::sim {

// Counters of one link direction as a switch port exposes them.
struct ChannelCounters {
  // Bytes on the wire: whole flits (a packet's last flit counts whole, as it
  // keeps the link busy), what PortXmitData counts on InfiniBand.
  std::uint64_t txBytes = 0;
  std::uint64_t txPackets = 0;
  TimePs busy = 0;        // time transmitting
  TimePs creditWait = 0;  // time with a packet to send but no credits (PortXmitWait)
};

struct Delivery {
  std::uint32_t tag = 0;  // the sender's tag (e.g. a job or an application message id)
  fabric::HostId src;
  fabric::HostId dst;
  std::int64_t bytes = 0;
  TimePs created = 0;
  TimePs delivered = 0;
};

// A message that lost a packet to a failure: it will never be delivered
// (docs/emulator.md, "Faults").
struct Drop {
  Delivery message;  // message.delivered is -1
  TimePs droppedAt = 0;
  bool gated = false;  // dropped by in-band gating (its way down went off), not by a fault
};

struct EmulatorStats {
  std::uint64_t messagesSent = 0;
  std::uint64_t messagesDelivered = 0;
  std::uint64_t packetsDelivered = 0;
  std::uint64_t bytesDelivered = 0;
  std::uint64_t flitsSent = 0;       // of the messages sent, as their links carry them
  std::uint64_t flitsDelivered = 0;  // of the packets delivered, likewise
  std::uint64_t packetHops = 0;      // link traversals
  std::uint64_t events = 0;          // network events processed (the emulator's own queue)
  // Packets lost (to faults: queued at a failed output with no other path, on
  // the wire of a failed direction, or routed to one; and to in-band gating,
  // packetsDroppedGated), the messages they belonged to (never delivered),
  // and packets moved off a failed up direction.
  std::uint64_t packetsDropped = 0;
  std::uint64_t messagesDropped = 0;
  std::uint64_t packetsRerouted = 0;
  std::uint64_t messagesRerouted = 0;  // messages with at least one packet rerouted
  // Whole-link (in-band) gating: packets whose way down went off while they
  // climbed, sent up another way or, with none, dropped as InfiniBand's
  // switch drops them (counted in packetsDropped too; routeHop), and the
  // messages whose first lost packet was one of those (in messagesDropped too).
  std::uint64_t packetsReascended = 0;
  std::uint64_t packetsDroppedGated = 0;
  std::uint64_t messagesDroppedGated = 0;
  // What faults alone lost.
  std::uint64_t packetsDroppedByFaults() const { return packetsDropped - packetsDroppedGated; }
  std::uint64_t messagesDroppedByFaults() const { return messagesDropped - messagesDroppedGated; }
};

// The packet-level k-ary n-tree (any fat tree) network model (docs/design.md §8, docs/emulator.md)
// §5, on the shared VirtualScheduler: per link direction a transmitter with a
// FIFO output queue, credit-based flow control into the receiver's per-VC
// input buffers, virtual cut-through, adaptive ascending routing among usable
// up links, deterministic descent, per-direction gating (T_on/T_off) and
// low-power idle. Packets and messages live in pools: no allocation per packet
// in steady state.
//
// Network events (transmission ends, head arrivals, credits, deliveries,
// transitions) are plain structs in the emulator's own EventQueue, not
// closures on the scheduler: the emulator keeps one scheduler task, at the
// time of its earliest event (phase kNetwork), and that task runs every
// network event of that timestamp. So agents and traffic sources on the
// VirtualScheduler still interleave deterministically with the network, and
// the scheduler's clock is exact inside every callback.
class FabricEmulator {
 public:
  using TransitionCallback =
      std::function<void(fabric::LinkId, fabric::Direction, policies::LinkPowerState)>;
  using DeliveryCallback = std::function<void(const Delivery&)>;
  // Every message offered, as sendMessage takes it (the replay's oracle bound).
  using SendCallback = std::function<void(fabric::HostId, fabric::HostId, std::int64_t bytes)>;
  // A direction became usable for routing (its turn-on completed) or stopped
  // being usable (it was set off: unusable at once, powered for T_off more).
  using UsabilityCallback = std::function<void(fabric::LinkId, fabric::Direction, bool usable)>;
  using DropCallback = std::function<void(const Drop&)>;
  // The set of a link's down directions (directionsDown) changed: one more
  // failed (up = false), or one came back, T_on after its repair (up = true).
  using LinkFaultCallback = std::function<void(fabric::LinkId, bool up)>;

  FabricEmulator(const fabric::Topology& topo, const EmulatorConfig& cfg,
                 agent::VirtualScheduler& scheduler);
  ~FabricEmulator();
  FabricEmulator(const FabricEmulator&) = delete;
  FabricEmulator& operator=(const FabricEmulator&) = delete;

  // Injects a message at now(): split into packets queued at the source host.
  void sendMessage(fabric::HostId src, fabric::HostId dst, std::int64_t bytes,
                   std::uint32_t tag = 0);

  // Gating of one direction: off is unusable for new routing at once; queued
  // ascending packets move to another usable up link, and what is still being
  // sent or queued (nowhere else to go) drains first (lossless); then the
  // direction is powered for T_off more. On is powered at once, usable after
  // T_on. Returns the time the change is expected to complete.
  TimePs setDirection(fabric::LinkId link, fabric::Direction dir, bool on);
  policies::LinkPowerState directionState(fabric::LinkId link, fabric::Direction dir);
  // Sets a direction's state at start-up, without a transition (e.g. only the
  // minimal tree on, as in the paper).
  void initDirection(fabric::LinkId link, fabric::Direction dir, bool on);
  bool usable(fabric::LinkId link, fabric::Direction dir);
  // Whole-link gating (docs/emulator.md, "In-band mode"): ascending routing
  // also avoids upper switches whose way down to the destination is gated
  // off, as a subnet manager routes around disabled links; without it a
  // packet would wait there for a link its lower switch keeps off. Off by
  // default: with per-direction gating the down-link rule keeps the way down.
  void setRouteAroundGated(bool on) {
    routeAroundGated_ = on;
    gatedReachDirty_ = true;
  }
  bool routesAroundGated() const { return routeAroundGated_; }

  // Faults (docs/emulator.md, "Faults"), at now(), any number of times: a
  // failed direction carries nothing, draws no power and is unusable; what
  // it held is rerouted or dropped. Repair returns a direction to the state
  // gating last asked for: on after T_on (like a turn-on), or off. A switch
  // failure fails every link of the switch until repairSwitch; a direction
  // is failed while any of its own, its link's or an end switch's faults is.
  void failLink(fabric::LinkId link);
  void repairLink(fabric::LinkId link);
  void failDirection(fabric::LinkId link, fabric::Direction dir);
  void repairDirection(fabric::LinkId link, fabric::Direction dir);
  void failSwitch(fabric::SwitchId sw);
  void repairSwitch(fabric::SwitchId sw);
  bool failed(fabric::LinkId link, fabric::Direction dir) const {
    return channels_[index(link, dir)].failed;
  }
  // A direction of the link is failed, or still recovering from a repair.
  bool linkDown(fabric::LinkId link) const { return directionsDown(link) != 0; }
  // Those directions, a bit each (1 << Direction).
  std::uint8_t directionsDown(fabric::LinkId link) const;
  // Time failed up to now() (counted as off in directionTimes()).
  TimePs failedTime(fabric::LinkId link, fabric::Direction dir);

  // Credit wait so far, the wait in progress included (counters() adds a
  // wait only when it ends); on both switch models.
  TimePs creditWaitNow(fabric::LinkId link, fabric::Direction dir) const;
  // Packets queued on (or holding a VC of) this direction while gating keeps
  // it off (agent::PortCounters::waitingWhileOff).
  bool waitingWhileOff(fabric::LinkId link, fabric::Direction dir) const;
  const ChannelCounters& counters(fabric::LinkId link, fabric::Direction dir) const {
    return channels_[index(link, dir)].counters;
  }
  // Time in each power state of one direction up to now().
  policies::DirectionTimes directionTimes(fabric::LinkId link, fabric::Direction dir);
  // What low-power idle cost a direction's packets so far.
  policies::LpiCounters lpiCounters(fabric::LinkId link, fabric::Direction dir) const;
  const EmulatorStats& stats() const { return stats_; }
  // Packets queued or in flight anywhere.
  std::uint64_t packetsInNetwork() const { return packetsLive_; }
  std::uint64_t queuedAtHosts() const { return queuedAtHosts_; }
  // Packets queued for one direction (not counting the one being sent), and
  // whether it is sending one now.
  std::uint32_t queuedPackets(fabric::LinkId link, fabric::Direction dir) const {
    return channels_[index(link, dir)].queued;
  }
  bool transmitting(fabric::LinkId link, fabric::Direction dir) const {
    return channels_[index(link, dir)].busy;
  }
  // Input-queued model: flits in the receiver's input buffers of one
  // direction (all its VCs), its output VCs held by packets, and a check
  // that no credit was created or lost: for every link direction and VC,
  // the sender's credits plus the flits in the receiver's buffer plus the
  // flits and credits on the wire equal the buffer size. E_INTERNAL naming
  // the first direction where they do not.
  std::uint32_t bufferedFlits(fabric::LinkId link, fabric::Direction dir) const;
  std::uint32_t heldOutputVcs(fabric::LinkId link, fabric::Direction dir) const;
  Status checkCredits() const;

  // Where packets wait now and why (direction off, turning on, no credits),
  // at most `maxLines` directions: for "the replay did not finish" errors.
  std::string describeWaiting(std::size_t maxLines = 4);

  void onDelivery(DeliveryCallback cb) { deliveryCb_ = std::move(cb); }
  void onSend(SendCallback cb) { sendCb_ = std::move(cb); }
  void onTransition(TransitionCallback cb) { transitionCb_ = std::move(cb); }
  void onUsability(UsabilityCallback cb) { usabilityCb_ = std::move(cb); }
  // Called once per lost message, at its first lost packet.
  void onDrop(DropCallback cb) { dropCb_ = std::move(cb); }
  void onLinkFault(LinkFaultCallback cb) { linkFaultCb_ = std::move(cb); }

  const fabric::Topology& topology() const { return topo_; }
  const EmulatorConfig& config() const { return cfg_; }
  agent::VirtualScheduler& scheduler() { return sched_; }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFF;
  struct Packet {
    std::uint32_t msg;
    std::uint32_t next;  // intrusive queue link
    std::uint32_t inCh;  // channel it arrived on (kNone at the source host)
    std::uint32_t bytes;
    fabric::HostId dst;
    std::uint8_t vc;
    std::uint16_t epoch = 0;  // its channel's epoch when it was sent (lost if it changed)
    bool truncated = false;   // a failure cut its tail: the destination discards it
    bool gatedDrop = false;   // in-band gating left it no way on (routeHop): dropped
  };
  struct Message {
    Delivery info;
    std::uint32_t remaining;
    bool lost = false;
    bool lostToGating = false;  // its first lost packet was a gatedDrop
    bool rerouted = false;
  };
  struct Channel {
    std::uint32_t head = kNone, tail = kNone;
    std::uint32_t queued = 0;
    bool busy = false;
    bool enabled = true;
    bool offPending = false;  // turn off once nothing is being sent or queued (draining)
    bool waiting = false;
    TimePs waitSince = 0;
    std::uint32_t txPacket = kNone;
    std::uint32_t txInCh = kNone;  // the packet being sent: where to return its credit
    std::uint8_t txVc = 0;
    std::uint32_t txBytes = 0;
    bool toHost = false;                // receiver is a host (no credits needed)
    fabric::SwitchId receiver;          // receiving switch (when !toHost)
    std::vector<std::int64_t> credits;  // free bytes per receiver VC
    policies::GatedLink gate{0, 0};
    policies::LpiLink lpi{policies::LpiParams{}};
    ChannelCounters counters;
    // Faults. The epoch changes at each failure: events and packets of the
    // direction from before it are stale (the packets are lost).
    bool fault = false;       // failDirection / failLink (a switch fault is per switch)
    bool failed = false;      // the effective state
    bool recovering = false;  // repaired, T_on not yet passed
    std::uint16_t epoch = 0;
    TimePs failedSince = 0;
    TimePs failedTotal = 0;
    policies::GatingTimes gateBefore{};  // times of the gate replaced at failures
  };

  static std::uint32_t index(fabric::LinkId l, fabric::Direction d) {
    return l.value() * 2 + static_cast<std::uint32_t>(d);
  }
  std::uint32_t allocPacket();
  void push(std::uint32_t ch, std::uint32_t p);
  std::uint32_t pop(std::uint32_t ch);
  void tryStart(std::uint32_t ch);
  void txDone(std::uint32_t ch);
  void arrive(std::uint32_t p, std::uint32_t ch);
  void deliver(std::uint32_t p);
  std::uint32_t route(fabric::SwitchId sw, fabric::HostId dst);
  // The next hop of packet `p`, which came in on `inCh` (kNone: dropped).
  std::uint32_t routeHop(fabric::SwitchId sw, std::uint32_t inCh, std::uint32_t p);
  // kNone when faults leave no up link that can reach `dstLeaf`.
  std::uint32_t chooseUp(fabric::SwitchId sw, fabric::HostId dst);
  // `reach`: only up links from which the destination can be reached by it
  // (nullptr: any).
  std::uint32_t chooseUpAmong(fabric::SwitchId sw, fabric::HostId dst, const FaultReach* reach);
  // Among several down ports toward `leaf` (parallel cables, an irregular
  // tree): one that is on and leads there, spread over destination hosts.
  std::uint32_t chooseDown(fabric::SwitchId sw, fabric::SwitchId leaf, fabric::HostId dst);
  void refreshGatedReach();
  bool chUsable(std::uint32_t ch);
  bool chCanSend(std::uint32_t ch);
  TimePs changeDirection(fabric::LinkId link, fabric::Direction dir, bool on);
  void finishOff(std::uint32_t ch);
  void applyOff(std::uint32_t ch);
  void rerouteQueued(std::uint32_t ch, bool forFault = false);
  void turnedOn(std::uint32_t ch);
  // Faults (fabric_faults.cpp).
  bool shouldFail(std::uint32_t ch) const;
  void applyFaults(const std::vector<fabric::LinkId>& links);
  void cut(std::uint32_t ch);
  void heal(std::uint32_t ch);
  void recovered(std::uint32_t ch);
  void recomputeReach();
  // A packet that will not reach its destination: its input buffer's credit
  // goes back upstream and it is counted lost (a kDrop event, now).
  void discard(std::uint32_t p);
  void lose(std::uint32_t p);
  // A packet on the wire of `ch` when it failed (its epoch changed) is lost;
  // the usual answer, no, inline (it is asked at every arrival).
  bool lostOnWire(std::uint32_t p, std::uint32_t ch) {
    return packets_[p].epoch != channels_[ch].epoch && loseFromWire(p, ch);
  }
  bool loseFromWire(std::uint32_t p, std::uint32_t ch);
  void returnCredit(std::uint32_t ch, std::uint8_t vc, std::uint32_t bytes);
  // The input-queued model (fabric_iq.cpp): one tick per cycle while flits
  // move; flits and credits travel on a timing wheel of cycles.
  bool iqModel() const { return cfg_.switchModel == SwitchModel::kInputQueued; }
  void iqInit();
  void iqActivate(fabric::HostId host);
  void iqArm();
  void iqTick();
  void iqWire(std::int64_t cycle, const iq::WireFlit& flit) {
    iqFlitWheel_[static_cast<std::size_t>(cycle) & iqWheelMask_].push_back(flit);
    ++iqOnWire_;
  }
  void iqCredit(std::int64_t cycle, std::uint32_t slot) {
    iqCreditWheel_[static_cast<std::size_t>(cycle) & iqWheelMask_].push_back(slot);
    ++iqOnWire_;
  }
  void iqReceive(const iq::WireFlit& flit);
  std::uint32_t iqSlot(std::uint32_t ch, std::uint32_t vc) const { return ch << iqShift_ | vc; }
  // The switch input holding `slot` (its index in iqInputs_ and iqStages_),
  // and the slot's bit in that input's stage masks.
  using Stages = iq::StageMasks;
  std::uint32_t iqInputOf(std::uint32_t slot) const { return iqPorts_[slot >> iqShift_].input; }
  std::uint32_t iqVc(std::uint32_t slot) const { return slot & ((1u << iqShift_) - 1); }
  std::uint16_t iqBit(std::uint32_t slot) const {
    return static_cast<std::uint16_t>(1u << iqVc(slot));
  }
  void iqInject();
  void iqPickInjectionVc(std::uint32_t ch, iq::Source& s);
  void iqRoute(std::uint32_t sw);
  void iqAllocateVcs(std::uint32_t sw);
  void iqGrantVc(std::uint32_t slot, std::uint32_t ov);
  void iqAllocateSwitch(std::uint32_t sw);
  void iqSend(std::uint32_t sw, std::uint32_t slot);
  // Caches chCanSend(ch) for the per-flit path; called wherever a
  // direction's gating state changes.
  void iqRefresh(std::uint32_t ch);
  void iqTakeVc(std::uint32_t out);
  // A direction turned on again (its low-power idle resumed): packets that
  // took its output VCs while it was off are ready now.
  void iqResumed(std::uint32_t out);
  // The output stayed without a packet through the pipeline bubble after it
  // went idle (generation `gen`): its low-power idle starts now.
  void iqIdle(std::uint32_t out, std::uint32_t gen);
  void iqBlock(std::uint32_t outSlot);
  void iqUnblock(std::uint32_t outSlot);
  void iqReleaseVc(std::uint32_t out, std::uint8_t vc);
  void iqReroute(std::uint32_t ch, bool forFault);
  void iqNextPacket(std::uint32_t slot);
  // What a channel's stage masks must be, from its input VCs' states.
  iq::InputMasks iqMasksOf(std::uint32_t ch) const;
  // Faults (fabric_iq_faults.cpp).
  void iqCut(std::uint32_t ch);
  void iqKill(std::vector<std::uint32_t> lost);
  void iqSink(std::uint32_t sw, std::uint32_t slot);
  std::int64_t iqFreeCredit(std::uint32_t ch) const;
  std::uint32_t iqOwned(std::uint32_t ch) const;
  std::string iqDescribeWaiting(std::size_t maxLines) const;
  std::string iqOutputHold(const iq::InputVc& in) const;
  enum EventKind : std::uint8_t {
    kTxDone,
    kArrive,
    kDeliver,
    kCredit,
    kTurnedOn,
    kTurnedOff,
    kDrop,
    kRecovered,
    kIqTick,
    kIqIdle
  };
  void post(TimePs when, EventKind kind, std::uint32_t a, std::uint32_t b = 0);
  void arm();
  void wake();
  void dispatch(const NetEvent& e);

  const fabric::Topology& topo_;
  EmulatorConfig cfg_;
  agent::VirtualScheduler& sched_;
  std::mt19937_64 rng_;
  std::vector<Channel> channels_;
  std::vector<Packet> packets_;
  std::vector<std::uint32_t> freePackets_;
  std::vector<Message> messages_;
  std::vector<std::uint32_t> freeMessages_;
  DownRoutes downRoutes_;
  std::unique_ptr<UpRoutingStrategy> upRouting_;
  std::vector<UpCandidate> upScratch_;
  std::vector<std::uint32_t> downScratch_;
  EmulatorStats stats_;
  std::uint64_t packetsLive_ = 0;
  std::uint64_t queuedAtHosts_ = 0;
  DeliveryCallback deliveryCb_;
  SendCallback sendCb_;
  TransitionCallback transitionCb_;
  UsabilityCallback usabilityCb_;
  DropCallback dropCb_;
  LinkFaultCallback linkFaultCb_;
  FaultReach reach_;                       // over the directions no failure took
  FaultReach gatedReach_;                  // ... and gating has not turned off
  std::vector<std::uint8_t> switchFault_;  // per switch
  std::uint32_t failedDirections_ = 0;     // routing consults the reach only when > 0 ...
  bool routeAroundGated_ = false;          // ... or when this is set ...
  bool irregularReach_ = false;            // ... or when some switch cannot reach every leaf
  bool gatedReachDirty_ = true;            // gating or faults changed since gatedReach_ was
  // Input-queued model state (empty with the output-queued model).
  std::uint32_t iqCap_ = 0;  // flits per VC buffer
  iq::Delays iqDelay_;
  std::uint32_t iqShift_ = 0;                // a VC slot is channel << iqShift_ | vc
  std::int64_t iqCycle_ = 0;                 // the cycle being simulated
  bool iqArmed_ = false;                     // a kIqTick is posted
  std::uint64_t iqOnWire_ = 0;               // flits and credits in the wheels
  std::vector<iq::InputVc> iqIn_;            // per VC slot
  std::vector<iq::Flit> iqFlits_;            // [slot * iqCap_ + i]
  std::vector<iq::OutputVc> iqOut_;          // per VC slot
  std::vector<iq::Port> iqPorts_;            // per channel
  std::vector<iq::SwitchPorts> iqSwitches_;  // per switch
  iq::BufferedFlits iqBuffered_;             // per switch
  std::vector<std::uint32_t> iqInputs_;      // the switches' inputs (channels), switch by switch
  iq::StageMasks iqStages_;                  // the same inputs' stage masks
  std::vector<iq::Source> iqSources_;        // per host
  std::vector<std::uint32_t> iqActiveHosts_;
  // Timing wheels (a power of two cycles long): flits, and credits as slots.
  std::vector<std::vector<iq::WireFlit>> iqFlitWheel_;
  std::vector<std::vector<std::uint32_t>> iqCreditWheel_;
  std::size_t iqWheelMask_ = 0;               // their length - 1
  std::vector<std::uint32_t> iqRequests_;     // scratch: slots asking for an output VC
  std::vector<std::uint32_t> iqVaGrantPtr_;   // per output VC: iSLIP VC allocator's grant pointer
  std::vector<std::uint32_t> iqVaAcceptPtr_;  // per input VC: its accept pointer
  std::vector<iq::Request> iqSaRequests_;     // scratch: the switch allocator's, sized once
  EventQueue events_;
  agent::TaskId armed_;                  // the scheduler task that runs the next events
  TimePs armedAt_ = EventQueue::kNever;  // its time
  bool draining_ = false;                // inside wake(): no re-arming per post
};

}  // namespace ebb::sim
