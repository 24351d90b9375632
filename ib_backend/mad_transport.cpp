#include "ib_backend/mad_transport.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

namespace ebb::ib {

Status TransportOptions::validate() const {
  // Named as the config fields (agent.<name>) that set them.
  if (timeoutPs <= 0) return {ErrorCode::kInvalidArgument, "mad_timeout_ms: must be > 0"};
  if (retries < 0 || retries > 20) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("mad_retries: must be in 0..20 (is {})", retries)};
  }
  if (maxOutstanding < 1 || maxOutstanding > 256) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("max_outstanding: must be in 1..256 (is {})", maxOutstanding)};
  }
  return Status::ok();
}

// Transaction ids start at a per-process value so that two ebb processes on
// one port do not take each other's replies for their own.
MadTransport::MadTransport(agent::Scheduler& scheduler, TransportOptions opts)
    : sched_(scheduler), opts_(opts), nextTid_(static_cast<std::uint32_t>(::getpid()) << 16) {
  if (Status s = opts_.validate(); !s.isOk()) throw Error(s);
}

MadTransport::~MadTransport() {
  for (auto& [key, p] : pending_)
    sched_.cancel(p.deadline);
}

void MadTransport::send(const MadAddress& to, const MadBytes& request, Done done, bool urgent) {
  Queued q{to, request, std::move(done)};
  if (pending_.size() >= static_cast<std::size_t>(opts_.maxOutstanding)) {
    (urgent ? urgent_ : queue_).push_back(std::move(q));
    stats_.queued = queuedCount();
    return;
  }
  start(std::move(q));
}

void MadTransport::start(Queued q) {
  std::uint32_t key = ++nextTid_;
  while (key == 0 || pending_.count(key))
    key = ++nextTid_;
  Pending& p = pending_[key];
  p.to = std::move(q.to);
  p.request = q.request;
  p.done = std::move(q.done);
  setTransactionId(p.request, key);
  stats_.outstanding = pending_.size();
  stats_.peakOutstanding = std::max(stats_.peakOutstanding, pending_.size());
  attempt(key);
}

void MadTransport::attempt(std::uint32_t key) {
  Pending& p = pending_.at(key);
  ++p.attempts;
  ++stats_.sent;
  if (Status s = transmit(p.to, p.request); !s.isOk()) {
    return finish(key, Status(ErrorCode::kUnavailable,
                              fmt::format("sending to {}: {}", p.to.toString(), s.message())));
  }
  p.deadline =
      sched_.after(opts_.timeoutPs, agent::Phase::kBackend, [this, key] { onDeadline(key); });
}

void MadTransport::onDeadline(std::uint32_t key) {
  auto it = pending_.find(key);
  if (it == pending_.end()) return;
  ++stats_.timeouts;
  if (it->second.attempts <= opts_.retries) return attempt(key);
  finish(key,
         Status(ErrorCode::kTimeout, fmt::format("no reply from {} after {} attempts",
                                                 it->second.to.toString(), it->second.attempts)));
}

void MadTransport::onReceive(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < 24) {  // not even a MAD header: no TID to match
    ++stats_.malformed;
    return;
  }
  MadBytes reply{};
  std::copy_n(bytes.begin(), std::min(bytes.size(), kMadBytes), reply.begin());
  const auto key = static_cast<std::uint32_t>(transactionId(reply) & 0xFFFFFFFFu);
  auto it = pending_.find(key);
  if (it == pending_.end()) {
    ++stats_.unmatched;
    return;
  }
  if (Status s = checkReply(it->second.request, bytes); !s.isOk()) {
    ++stats_.malformed;
    return finish(
        key, Status(ErrorCode::kInvalidArgument,
                    fmt::format("bad reply from {}: {}", it->second.to.toString(), s.message())));
  }
  finish(key, reply);
}

void MadTransport::finish(std::uint32_t key, Result<MadBytes> r) {
  auto it = pending_.find(key);
  Done done = std::move(it->second.done);
  sched_.cancel(it->second.deadline);
  pending_.erase(it);
  (r ? stats_.completed : stats_.failed) += 1;
  // Free slot first, so a callback that sends finds room.
  while (queuedCount() > 0 && pending_.size() < static_cast<std::size_t>(opts_.maxOutstanding)) {
    std::deque<Queued>& from = urgent_.empty() ? queue_ : urgent_;
    Queued q = std::move(from.front());
    from.pop_front();
    start(std::move(q));
  }
  stats_.outstanding = pending_.size();
  stats_.queued = queuedCount();
  done(std::move(r));
}

void MadTransport::failAll(const Status& why) {
  std::deque<Queued> queued;
  queued.swap(urgent_);
  for (Queued& q : queue_)
    queued.push_back(std::move(q));
  queue_.clear();
  std::vector<std::uint32_t> keys;
  for (const auto& [key, p] : pending_)
    keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  for (std::uint32_t key : keys) {
    auto it = pending_.find(key);
    Done done = std::move(it->second.done);
    sched_.cancel(it->second.deadline);
    pending_.erase(it);
    ++stats_.failed;
    done(why);
  }
  for (Queued& q : queued) {
    ++stats_.failed;
    q.done(why);
  }
  stats_.outstanding = pending_.size();
  stats_.queued = queuedCount();
}

}  // namespace ebb::ib
