#pragma once

// The shared rig of the collectives tests: what a set of per-rank programs
// sends (pairs, bytes, steps), and their replay on the emulator.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "agent/virtual_scheduler.h"
#include "fabric/kary_tree.h"
#include "sim_backend/fabric_emulator.h"
#include "sim_backend/mpi_replay.h"
#include "workload/collectives.h"

namespace ebb::sim::testing {

using RankPair = std::pair<std::uint32_t, std::uint32_t>;  // (src, dst)

// The traffic of a set of programs, read from the ops alone.
struct Traffic {
  std::map<RankPair, std::vector<std::int64_t>> msgs;  // every message's size, in order
  std::map<RankPair, std::int64_t> bytes;              // bytes sent per pair
  std::map<RankPair, int> count;                       // messages per pair
  std::vector<std::int64_t> sentBytes, recvBytes;      // per rank
  std::vector<int> sent;                               // messages sent per rank
  std::vector<int> steps;                              // waitalls per rank
  std::uint64_t sends = 0;
  std::uint64_t recvs = 0;
};

inline Traffic traffic(const workload::Programs& p) {
  Traffic t;
  t.sentBytes.assign(p.size(), 0);
  t.recvBytes.assign(p.size(), 0);
  t.sent.assign(p.size(), 0);
  t.steps.assign(p.size(), 0);
  for (std::uint32_t r = 0; r < p.size(); ++r) {
    for (const workload::MpiOp& op : p[r]) {
      if (op.kind == workload::MpiOpKind::kIsend) {
        t.msgs[{r, op.peer}].push_back(op.bytes);
        t.bytes[{r, op.peer}] += op.bytes;
        ++t.count[{r, op.peer}];
        t.sentBytes[r] += op.bytes;
        t.recvBytes[op.peer] += op.bytes;
        ++t.sent[r];
        ++t.sends;
      } else if (op.kind == workload::MpiOpKind::kIrecv) {
        ++t.recvs;
      } else if (op.kind == workload::MpiOpKind::kWaitall) {
        ++t.steps[r];
      }
    }
  }
  return t;
}

// Replays the programs on a k-ary n-tree (rank r on host r): they must
// complete with every message matched. Returns every delivery, in order.
inline std::vector<Delivery> replay(const workload::Programs& p, int k, int n) {
  const fabric::Topology topo = fabric::KAryNTree::make(k, n).value().build();
  agent::VirtualScheduler sched;
  FabricEmulator emu(topo, EmulatorConfig{}, sched);
  workload::MpiTrace t;
  t.ranks = p;
  std::vector<fabric::HostId> place;
  for (std::uint32_t r = 0; r < p.size(); ++r)
    place.push_back(fabric::HostId(r));
  MpiReplay mpi(emu, t, place);
  std::vector<Delivery> log;
  emu.onDelivery([&](const Delivery& d) {
    // Copy first: onDelivery sends more, and the emulator may move `d`.
    const Delivery copy = d;
    log.push_back(copy);
    mpi.onDelivery(copy);
  });
  mpi.start();
  sched.runAll();
  EXPECT_TRUE(mpi.done());
  EXPECT_EQ(mpi.messagesMatched(), mpi.messagesSent());
  return log;
}

}  // namespace ebb::sim::testing
