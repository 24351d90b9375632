#include "sim_backend/mpi_replay.h"

#include <algorithm>

namespace ebb::sim {

MpiReplay::MpiReplay(FabricEmulator& emu, const workload::MpiTrace& trace,
                     std::vector<fabric::HostId> placement, std::uint32_t tagBase)
    : emu_(emu),
      trace_(trace),
      placement_(std::move(placement)),
      tagBase_(tagBase),
      ranks_(trace.ranks.size()),
      posted_(trace.ranks.size()),
      unexpected_(trace.ranks.size()) {}

MpiReplay::~MpiReplay() {
  for (const auto& [msg, task] : retransmitting_)
    emu_.scheduler().cancel(task);
}

void MpiReplay::start() {
  for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
    emu_.scheduler().at(emu_.scheduler().now(), agent::Phase::kControl, [this, r] { advance(r); });
  }
}

std::uint32_t MpiReplay::newRequest(std::uint32_t rank, bool outstanding) {
  const auto id = static_cast<std::uint32_t>(reqDone_.size());
  reqDone_.push_back(0);
  reqOwner_.push_back(rank);
  if (outstanding) ranks_[rank].outstanding.push_back(id);
  return id;
}

void MpiReplay::complete(std::uint32_t req) {
  reqDone_[req] = 1;
  const std::uint32_t rank = reqOwner_[req];
  if (ranks_[rank].blocked) {
    ranks_[rank].blocked = false;
    advance(rank);
  }
}

std::uint32_t MpiReplay::postSend(std::uint32_t rank, const workload::MpiOp& op, bool outstanding) {
  const std::uint32_t req = newRequest(rank, outstanding);
  const auto msg = static_cast<std::uint32_t>(inflight_.size());
  const std::int64_t bytes = std::max<std::int64_t>(op.bytes, 1);
  inflight_.push_back({rank, op.peer, op.tag, req, bytes, emu_.scheduler().now()});
  ++sent_;
  ++undelivered_;
  bytes_ += static_cast<std::uint64_t>(op.bytes);
  if (op.peer == rank) {  // a message to itself never touches the network
    onDelivery({tagBase_ + msg, placement_[rank], placement_[rank], op.bytes, 0, 0});
  } else {
    emu_.sendMessage(placement_[rank], placement_[op.peer], bytes, tagBase_ + msg);
  }
  return req;
}

std::uint32_t MpiReplay::postRecv(std::uint32_t rank, const workload::MpiOp& op, bool outstanding) {
  const std::uint32_t req = newRequest(rank, outstanding);
  auto& unexpected = unexpected_[rank];
  const auto key = std::make_pair(op.peer, op.tag);
  const auto it = unexpected.find(key);
  if (it != unexpected.end() && it->second > 0) {
    if (--it->second == 0) unexpected.erase(it);
    ++matched_;
    reqDone_[req] = 1;
  } else {
    posted_[rank][key].push_back(req);
  }
  return req;
}

std::uint32_t MpiReplay::takeNamed(std::uint32_t rank, std::uint32_t name) {
  Rank& r = ranks_[rank];
  std::uint32_t req = kNoReq;
  if (name == 0) {  // the most recent request (SimGrid's wait)
    if (!r.outstanding.empty()) req = r.outstanding.back();
  } else if (const auto it = r.named.find(name); it != r.named.end()) {
    req = it->second;
    r.named.erase(it);
  }
  if (req != kNoReq) {
    const auto it = std::find(r.outstanding.begin(), r.outstanding.end(), req);
    if (it != r.outstanding.end()) r.outstanding.erase(it);
  }
  return req;
}

void MpiReplay::advance(std::uint32_t rank) {
  if (stopped_) return;
  Rank& r = ranks_[rank];
  const auto& ops = trace_.ranks[rank];
  while (r.pc < ops.size()) {
    const workload::MpiOp& op = ops[r.pc];
    switch (op.kind) {
      case workload::MpiOpKind::kCompute:
        ++r.pc;
        emu_.scheduler().after(op.duration, agent::Phase::kControl,
                               [this, rank] { advance(rank); });
        return;
      case workload::MpiOpKind::kIsend:
      case workload::MpiOpKind::kIrecv: {
        const std::uint32_t req = op.kind == workload::MpiOpKind::kIsend ? postSend(rank, op, true)
                                                                         : postRecv(rank, op, true);
        if (op.count != 0) r.named[op.count] = req;
        ++r.pc;
        break;
      }
      case workload::MpiOpKind::kSend:
      case workload::MpiOpKind::kRecv:
      case workload::MpiOpKind::kWait: {
        // Blocking: post (or find) the request once, then wait until it completes.
        if (r.blockingReq == kNoReq) {
          r.blockingReq = op.kind == workload::MpiOpKind::kSend   ? postSend(rank, op, false)
                          : op.kind == workload::MpiOpKind::kRecv ? postRecv(rank, op, false)
                                                                  : takeNamed(rank, op.count);
        }
        if (r.blockingReq != kNoReq && !reqDone_[r.blockingReq]) {
          r.blocked = true;
          return;
        }
        r.blockingReq = kNoReq;  // a wait on no request returns at once, as in MPI
        ++r.pc;
        break;
      }
      case workload::MpiOpKind::kWaitall: {
        const std::size_t n = std::min<std::size_t>(op.count, r.outstanding.size());
        for (std::size_t i = 0; i < n; ++i) {
          if (!reqDone_[r.outstanding[i]]) {
            r.blocked = true;
            return;
          }
        }
        r.outstanding.erase(r.outstanding.begin(),
                            r.outstanding.begin() + static_cast<std::ptrdiff_t>(n));
        ++r.pc;
        break;
      }
    }
  }
  if (!r.finished) {
    r.finished = true;
    ++ranksDone_;
    finish_ = std::max(finish_, emu_.scheduler().now());
    if (done() && doneCb_) doneCb_();
  }
}

bool MpiReplay::onDrop(const Drop& drop) {
  const Delivery& d = drop.message;
  if (d.tag < tagBase_ || d.tag - tagBase_ >= inflight_.size()) return false;
  const std::uint32_t msg = d.tag - tagBase_;
  const InFlight& f = inflight_[msg];
  if (placement_[f.src] != d.src || placement_[f.dst] != d.dst) return false;
  if (stopped_) return true;  // an abandoned run: nobody waits for it
  agent::VirtualScheduler& sched = emu_.scheduler();
  const TimePs when = std::max(sched.now(), f.lastSent + retransmitTimeout_);
  retransmitting_[msg] = sched.at(when, agent::Phase::kControl, [this, msg, gated = drop.gated] {
    retransmitting_.erase(msg);
    InFlight& again = inflight_[msg];
    again.lastSent = emu_.scheduler().now();
    if (!gated) ++retransmissions_;  // what faults cost (a gating drop is the in-band report's)
    emu_.sendMessage(placement_[again.src], placement_[again.dst], again.bytes, tagBase_ + msg);
  });
  return true;
}

bool MpiReplay::onDelivery(const Delivery& d) {
  if (d.tag < tagBase_ || d.tag - tagBase_ >= inflight_.size()) return false;
  InFlight& arrived = inflight_[d.tag - tagBase_];
  if (placement_[arrived.src] != d.src || placement_[arrived.dst] != d.dst) return false;
  if (!arrived.delivered) {
    arrived.delivered = true;
    --undelivered_;
  }
  const InFlight f = arrived;
  complete(f.sendReq);
  auto& posted = posted_[f.dst];
  const auto key = std::make_pair(f.src, f.tag);
  const auto it = posted.find(key);
  if (it != posted.end() && !it->second.empty()) {
    const std::uint32_t req = it->second.front();
    it->second.pop_front();
    if (it->second.empty()) posted.erase(it);
    ++matched_;
    complete(req);
  } else {
    ++unexpected_[f.dst][key];
  }
  return true;
}

bool MpiReplay::deadlocked() const {
  if (stopped_ || done() || undelivered_ > 0) return false;
  for (const Rank& r : ranks_) {
    if (!r.finished && !r.blocked) return false;
  }
  return true;
}

std::vector<std::pair<std::uint32_t, const workload::MpiOp*>> MpiReplay::waitingRanks() const {
  std::vector<std::pair<std::uint32_t, const workload::MpiOp*>> out;
  for (std::uint32_t i = 0; i < ranks_.size(); ++i) {
    const Rank& r = ranks_[i];
    if (r.finished || !r.blocked || r.pc >= trace_.ranks[i].size()) continue;
    out.emplace_back(i, &trace_.ranks[i][r.pc]);
  }
  return out;
}

}  // namespace ebb::sim
