#include "workload/otf2_collective_match.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <queue>

namespace ebb::workload::otf2 {

Result<MpiTrace> assembleRanks(const std::string& anchor, std::vector<RankLog>& logs,
                               const Communicators& comms, const CollectiveAlgos& algos,
                               std::uint64_t& collectives) {
  const auto P = static_cast<std::uint32_t>(logs.size());
  MpiTrace t;
  t.ranks.resize(P);
  for (std::uint32_t r = 0; r < P; ++r) {
    // An irecv that never completed (cancelled): drop it.
    for (const auto& [req, index] : logs[r].pendingIrecv)
      logs[r].ops[index] = {MpiOpKind::kCompute, 0, 0, 0, 0, 0};
  }
  // One instance per (communicator, k): the k-th collective of every member.
  struct Instance {
    const Communicator* comm = nullptr;
    std::vector<std::size_t> of;  // per member: its index in the member's log
    std::size_t arrived = 0;      // members whose next collective this is
  };
  std::vector<Instance> instances;
  std::map<OTF2_CommRef, std::size_t> base;                     // the communicator's first instance
  std::vector<std::map<OTF2_CommRef, std::size_t> > counts(P);  // per rank and communicator
  for (std::uint32_t r = 0; r < P; ++r) {
    for (const auto& [index, col] : logs[r].collectives)
      ++counts[r][col.comm];
  }
  for (const auto& [ref, c] : comms.resolved()) {
    if (c.self || c.members.empty()) continue;
    const auto countOf = [&, ref = ref](std::uint32_t m) {
      const auto it = counts[m].find(ref);
      return it == counts[m].end() ? std::size_t{0} : it->second;
    };
    const std::size_t count = countOf(c.members[0]);
    for (const std::uint32_t m : c.members) {
      if (countOf(m) != count) {
        return Status(ErrorCode::kParse,
                      fmt::format("{}: {}: rank {} has {} collectives on it, rank {} has {}; "
                                  "every member must call the same",
                                  anchor, c.name, m, countOf(m), c.members[0], count));
      }
    }
    base[ref] = instances.size();
    for (std::size_t k = 0; k < count; ++k)
      instances.push_back({&c, std::vector<std::size_t>(c.members.size()), 0});
  }
  // Each rank's collectives as instances, in its order.
  std::vector<std::vector<std::size_t> > sequence(P);
  for (std::uint32_t r = 0; r < P; ++r) {
    std::map<OTF2_CommRef, std::size_t> seen;
    for (std::size_t j = 0; j < logs[r].collectives.size(); ++j) {
      const OTF2_CommRef ref = logs[r].collectives[j].second.comm;
      const std::size_t id = base.at(ref) + seen[ref]++;
      instances[id].of[instances[id].comm->indexOf.at(r)] = j;
      sequence[r].push_back(id);
    }
  }
  std::vector<std::size_t> pos(P, 0), next(P, 0);
  const auto copyUntil = [&](std::uint32_t r, std::size_t end) {
    for (; pos[r] < end; ++pos[r])
      t.ranks[r].push_back(logs[r].ops[pos[r]]);
  };
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<> > ready;
  const auto arrive = [&](std::uint32_t r) {
    if (next[r] == sequence[r].size()) return;
    Instance& in = instances[sequence[r][next[r]]];
    if (++in.arrived == in.comm->members.size()) ready.push(sequence[r][next[r]]);
  };
  for (std::uint32_t r = 0; r < P; ++r)
    arrive(r);
  std::size_t done = 0;
  while (!ready.empty()) {
    // The lowest ready instance first: one communicator's instances keep
    // their order, and MPI_COMM_WORLD's tags are the collective's number.
    const std::size_t id = ready.top();
    ready.pop();
    const Instance& in = instances[id];
    const Communicator& c = *in.comm;
    const auto size = static_cast<std::uint32_t>(c.members.size());
    const std::uint32_t r0 = c.members[0];
    const Collective& c0 = logs[r0].collectives[in.of[0]].second;
    std::uint64_t bytes = 0;
    for (std::uint32_t i = 0; i < size; ++i) {
      const std::uint32_t r = c.members[i];
      const auto& [index, col] = logs[r].collectives[in.of[i]];
      if (col.op != c0.op) {
        return Status(ErrorCode::kParse,
                      fmt::format("{}: {}: collective {} on {} is {} on rank {} but {} on rank {} "
                                  "({})",
                                  anchor, col.where, id - base.at(col.comm) + 1, c.name, col.op, r,
                                  c0.op, r0, c0.where));
      }
      if (col.root != c0.root) {
        return Status(
            ErrorCode::kParse,
            fmt::format("{}: {}: {} root on {} is {} where rank {} gives {} ({}); every "
                        "member must give the same",
                        anchor, col.where, col.op, c.name, col.root, r0, c0.root, c0.where));
      }
      copyUntil(r, index);
      // Per-pair bytes from the recorded totals.
      const std::uint64_t sent = col.op == "alltoall" || col.op == "allgather"
                                     ? col.sent / std::max<std::uint32_t>(size, 1)
                                 : col.op == "bcast" || col.op == "scatter" ? col.received
                                                                            : col.sent;
      bytes = std::max(bytes, sent);
    }
    if (size > 1) {
      Status s =
          expandCollectiveOver(t.ranks, c.members, algos, c0.op == "allgather" ? "alltoall" : c0.op,
                               static_cast<std::int64_t>(bytes), -static_cast<std::int32_t>(id + 1),
                               c.indexOf.at(c.peers[c0.root]));
      if (!s.isOk()) {
        return Status(ErrorCode::kParse, fmt::format("{}: {}: {} on {}: {}", anchor, c0.where,
                                                     c0.op, c.name, s.message()));
      }
    }
    ++done;
    for (const std::uint32_t r : c.members) {
      ++next[r];
      arrive(r);
    }
  }
  if (done < instances.size()) {
    // Members reach their collectives on different communicators in orders
    // that wait for each other: MPI would deadlock too.
    for (std::uint32_t r = 0; r < P; ++r) {
      if (next[r] == sequence[r].size()) continue;
      const Instance& in = instances[sequence[r][next[r]]];
      const Collective& col = logs[r].collectives[in.of[in.comm->indexOf.at(r)]].second;
      for (std::uint32_t i = 0; i < in.comm->members.size(); ++i) {
        const std::uint32_t m = in.comm->members[i];
        if (next[m] < sequence[m].size() && sequence[m][next[m]] == sequence[r][next[r]]) continue;
        std::string other = fmt::format("rank {} has no collective left", m);
        if (next[m] < sequence[m].size()) {
          const Instance& at = instances[sequence[m][next[m]]];
          const Collective& oc = logs[m].collectives[at.of[at.comm->indexOf.at(m)]].second;
          other =
              fmt::format("rank {} first calls {} on {} ({})", m, oc.op, at.comm->name, oc.where);
        }
        return Status(ErrorCode::kParse,
                      fmt::format("{}: {}: {} on {} never runs: {}; the ranks call their "
                                  "collectives on different communicators in orders that wait "
                                  "for each other",
                                  anchor, col.where, col.op, in.comm->name, other));
      }
    }
    return Status(ErrorCode::kParse, fmt::format("{}: collectives that never run", anchor));
  }
  for (std::uint32_t r = 0; r < P; ++r)
    copyUntil(r, logs[r].ops.size());
  if (Status s = checkSendsMatchReceives(t, anchor); !s.isOk()) return s;
  collectives = instances.size();
  t.countOps();
  return t;
}

}  // namespace ebb::workload::otf2
