#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "sim_backend/fabric_emulator.h"
#include "workload/mpi_trace.h"

namespace ebb::sim {

// Closed-loop replay of an MPI trace on the emulator: each rank runs its
// operations in order; compute advances its clock, isend injects a message,
// irecv posts a receive matched in order by (source, tag), and waitall blocks
// until its requests complete (a send completes when its message is delivered,
// a receive when a matching message has arrived); wait blocks on one named
// request; blocking send and recv are an isend/irecv and its wait. So network
// delays (gating, low-power idle) show up as application runtime.
//
// Message ids (the emulator tag) are `tagBase` + a running count, so several
// replays (jobs) can share one emulator; onDelivery() ignores foreign ids.
//
// A message the emulator lost to a failure (onDrop) is sent again, whole and
// under the same id, when the transport's timer expires: `retransmitTimeout`
// after it was last sent (or at once if that has passed), as an MPI transport
// over a reliable connection would. Only lost messages are resent (the
// emulator knows which), so a timeout shorter than a loaded round trip costs
// nothing extra (docs/emulator.md, "Faults").
class MpiReplay {
 public:
  // placement[rank] = the host the rank runs on.
  MpiReplay(FabricEmulator& emu, const workload::MpiTrace& trace,
            std::vector<fabric::HostId> placement, std::uint32_t tagBase = 0);
  // Cancels pending retransmissions (they would call into this object).
  ~MpiReplay();
  MpiReplay(const MpiReplay&) = delete;
  MpiReplay& operator=(const MpiReplay&) = delete;

  void start();
  // Forward every delivery here; true if it belonged to this replay.
  bool onDelivery(const Delivery& d);
  // Forward every drop here; true if it belonged to this replay.
  bool onDrop(const Drop& d);
  // 100 µs: above the emulator's loaded round trips (a few µs, tens with
  // deep-sleep wake-ups on every hop), far below a real RC transport's
  // (milliseconds and more), which would dwarf an emulated run.
  static constexpr TimePs kDefaultRetransmitTimeoutPs = 100'000'000;
  void setRetransmitTimeout(TimePs t) { retransmitTimeout_ = t; }
  // Messages sent again after a fault lost them (those in-band gating lost
  // are sent again too, not counted here).
  std::uint64_t retransmissions() const { return retransmissions_; }
  bool done() const { return ranksDone_ == ranks_.size(); }
  std::size_t ranksDone() const { return ranksDone_; }
  // Called once, when the last rank finishes (from inside the replay: the
  // callback must not destroy this object).
  void onDone(std::function<void()> cb) { doneCb_ = std::move(cb); }
  // No rank runs another operation (a repeating job abandoned at the end).
  void stop() { stopped_ = true; }
  // When the last rank finished (valid once done()).
  TimePs runtime() const { return finish_; }
  std::uint64_t messagesSent() const { return sent_; }
  std::uint64_t bytesSent() const { return bytes_; }
  std::uint64_t messagesMatched() const { return matched_; }
  // Deadlock: ranks remain, every one of them waits, and no message of this
  // replay is on its way (none in the network, none waiting to be resent), so
  // nothing can ever wake one. Checked by the runner once a check period.
  bool deadlocked() const;
  // The ranks that wait and the op each waits in (for the error message).
  std::vector<std::pair<std::uint32_t, const workload::MpiOp*>> waitingRanks() const;
  // The emulator tags this replay uses: [tagBase, tagBase + messages of the trace).
  static std::uint64_t tagsNeeded(const workload::MpiTrace& trace) { return trace.sends; }

 private:
  struct Rank {
    std::size_t pc = 0;
    std::deque<std::uint32_t> outstanding;         // request ids, oldest first
    std::map<std::uint32_t, std::uint32_t> named;  // the trace's request name -> id
    std::uint32_t blockingReq = kNoReq;            // a blocking send/recv/wait in progress
    bool blocked = false;
    bool finished = false;
  };
  static constexpr std::uint32_t kNoReq = 0xFFFFFFFF;
  struct InFlight {
    std::uint32_t src;
    std::uint32_t dst;
    std::int32_t tag;
    std::uint32_t sendReq;
    std::int64_t bytes;
    TimePs lastSent;
    bool delivered = false;
  };
  void advance(std::uint32_t rank);
  void complete(std::uint32_t req);
  std::uint32_t newRequest(std::uint32_t rank, bool outstanding = true);
  std::uint32_t postSend(std::uint32_t rank, const workload::MpiOp& op, bool outstanding);
  std::uint32_t postRecv(std::uint32_t rank, const workload::MpiOp& op, bool outstanding);
  // The request a wait op names (kNoReq if none); removes it from outstanding.
  std::uint32_t takeNamed(std::uint32_t rank, std::uint32_t name);

  FabricEmulator& emu_;
  const workload::MpiTrace& trace_;
  std::vector<fabric::HostId> placement_;
  std::uint32_t tagBase_;
  std::vector<Rank> ranks_;
  std::vector<std::uint8_t> reqDone_;
  std::vector<std::uint32_t> reqOwner_;
  std::vector<InFlight> inflight_;  // by message id (the emulator tag)
  // Per destination rank, by (source, tag): posted receives and unexpected arrivals.
  std::vector<std::map<std::pair<std::uint32_t, std::int32_t>, std::deque<std::uint32_t>>> posted_;
  std::vector<std::map<std::pair<std::uint32_t, std::int32_t>, std::uint32_t>> unexpected_;
  std::size_t ranksDone_ = 0;
  std::function<void()> doneCb_;
  bool stopped_ = false;
  TimePs finish_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t matched_ = 0;
  std::uint64_t undelivered_ = 0;  // messages sent and not yet delivered
  TimePs retransmitTimeout_ = kDefaultRetransmitTimeoutPs;
  std::uint64_t retransmissions_ = 0;
  std::map<std::uint32_t, agent::TaskId> retransmitting_;  // by message id
};

}  // namespace ebb::sim
