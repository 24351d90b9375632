// Collective algorithms chosen by name (config, command line) and the
// expansion of one named collective into the ranks' programs.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "workload/collectives.h"

namespace ebb::workload {

namespace {

template <class E>
Status pick(const std::map<std::string, E>& names, const std::string& op, const std::string& name,
            E& out) {
  const auto it = names.find(name);
  if (it != names.end()) {
    out = it->second;
    return Status::ok();
  }
  std::string choices;
  for (const auto& [n, v] : names)
    choices += (choices.empty() ? "" : ", ") + n;
  return {ErrorCode::kInvalidArgument,
          fmt::format("unknown {} algorithm '{}' (choices: {})", op, name, choices)};
}

const std::map<std::string, ReduceAlgo>& reduceNames() {
  static const std::map<std::string, ReduceAlgo> m = {
      {"gather-to-root", ReduceAlgo::kGatherToRoot},
      {"binomial", ReduceAlgo::kBinomial},
      {"ring", ReduceAlgo::kRing},
      {"recursive-doubling", ReduceAlgo::kRecursiveDoubling},
      {"reduce-scatter-allgather", ReduceAlgo::kReduceScatterAllgather},
      {"ggas-read", ReduceAlgo::kGgasRead},
      {"ggas-write", ReduceAlgo::kGgasWrite},
      {"ggas-allgather", ReduceAlgo::kGgasAllgather},
      {"ggas-work-share", ReduceAlgo::kGgasWorkShare}};
  return m;
}

}  // namespace

Status setAlgorithm(CollectiveAlgos& a, const std::string& op, const std::string& name) {
  static const std::map<std::string, AlltoallAlgo> alltoall = {
      {"pairwise", AlltoallAlgo::kPairwise},
      {"socket-phased", AlltoallAlgo::kSocketPhased},
      {"bruck", AlltoallAlgo::kBruck}};
  static const std::map<std::string, AllgatherAlgo> allgather = {{"ring", AllgatherAlgo::kRing},
                                                                 {"bruck", AllgatherAlgo::kBruck}};
  static const std::map<std::string, ReduceScatterAlgo> reduceScatterNames = {
      {"ring", ReduceScatterAlgo::kRing},
      {"recursive-halving", ReduceScatterAlgo::kRecursiveHalving}};
  static const std::map<std::string, int> alltoallv = {{"pairwise", 0}};
  static const std::map<std::string, BcastAlgo> bcast = {
      {"binomial", BcastAlgo::kBinomial}, {"scatter-allgather", BcastAlgo::kScatterAllgather}};
  static const std::map<std::string, RootedAlgo> rootedNames = {
      {"linear", RootedAlgo::kLinear}, {"segmented", RootedAlgo::kSegmented}};
  if (op == "alltoall") return pick(alltoall, op, name, a.alltoall);
  if (op == "bcast") return pick(bcast, op, name, a.bcast);
  if (op == "gather") return pick(rootedNames, op, name, a.gather);
  if (op == "scatter") return pick(rootedNames, op, name, a.scatter);
  if (op == "reduce") return pick(reduceNames(), op, name, a.reduce);
  if (op == "allreduce") return pick(reduceNames(), op, name, a.allreduce);
  if (op == "allgather") return pick(allgather, op, name, a.allgather);
  if (op == "reduce_scatter") return pick(reduceScatterNames, op, name, a.reduceScatter);
  if (op == "alltoallv") {
    int only = 0;
    return pick(alltoallv, op, name, only);
  }
  return {ErrorCode::kInvalidArgument,
          fmt::format("unknown collective '{}' (alltoall, alltoallv, allgather, reduce_scatter, "
                      "bcast, gather, scatter, reduce, allreduce)",
                      op)};
}

Status parseAlgorithms(CollectiveAlgos& a, const std::string& list) {
  std::size_t start = 0;
  std::vector<std::string> ops;  // each named once: a second would silently win
  while (start < list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(start, end - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return {ErrorCode::kInvalidArgument,
              fmt::format("collective algorithm '{}': expected op=algorithm", item)};
    }
    const std::string op = item.substr(0, eq);
    if (std::find(ops.begin(), ops.end(), op) != ops.end()) {
      return {ErrorCode::kInvalidArgument,
              fmt::format("collective algorithm '{}': {} is named twice in '{}'", item, op, list)};
    }
    ops.push_back(op);
    if (Status s = setAlgorithm(a, op, item.substr(eq + 1)); !s.isOk()) return s;
    start = end + 1;
  }
  return Status::ok();
}

Status expandCollective(Programs& p, const CollectiveAlgos& a, const std::string& op,
                        std::int64_t bytes, std::int32_t tag, std::uint32_t root) {
  if (bytes < 0) return {ErrorCode::kInvalidArgument, "collective size must be >= 0"};
  // Algorithms multiply the size by up to P (Bruck's rounds, gathers):
  // refuse what would wrap long before any message limit could see it.
  if (static_cast<double>(bytes) * static_cast<double>(std::max<std::size_t>(1, p.size())) >
      0x1.0p62) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("collective size {} bytes on {} ranks is beyond any message ebb replays",
                        bytes, p.size())};
  }
  if (!p.empty()) root %= static_cast<std::uint32_t>(p.size());
  if (op == "alltoall") {
    if (a.alltoall == AlltoallAlgo::kSocketPhased) {
      return alltoallSocketPhased(p, bytes, a.coresPerNode, tag);
    }
    (a.alltoall == AlltoallAlgo::kBruck ? alltoallBruck : alltoallPairwise)(p, bytes, tag);
  } else if (op == "alltoallv") {
    // Sizes drawn per instance: the tag tells instances apart.
    alltoallvDrawn(p, bytes, static_cast<std::uint64_t>(static_cast<std::int64_t>(tag)) * 7919u,
                   tag);
  } else if (op == "allgather") {
    if (a.allgather == AllgatherAlgo::kBruck) {
      allgatherBruck(p, bytes, tag);
    } else {
      allgatherRing(p, std::vector<std::int64_t>(p.size(), bytes), tag);
    }
  } else if (op == "reduce_scatter") {
    reduceScatter(p, a.reduceScatter, bytes, tag);
  } else if (op == "bcast") {
    (a.bcast == BcastAlgo::kScatterAllgather ? bcastScatterAllgather : bcastBinomial)(p, root,
                                                                                      bytes, tag);
  } else if (op == "gather") {
    if (a.gather == RootedAlgo::kSegmented) {
      gatherSegmented(p, root, bytes, a.m1, a.m2, tag);
    } else {
      gatherLinear(p, root, bytes, tag);
    }
  } else if (op == "scatter") {
    if (a.scatter == RootedAlgo::kSegmented) {
      scatterSegmented(p, root, bytes, a.s, tag);
    } else {
      scatterLinear(p, root, bytes, tag);
    }
  } else if (op == "reduce") {
    reduce(p, a.reduce, root, bytes, tag);
  } else if (op == "allreduce") {
    allreduce(p, a.allreduce, bytes, tag);
  } else if (op == "barrier") {
    barrier(p, tag);
  } else {
    return {ErrorCode::kInvalidArgument,
            fmt::format("unknown collective '{}' (alltoall, alltoallv, allgather, "
                        "reduce_scatter, bcast, gather, scatter, reduce, allreduce, barrier)",
                        op)};
  }
  return Status::ok();
}

std::uint64_t collectiveMessagesAtLeast(const CollectiveAlgos& a, const std::string& op,
                                        std::uint32_t ranks) {
  if (ranks < 2) return 0;
  const std::uint64_t n = ranks;
  // Every pair, or a tree's worth.
  const auto pairs = [n](bool everyPair) { return everyPair ? n * (n - 1) : n - 1; };
  const auto quadratic = [](ReduceAlgo r, bool all) {
    // reduce's ggas-allgather is ggas-write; only allreduce's readers read all.
    return r == ReduceAlgo::kRing || r == ReduceAlgo::kGgasWorkShare ||
           (all && (r == ReduceAlgo::kGgasRead || r == ReduceAlgo::kGgasAllgather));
  };
  if (op == "alltoall") return pairs(a.alltoall != AlltoallAlgo::kBruck);
  if (op == "alltoallv") return pairs(true);
  if (op == "allgather") return pairs(a.allgather == AllgatherAlgo::kRing);
  if (op == "reduce_scatter") return pairs(a.reduceScatter == ReduceScatterAlgo::kRing);
  if (op == "bcast") return pairs(a.bcast == BcastAlgo::kScatterAllgather);
  if (op == "reduce") return pairs(quadratic(a.reduce, false));
  if (op == "allreduce") return pairs(quadratic(a.allreduce, true));
  return pairs(false);  // gather, scatter, barrier
}

}  // namespace ebb::workload
