#include "workload/simgrid_trace.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "common/file_io.h"
#include "common/fs_util.h"
#include "workload/collectives.h"

namespace ebb::workload {

namespace {

namespace fs = std::filesystem;
constexpr std::int64_t kDouble = 8;
// Sizes (in doubles) and flops; times 8 bytes, sums over ranks and
// picoseconds of compute stay within 64 bits.
constexpr double kMaxArgument = 1e15;
// Picoseconds fit an int64 (TimePs) up to about 106 days.
constexpr double kMaxPs = 9.2e18;

struct Call {
  std::string op;  // lower case
  std::vector<std::int64_t> args;
  std::string where;
  int line = 0;
};

// The calls of `file` by rank, in file order. A folder's file holds one
// rank (`oneRank`); a trace given as one file may hold them all, as
// SimGrid's shared layout does.
Status parseFile(const fs::path& file, bool oneRank,
                 std::map<std::uint32_t, std::vector<Call>>& byRank) {
  std::uint32_t rank = 0;
  std::ifstream in(file);
  if (!in) return {ErrorCode::kIo, fmt::format("cannot open trace {}", file.string())};
  skipUtf8Bom(in);
  std::string line;
  int lineNo = 0;
  bool haveRank = false;
  for (bool tooLong = false;;) {
    const bool got = readBoundedLine(in, line, tooLong);
    if (tooLong) {
      return {ErrorCode::kParse,
              fmt::format("{}:{}: {}", file.string(), lineNo + 1, lineTooLongRule("trace"))};
    }
    if (!got) break;
    ++lineNo;
    if (const std::string rule = binaryLineRule(line, "trace"); !rule.empty())
      return {ErrorCode::kParse, fmt::format("{}:{}: {}", file.string(), lineNo, rule)};
    std::istringstream ss(line);
    std::string rankText, op;
    if (!(ss >> rankText)) continue;
    const std::string where = fmt::format("{}:{}", file.string(), lineNo);
    std::uint32_t r = 0;
    auto [p, ec] = std::from_chars(rankText.data(), rankText.data() + rankText.size(), r);
    if (ec != std::errc() || p != rankText.data() + rankText.size()) {
      return {ErrorCode::kParse,
              fmt::format("{}: rank '{}' is not a non-negative integer", where, rankText)};
    }
    if (oneRank && haveRank && r != rank) {
      return {ErrorCode::kParse, fmt::format("{}: rank {} in a file of rank {}", where, r, rank)};
    }
    rank = r;
    haveRank = true;
    if (!(ss >> op)) return {ErrorCode::kParse, fmt::format("{}: missing operation", where)};
    std::transform(op.begin(), op.end(), op.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    Call c{op, {}, where, lineNo};
    std::string a;
    while (ss >> a) {
      // Decimal only, as every number ebb reads (stod took 0x10 for 16).
      double v = 0;
      const auto [argEnd, argEc] = std::from_chars(a.data(), a.data() + a.size(), v);
      if (argEc != std::errc() || argEnd != a.data() + a.size()) {
        return {ErrorCode::kParse,
                fmt::format("{}: argument '{}' of {} is not a decimal number", where, a, op)};
      }
      if (v < 0 || !std::isfinite(v)) {
        return {ErrorCode::kParse,
                fmt::format("{}: argument '{}' of {} must be >= 0", where, a, op)};
      }
      // Found by fuzz/simgrid_ti_fuzz.cpp: a larger value wrapped to a
      // negative count on its way to 64-bit integers.
      if (v > kMaxArgument) {
        return {ErrorCode::kParse,
                fmt::format("{}: argument '{}' of {} is beyond {:g}", where, a, op, kMaxArgument)};
      }
      // Ranks, roots, sizes and counts are whole: 1.4 was read as rank 1.
      // Only a computation's flops may have a fraction (rounded).
      if (op != "compute" && v != std::floor(v)) {
        return {ErrorCode::kParse,
                fmt::format("{}: argument '{}' of {} must be a whole number", where, a, op)};
      }
      c.args.push_back(static_cast<std::int64_t>(std::llround(v)));
    }
    byRank[rank].push_back(std::move(c));
  }
  if (!haveRank) return {ErrorCode::kParse, fmt::format("{}: no operations", file.string())};
  return Status::ok();
}

bool isCollective(const std::string& op) {
  static const char* kOps[] = {"bcast",         "barrier",   "allreduce", "alltoall",
                               "alltoallv",     "gather",    "scatter",   "reduce",
                               "reducescatter", "allgather", "allgatherv"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

Status need(const Call& c, std::size_t n) {
  if (c.args.size() < n) {
    return {ErrorCode::kParse, fmt::format("{}: {} needs at least {} arguments (has {})", c.where,
                                           c.op, n, c.args.size())};
  }
  return Status::ok();
}

Status needOnEveryRank(const std::vector<const Call*>& calls, std::size_t n) {
  for (const Call* c : calls) {
    if (Status s = need(*c, n); !s.isOk()) return s;
  }
  return Status::ok();
}

// Argument `k` of a collective (`fallback` where a rank leaves it out) must be
// the same on every rank: MPI requires the same count and root on all of them.
Status sameOnEveryRank(const std::vector<const Call*>& calls, std::size_t k, std::int64_t fallback,
                       const char* what, std::int64_t& value) {
  const auto argOf = [&](const Call& c) { return c.args.size() > k ? c.args[k] : fallback; };
  value = argOf(*calls[0]);
  for (std::size_t r = 1; r < calls.size(); ++r) {
    if (argOf(*calls[r]) != value) {
      return {ErrorCode::kParse,
              fmt::format("{}: {} {} is {} where rank 0 gives {} ({}); every rank must give the "
                          "same",
                          calls[r]->where, calls[r]->op, what, argOf(*calls[r]), value,
                          calls[0]->where)};
    }
  }
  return Status::ok();
}

// Exactly one of `counts` arguments (SimGrid's forms of a per-pair
// collective: with or without datatypes, displacements): a line cut mid-way
// or run on would shift every count after it.
Status exactly(const Call& c, std::vector<std::size_t> counts, const char* form) {
  if (std::find(counts.begin(), counts.end(), c.args.size()) != counts.end()) return Status::ok();
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  std::string allowed;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (i > 0) allowed += i + 1 == counts.size() ? " or " : ", ";
    allowed += std::to_string(counts[i]);
  }
  return {ErrorCode::kParse, fmt::format("{}: {} takes {} arguments ({}), not {}", c.where, c.op,
                                         allowed, form, c.args.size())};
}

// The count rank `r` receives from rank `s` must be what `s` sends it: MPI
// requires the two sides to agree.
Status receiveAgrees(const Call& receiver, std::uint32_t r, std::int64_t received,
                     const Call& sender, std::uint32_t s, std::int64_t sent) {
  if (received == sent) return Status::ok();
  return {ErrorCode::kParse,
          fmt::format("{}: {} receive count from rank {} is {} where rank {} sends {} to rank {} "
                      "({}); the two sides must agree",
                      receiver.where, receiver.op, s, received, s, sent, r, sender.where)};
}

// The root of a rooted collective: argument `k`, 0 if left out, agreed by
// every rank and one of the trace's ranks.
Status rootOf(const std::vector<const Call*>& calls, std::size_t k, std::uint32_t& root) {
  std::int64_t value = 0;
  if (Status s = sameOnEveryRank(calls, k, 0, "root", value); !s.isOk()) return s;
  if (value < 0 || value >= static_cast<std::int64_t>(calls.size())) {
    return {ErrorCode::kParse, fmt::format("{}: {} root {} is not a rank of the trace (0..{})",
                                           calls[0]->where, calls[0]->op, value, calls.size() - 1)};
  }
  root = static_cast<std::uint32_t>(value);
  return Status::ok();
}

}  // namespace

Result<MpiTrace> readSimgridTrace(const std::string& path, double flopsPerS, SimgridStats* stats) {
  SimgridOptions o;
  o.flopsPerS = flopsPerS;
  return readSimgridTrace(path, o, stats);
}

Result<MpiTrace> readSimgridTrace(const std::string& path, const SimgridOptions& options,
                                  SimgridStats* stats) {
  const double flopsPerS = options.flopsPerS;
  const CollectiveAlgos& algos = options.algos;
  if (!(flopsPerS > 0)) return Status(ErrorCode::kInvalidArgument, "flops per second must be > 0");
  std::error_code ec;
  const fs::file_status kind = fs::status(path, ec);
  if (!fs::exists(kind)) {
    return Status(ErrorCode::kIo, fmt::format("cannot open trace {}{}", path,
                                              ec ? ": " + ec.message() : std::string()));
  }
  std::vector<fs::path> files;
  if (fs::is_directory(kind)) {
    Result<std::vector<fs::path>> listed =
        listRegularFiles(path, false, [](const fs::path& p) { return p.extension() == ".txt"; });
    if (!listed) return listed.status();
    files = std::move(*listed);
  } else {
    files.push_back(path);
  }
  if (files.empty()) return Status(ErrorCode::kIo, fmt::format("{}: no trace files (*.txt)", path));
  std::map<std::uint32_t, std::vector<Call>> byRank;
  std::map<std::uint32_t, std::string> fileOf;  // each rank's file
  const bool folder = fs::is_directory(kind);
  for (const fs::path& f : files) {
    std::map<std::uint32_t, std::vector<Call>> here;
    if (Status s = parseFile(f, folder, here); !s.isOk()) return s;
    for (auto& [rank, calls] : here) {
      if (byRank.count(rank)) {
        return Status(ErrorCode::kParse,
                      fmt::format("{}: rank {} appears in two files", f.string(), rank));
      }
      byRank[rank] = std::move(calls);
      fileOf[rank] = f.string();
    }
  }
  const auto P = static_cast<std::uint32_t>(byRank.size());
  if (byRank.rbegin()->first != P - 1) {
    // Ranks 0..max with a gap: name the first rank no file holds (a file
    // missing from the folder, or one that is not a trace).
    std::uint32_t missing = 0;
    while (byRank.count(missing))
      ++missing;
    if (!folder) {
      return Status(ErrorCode::kParse,
                    fmt::format("{}: no line of rank {} (the file holds {} ranks, the highest {}: "
                                "ranks must be 0..N-1)",
                                path, missing, P, byRank.rbegin()->first));
    }
    return Status(ErrorCode::kParse,
                  fmt::format("{}: no file holds rank {} (the files hold {} ranks, the highest "
                              "{}: ranks must be 0..N-1, one file each)",
                              path, missing, P, byRank.rbegin()->first));
  }
  MpiTrace t;
  t.ranks.resize(P);
  t.rankFiles.resize(P);
  for (const auto& [rank, file] : fileOf)
    t.rankFiles[rank] = file;
  SimgridStats st;
  std::vector<std::size_t> pos(P, 0);
  // Per rank: isends and irecvs not yet completed by a wait or waitall.
  std::vector<std::uint64_t> outstanding(P, 0);
  // `flops` of compute as time; an error when that does not fit a TimePs.
  const auto computePs = [&](const Call& c, std::int64_t flops, TimePs& ps) -> Status {
    const double v = static_cast<double>(flops) / flopsPerS * 1e12;
    if (!(v <= kMaxPs)) {
      return {ErrorCode::kParse,
              fmt::format("{}: {} flops at {:g} flops/s last beyond {:g} s, the longest time ebb "
                          "represents",
                          c.where, flops, flopsPerS, kMaxPs / 1e12)};
    }
    ps = static_cast<TimePs>(v);
    return Status::ok();
  };
  const auto computeUntilCollective = [&](std::uint32_t r) -> Status {
    auto& calls = byRank[r];
    while (pos[r] < calls.size() && !isCollective(calls[pos[r]].op)) {
      const Call& c = calls[pos[r]];
      if (c.op == "compute") {
        if (Status s = need(c, 1); !s.isOk()) return s;
        st.computeFlops += static_cast<std::uint64_t>(c.args[0]);
        TimePs ps = 0;
        if (Status s = computePs(c, c.args[0], ps); !s.isOk()) return s;
        if (ps > 0) t.ranks[r].push_back({MpiOpKind::kCompute, ps, 0, 0, 0, 0});
      } else if (c.op == "send" || c.op == "recv" || c.op == "isend" || c.op == "irecv") {
        // "<peer> <size>" or "<peer> <tag> <size>" (newer SimGrid).
        if (Status s = need(c, 2); !s.isOk()) return s;
        if (c.args[0] < 0 || c.args[0] >= static_cast<std::int64_t>(P)) {
          return {
              ErrorCode::kParse,
              fmt::format("{}: peer rank {} is not a rank of the trace (it has {} ranks, 0..{})",
                          c.where, c.args[0], P, P - 1)};
        }
        if (c.args[0] == static_cast<std::int64_t>(r)) {
          return {ErrorCode::kParse,
                  fmt::format("{}: rank {} names itself as its peer", c.where, r)};
        }
        const std::int64_t size = c.args[c.args.size() >= 3 ? 2 : 1];
        if (size < 0 || size > std::numeric_limits<std::int64_t>::max() / kDouble) {
          return {ErrorCode::kParse,
                  fmt::format("{}: size {} is not a count of doubles ebb can represent", c.where,
                              size)};
        }
        MpiOp op;
        op.kind = c.op == "send"    ? MpiOpKind::kSend
                  : c.op == "recv"  ? MpiOpKind::kRecv
                  : c.op == "isend" ? MpiOpKind::kIsend
                                    : MpiOpKind::kIrecv;
        op.peer = static_cast<std::uint32_t>(c.args[0]);
        const bool tagged = c.args.size() >= 3;
        // Kept exact: clamped at 2^30, two tags became one and sends were
        // matched to the wrong receives.
        if (tagged && c.args[1] > std::numeric_limits<std::int32_t>::max()) {
          return {ErrorCode::kParse,
                  fmt::format("{}: tag {} is beyond {}, the largest MPI tag ebb represents",
                              c.where, c.args[1], std::numeric_limits<std::int32_t>::max())};
        }
        op.tag = tagged ? static_cast<std::int32_t>(c.args[1]) : 0;
        op.bytes = c.args[tagged ? 2 : 1] * kDouble;
        op.line = static_cast<std::uint32_t>(c.line);
        t.ranks[r].push_back(op);
        if (op.kind == MpiOpKind::kIsend || op.kind == MpiOpKind::kIrecv) ++outstanding[r];
      } else if (c.op == "wait") {
        // As AMG traces refuse a waitall beyond what is outstanding: a wait
        // with nothing to wait for is a lost isend/irecv, not a no-op.
        if (outstanding[r] == 0) {
          return {
              ErrorCode::kParse,
              fmt::format("{}: wait but rank {} has no isend or irecv outstanding", c.where, r)};
        }
        --outstanding[r];
        t.ranks[r].push_back({MpiOpKind::kWait, 0, 0, 0, 0, 0});
      } else if (c.op == "waitall") {
        outstanding[r] = 0;
        t.ranks[r].push_back({MpiOpKind::kWaitall, 0, 0, 0, 0, 0xFFFFFFFF});
      } else if (c.op != "init" && c.op != "finalize" && c.op != "comm_size") {
        return {ErrorCode::kParse, fmt::format("{}: unknown operation '{}'", c.where, c.op)};
      }
      ++pos[r];
    }
    return Status::ok();
  };
  for (std::int32_t instance = 1;; ++instance) {
    for (std::uint32_t r = 0; r < P; ++r) {
      if (Status s = computeUntilCollective(r); !s.isOk()) return s;
    }
    const bool anyLeft = pos[0] < byRank[0].size();
    for (std::uint32_t r = 0; r < P; ++r) {
      if ((pos[r] < byRank[r].size()) != anyLeft) {
        return Status(ErrorCode::kParse, fmt::format("{}: rank {} has {} collectives than rank 0",
                                                     path, r, anyLeft ? "fewer" : "more"));
      }
    }
    if (!anyLeft) break;
    const Call& c0 = byRank[0][pos[0]];
    std::vector<const Call*> calls(P);
    for (std::uint32_t r = 0; r < P; ++r) {
      calls[r] = &byRank[r][pos[r]];
      if (calls[r]->op != c0.op) {
        return Status(ErrorCode::kParse,
                      fmt::format("{}: rank {} calls {} where rank 0 calls {} ({})",
                                  calls[r]->where, r, calls[r]->op, c0.op, c0.where));
      }
      ++pos[r];
    }
    const std::int32_t tag = -instance;
    ++st.collectives;
    const std::string& op = c0.op;
    const auto expand = [&](const std::string& name, std::int64_t count,
                            std::uint32_t root) -> Status {
      Status s = expandCollective(t.ranks, algos, name, count * kDouble, tag, root);
      if (!s.isOk()) return {ErrorCode::kParse, fmt::format("{}: {}", c0.where, s.message())};
      return s;
    };
    if (op == "barrier") {
      if (Status s = expand("barrier", 0, 0); !s.isOk()) return s;
    } else if (op == "bcast" || op == "reduce") {
      // bcast <count> [root]; reduce <count> <flops> [root]
      if (Status s = needOnEveryRank(calls, 1); !s.isOk()) return s;
      std::uint32_t root = 0;
      std::int64_t count = 0;
      if (Status s = rootOf(calls, op == "bcast" ? 1 : 2, root); !s.isOk()) return s;
      if (Status s = sameOnEveryRank(calls, 0, 0, "count", count); !s.isOk()) return s;
      if (Status s = expand(op, count, root); !s.isOk()) return s;
    } else if (op == "allreduce") {
      if (Status s = needOnEveryRank(calls, 1); !s.isOk()) return s;
      std::int64_t count = 0;
      if (Status s = sameOnEveryRank(calls, 0, 0, "count", count); !s.isOk()) return s;
      if (Status s = expand("allreduce", count, 0); !s.isOk()) return s;
      // The reduction's own computation (second argument, flops).
      for (std::uint32_t r = 0; r < P; ++r) {
        if (calls[r]->args.size() > 1 && calls[r]->args[1] > 0) {
          TimePs ps = 0;
          if (Status s = computePs(*calls[r], calls[r]->args[1], ps); !s.isOk()) return s;
          t.ranks[r].push_back({MpiOpKind::kCompute, ps, 0, 0, 0, 0});
        }
      }
    } else if (op == "alltoall") {
      if (Status s = needOnEveryRank(calls, 1); !s.isOk()) return s;
      std::int64_t count = 0;
      if (Status s = sameOnEveryRank(calls, 0, 0, "count", count); !s.isOk()) return s;
      if (Status s = expand("alltoall", count, 0); !s.isOk()) return s;
    } else if (op == "gather" || op == "scatter") {
      // <sendcount> <recvcount> [root]
      if (Status s = needOnEveryRank(calls, 1); !s.isOk()) return s;
      std::uint32_t root = 0;
      std::int64_t count = 0;
      if (Status s = rootOf(calls, 2, root); !s.isOk()) return s;
      if (Status s = sameOnEveryRank(calls, 0, 0, "send count", count); !s.isOk()) return s;
      if (Status s = expand(op, count, root); !s.isOk()) return s;
    } else {
      // SimGrid's forms (its replay's parsers), per-pair sizes, pairwise exchange:
      // alltoallv: <sendsize> <P sendcounts> <recvsize> <P recvcounts> [2 datatypes];
      // reducescatter: <P recvcounts> <flops> [datatype];
      // allgatherv: <sendcount> <P recvcounts> [P displacements] [2 datatypes];
      // allgather: <sendcount> ... (as alltoall).
      std::vector<std::vector<std::int64_t>> sizes(P, std::vector<std::int64_t>(P, 0));
      for (std::uint32_t r = 0; r < P; ++r) {
        const Call& c = *calls[r];
        if (op == "alltoallv") {
          if (Status s = exactly(c, {2 * P + 2, 2 * P + 4},
                                 "<send size> <a send count per rank> <receive size> <a receive "
                                 "count per rank> [<send type> <receive type>]");
              !s.isOk()) {
            return s;
          }
          for (std::uint32_t d = 0; d < P; ++d)
            sizes[r][d] = c.args[1 + d] * kDouble;
        } else if (op == "reducescatter") {
          if (Status s =
                  exactly(c, {P + 1, P + 2}, "<a receive count per rank> <flops> [<datatype>]");
              !s.isOk()) {
            return s;
          }
          for (std::uint32_t d = 0; d < P; ++d)
            sizes[r][d] = c.args[d] * kDouble;
        } else if (op == "allgatherv") {
          if (Status s = exactly(c, {P + 1, P + 3, 2 * P + 1, 2 * P + 3},
                                 "<send count> <a receive count per rank> [<a displacement per "
                                 "rank>] [<send type> <receive type>]");
              !s.isOk()) {
            return s;
          }
          for (std::uint32_t d = 0; d < P; ++d)
            sizes[r][d] = c.args[0] * kDouble;
        } else {  // allgather: every rank sends its count to every other
          if (Status s = need(c, 1); !s.isOk()) return s;
          for (std::uint32_t d = 0; d < P; ++d)
            sizes[r][d] = c.args[0] * kDouble;
        }
      }
      // What each rank says it receives must be what its peers send it.
      for (std::uint32_t r = 0; r < P; ++r) {
        const Call& c = *calls[r];
        for (std::uint32_t s = 0; s < P; ++s) {
          Status ok = Status::ok();
          if (op == "alltoallv") {
            ok = receiveAgrees(c, r, c.args[P + 2 + s], *calls[s], s, calls[s]->args[1 + r]);
          } else if (op == "allgatherv") {
            ok = receiveAgrees(c, r, c.args[1 + s], *calls[s], s, calls[s]->args[0]);
          } else if (op == "reducescatter") {
            // MPI_Reduce_scatter: the same receive counts on every rank.
            std::int64_t count = 0;
            ok = sameOnEveryRank(calls, s, 0, fmt::format("receive count {}", s).c_str(), count);
          }
          if (!ok.isOk()) return ok;
        }
      }
      alltoallvPairwise(t.ranks, sizes, tag);
    }
  }
  // As for AMG traces: a send no rank receives (a truncated set of rank
  // files) would replay as if delivered.
  if (Status s = checkSendsMatchReceives(t, path); !s.isOk()) return s;
  // As in AMG traces: a receive smaller than its send would fail in MPI.
  if (Status s = checkReceivesHoldTheirSends(t, path); !s.isOk()) return s;
  t.countOps();
  if (stats) *stats = st;
  return t;
}

}  // namespace ebb::workload
