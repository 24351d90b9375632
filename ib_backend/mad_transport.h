#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <unordered_map>

#include "agent/scheduler.h"
#include "common/status.h"
#include "ib_backend/mad.h"

namespace ebb::ib {

struct TransportOptions {
  TimePs timeoutPs = 200'000'000'000;  // 200 ms per attempt
  int retries = 2;                     // resends after the first timeout
  int maxOutstanding = 16;             // MADs in flight; more wait in a queue
  Status validate() const;
};

struct TransportStats {
  std::uint64_t sent = 0;       // transmissions, retries included
  std::uint64_t completed = 0;  // requests answered with a good reply
  std::uint64_t failed = 0;     // requests that ended in an error
  std::uint64_t timeouts = 0;   // attempts that timed out
  std::uint64_t malformed = 0;  // replies that failed checkReply or were too short
  std::uint64_t unmatched = 0;  // replies with no pending transaction
  std::size_t outstanding = 0;  // in flight now
  std::size_t queued = 0;       // waiting for a free slot now
  std::size_t peakOutstanding = 0;
};

// Sends MADs and matches their replies by transaction id, with a bound on
// MADs outstanding, per-attempt deadlines and retries on the Scheduler. The
// wire is a subclass: UmadTransport (libibumad) or FakeMadTransport (tests).
// Every callback runs on the scheduler's thread.
class MadTransport {
 public:
  using Done = std::function<void(Result<MadBytes>)>;
  virtual ~MadTransport();
  MadTransport(const MadTransport&) = delete;
  MadTransport& operator=(const MadTransport&) = delete;

  // `done` gets the reply once checkReply() accepts it; E_INVALID for a bad
  // reply (not retried), E_TIMEOUT after the last retry, E_UNAVAILABLE when
  // the wire failed or the transport was closed.
  // An `urgent` request (a port Set, say) waits ahead of routine ones (counter
  // reads) when all slots are taken.
  void send(const MadAddress& to, const MadBytes& request, Done done, bool urgent = false);
  // Fails every pending and queued request with `why` (e.g. at shutdown).
  void failAll(const Status& why);
  const TransportStats& stats() const { return stats_; }
  const TransportOptions& options() const { return opts_; }

 protected:
  MadTransport(agent::Scheduler& scheduler, TransportOptions opts);
  // Puts one MAD on the wire; an error fails that request at once.
  virtual Status transmit(const MadAddress& to, const MadBytes& mad) = 0;
  // A MAD arrived (any length: it is checked here).
  void onReceive(std::span<const std::uint8_t> bytes);
  agent::Scheduler& scheduler() { return sched_; }

 private:
  struct Pending {
    MadAddress to;
    MadBytes request;
    Done done;
    int attempts = 0;
    agent::TaskId deadline;
  };
  struct Queued {
    MadAddress to;
    MadBytes request;
    Done done;
  };
  void start(Queued q);
  void attempt(std::uint32_t key);
  void onDeadline(std::uint32_t key);
  void finish(std::uint32_t key, Result<MadBytes> r);

  agent::Scheduler& sched_;
  TransportOptions opts_;
  TransportStats stats_;
  std::uint32_t nextTid_;
  std::unordered_map<std::uint32_t, Pending> pending_;  // by low 32 bits of the TID
  std::size_t queuedCount() const { return urgent_.size() + queue_.size(); }
  std::deque<Queued> urgent_;
  std::deque<Queued> queue_;
};

}  // namespace ebb::ib
