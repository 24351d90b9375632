#include "workload/mpi_trace.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "common/file_io.h"

namespace ebb::workload {

namespace {

std::vector<std::string> splitCsv(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

// About 106 days: picoseconds up to it fit an int64 (TimePs).
constexpr double kMaxSeconds = 9.2e6;

struct Row {
  std::uint32_t rank;
  MpiOp op;
  double enter;
  double exit;
};

bool isSend(MpiOpKind k) {
  return k == MpiOpKind::kIsend || k == MpiOpKind::kSend;
}
bool isRecv(MpiOpKind k) {
  return k == MpiOpKind::kIrecv || k == MpiOpKind::kRecv;
}

// Read-time check of a whole AMG trace: every peer is a rank of the trace.
Status checkPeers(const std::vector<Row>& rows, const std::vector<bool>& present,
                  const std::string& path) {
  const auto at = [&](const Row& r, const std::string& rule) {
    return Status(ErrorCode::kParse, fmt::format("{}:{}: {}", path, r.op.line, rule));
  };
  std::uint32_t ranks = 0;
  for (std::size_t i = 0; i < present.size(); ++i)
    ranks += present[i] ? 1u : 0u;
  for (const Row& r : rows) {
    if (!isSend(r.op.kind) && !isRecv(r.op.kind)) continue;
    if (r.op.peer >= present.size() || !present[r.op.peer]) {
      // Rank ids may have gaps: "0..N" alone read as if the peer were in it.
      const bool gaps = ranks != present.size();
      return at(r, fmt::format("peer {} is not a rank of the trace (it has {} ranks, {}0..{}{})",
                               r.op.peer, ranks, gaps ? "ids in " : "", present.size() - 1,
                               gaps ? fmt::format(", and no line of rank {}", r.op.peer) : ""));
    }
    if (r.op.peer == r.rank) {
      return at(r, fmt::format("rank {} names itself as its peer", r.rank));
    }
  }
  return Status::ok();
}

}  // namespace

Result<MpiTrace> readAmgCsv(const std::string& path) {
  if (Status s = checkReadableFile(path, "trace"); !s.isOk()) return s;
  std::ifstream in(path);
  if (!in) return Status(ErrorCode::kIo, fmt::format("cannot open trace {}", path));
  skipUtf8Bom(in);
  std::string line;
  int lineNo = 0;
  const auto bad = [&](const std::string& rule) {
    return Status(ErrorCode::kParse, fmt::format("{}:{}: {}", path, lineNo, rule));
  };
  std::vector<Row> rows;
  std::uint32_t maxRank = 0;
  // Per rank: where its previous call ended (time and line), to keep order.
  std::map<std::uint32_t, std::pair<double, int>> previous;
  // Per rank: its isends and irecvs not yet completed by a waitall.
  std::map<std::uint32_t, std::uint64_t> outstanding;
  for (bool tooLong = false;;) {
    const bool got = readBoundedLine(in, line, tooLong);
    if (tooLong) {
      ++lineNo;
      return bad(lineTooLongRule("trace"));
    }
    if (!got) break;
    ++lineNo;
    if (const std::string rule = binaryLineRule(line, "trace (a compressed archive? unpack it)");
        !rule.empty())
      return bad(rule);
    if (line.empty() || line[0] == '#') continue;
    const auto f = splitCsv(line);
    // A header (line 1 not starting with a number) must name the columns as
    // they are read, by position: a reordered one would be read wrongly.
    const auto word = [](const std::string& field) {  // trimmed, lower case
      std::string c;
      for (const char ch : field) {
        const auto u = static_cast<unsigned char>(ch);
        if (!std::isspace(u)) c += static_cast<char>(std::tolower(u));
      }
      return c;
    };
    if (lineNo == 1 && !word(f[0]).empty() &&
        !std::isdigit(static_cast<unsigned char>(word(f[0])[0]))) {
      static const char* const kColumns[] = {"rank", "op",    "t_enter_s", "t_exit_s",
                                             "peer", "bytes", "tag",       "request"};
      bool same = f.size() == std::size(kColumns);
      for (std::size_t i = 0; same && i < f.size(); ++i)
        same = word(f[i]) == kColumns[i];
      if (!same) {
        return bad(fmt::format(
            "header '{}': expected the columns rank,op,t_enter_s,t_exit_s,peer,bytes,tag,request "
            "in this order (they are read by position)",
            printable(line)));
      }
      continue;
    }
    if (f.size() != 8) {
      return bad(fmt::format(
          "{} fields: expected rank,op,t_enter_s,t_exit_s,peer,bytes,tag,request", f.size()));
    }
    Row r{};
    // A field read whole as a number of v's type (decimal only, as every
    // number ebb reads: strtod took 0x1p-20).
    const auto whole = [](const std::string& s, auto& v) {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc() && p == s.data() + s.size();
    };
    if (!whole(f[0], r.rank))
      return bad(fmt::format("rank '{}' is not a non-negative integer", f[0]));
    if (r.rank > 1'000'000) return bad(fmt::format("rank {} is implausibly large", r.rank));
    std::string op = f[1];
    std::transform(op.begin(), op.end(), op.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!whole(f[2], r.enter) || !std::isfinite(r.enter) || r.enter < 0) {
      return bad(fmt::format("t_enter_s '{}' is not a time in seconds", f[2]));
    }
    if (!whole(f[3], r.exit) || !std::isfinite(r.exit) || r.exit < r.enter) {
      return bad(fmt::format("t_exit_s '{}' is not a time at or after t_enter_s", f[3]));
    }
    // Times become picoseconds in 64 bits (found by fuzz/amg_csv_fuzz.cpp:
    // a larger time wrapped to a negative compute duration).
    if (r.exit > kMaxSeconds) {
      return bad(fmt::format("t_exit_s '{}' is beyond {:g} s, the longest time ebb represents",
                             f[3], kMaxSeconds));
    }
    if (auto p = previous.find(r.rank); p != previous.end() && r.enter < p->second.first) {
      return bad(fmt::format(
          "rank {} enters this call at {} s, before its previous call (line {}) ended at {} s: "
          "a rank's calls must not go back in time",
          r.rank, f[2], p->second.second, p->second.first));
    }
    previous[r.rank] = {r.exit, lineNo};
    r.op.line = static_cast<std::uint32_t>(lineNo);
    if (op == "isend" || op == "irecv" || op == "send" || op == "recv") {
      r.op.kind = op == "isend"   ? MpiOpKind::kIsend
                  : op == "irecv" ? MpiOpKind::kIrecv
                  : op == "send"  ? MpiOpKind::kSend
                                  : MpiOpKind::kRecv;
      if (!whole(f[4], r.op.peer)) return bad(fmt::format("peer '{}' is not a rank", f[4]));
      if (!whole(f[5], r.op.bytes) || r.op.bytes < 0) {
        return bad(fmt::format("bytes '{}' is not a non-negative integer", f[5]));
      }
      if (!whole(f[6], r.op.tag)) {
        return bad(fmt::format("tag '{}' is not an integer", f[6]));
      }
    } else if (op == "waitall") {
      r.op.kind = MpiOpKind::kWaitall;
      if (!whole(f[7], r.op.count) || r.op.count == 0) {
        return bad(
            fmt::format("waitall needs its request count in the last field (got '{}')", f[7]));
      }
      // The replay would complete only those there are: a count beyond them
      // is a corrupt field or a lost isend/irecv, not something to clamp.
      std::uint64_t& open = outstanding[r.rank];
      if (r.op.count > open) {
        return bad(fmt::format("waitall of {} requests but rank {} has {} outstanding", r.op.count,
                               r.rank, open));
      }
      open -= r.op.count;
    } else {
      return bad(
          fmt::format("unknown op '{}' (expected isend, irecv, send, recv or waitall)", f[1]));
    }
    if (r.op.kind == MpiOpKind::kIsend || r.op.kind == MpiOpKind::kIrecv) ++outstanding[r.rank];
    maxRank = std::max(maxRank, r.rank);
    rows.push_back(r);
  }
  if (rows.empty()) return Status(ErrorCode::kParse, fmt::format("{}: no MPI calls", path));
  std::vector<bool> present(maxRank + 1, false);
  for (const Row& r : rows)
    present[r.rank] = true;
  if (Status s = checkPeers(rows, present, path); !s.isOk()) return s;
  MpiTrace t;
  t.ranks.resize(maxRank + 1);
  std::vector<double> lastExit(maxRank + 1, 0.0);
  const auto ps = [](double s) { return fromSeconds(s); };
  for (const Row& r : rows) {
    auto& ops = t.ranks[r.rank];
    // Time since the previous call ended is the rank's own work.
    const TimePs gap = ps(r.enter - lastExit[r.rank]);
    if (gap > 0) ops.push_back({MpiOpKind::kCompute, gap, 0, 0, 0, 0});
    ops.push_back(r.op);
    // A non-blocking call's own time is CPU time; a blocking one's is waiting.
    const bool blocking = r.op.kind == MpiOpKind::kWaitall || r.op.kind == MpiOpKind::kSend ||
                          r.op.kind == MpiOpKind::kRecv;
    if (!blocking && r.exit > r.enter) {
      ops.push_back({MpiOpKind::kCompute, ps(r.exit - r.enter), 0, 0, 0, 0});
    }
    lastExit[r.rank] = std::max(lastExit[r.rank], r.exit);
  }
  if (Status s = checkSendsMatchReceives(t, path); !s.isOk()) return s;
  if (Status s = checkReceivesHoldTheirSends(t, path); !s.isOk()) return s;
  t.countOps();
  return t;
}

Status checkReceivesHoldTheirSends(const MpiTrace& t, const std::string& tracePath) {
  using Key = std::tuple<std::uint32_t, std::uint32_t, std::int32_t>;
  std::map<Key, std::vector<const MpiOp*>> sends, recvs;  // in program order
  for (std::size_t r = 0; r < t.ranks.size(); ++r) {
    const auto rank = static_cast<std::uint32_t>(r);
    for (const MpiOp& op : t.ranks[r]) {
      if (isSend(op.kind)) sends[{rank, op.peer, op.tag}].push_back(&op);
      if (isRecv(op.kind)) recvs[{op.peer, rank, op.tag}].push_back(&op);
    }
  }
  for (const auto& [key, posted] : recvs) {
    const auto it = sends.find(key);
    if (it == sends.end()) continue;
    const auto& [src, dst, tag] = key;
    for (std::size_t k = 0; k < posted.size() && k < it->second.size(); ++k) {
      const MpiOp& recv = *posted[k];
      const MpiOp& send = *it->second[k];
      if (recv.bytes >= send.bytes) continue;
      return Status(ErrorCode::kParse,
                    fmt::format("{}:{}: this receive on rank {} from rank {} (tag {}) takes {} "
                                "bytes, less than the {} bytes of its matching send ({}:{}): "
                                "MPI would fail it (MPI_ERR_TRUNCATE)",
                                t.fileOf(dst, tracePath), recv.line, dst, src, tag, recv.bytes,
                                send.bytes, t.fileOf(src, tracePath), send.line));
    }
  }
  return Status::ok();
}

Status checkSendsMatchReceives(const MpiTrace& t, const std::string& tracePath) {
  // (src, dst, tag) -> how many sends and receives; matched in program order.
  using Key = std::tuple<std::uint32_t, std::uint32_t, std::int32_t>;
  std::map<Key, std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t r = 0; r < t.ranks.size(); ++r) {
    const auto rank = static_cast<std::uint32_t>(r);
    for (const MpiOp& op : t.ranks[r]) {
      if (isSend(op.kind)) ++pairs[{rank, op.peer, op.tag}].first;
      if (isRecv(op.kind)) ++pairs[{op.peer, rank, op.tag}].second;
    }
  }
  for (const auto& [key, counts] : pairs) {
    const auto& [sends, recvs] = counts;
    if (sends == recvs) continue;
    const auto& [src, dst, tag] = key;
    // The first op left over: the (matched + 1)-th of its kind on its rank.
    const bool sendLeft = sends > recvs;
    const std::uint32_t rank = sendLeft ? src : dst;
    const std::uint32_t peer = sendLeft ? dst : src;
    std::size_t skip = std::min(sends, recvs);
    std::uint32_t line = 0;
    for (const MpiOp& op : t.ranks[rank]) {
      if ((sendLeft ? isSend(op.kind) : isRecv(op.kind)) && op.peer == peer && op.tag == tag &&
          skip-- == 0) {
        line = op.line;
        break;
      }
    }
    // Formats without lines (OTF2) name the file and which of its kind it is.
    const std::string where =
        line > 0 ? fmt::format("{}:{}", t.fileOf(rank, tracePath), line)
                 : fmt::format("{} ({} number {} of these)", t.fileOf(rank, tracePath),
                               sendLeft ? "send" : "receive", std::min(sends, recvs) + 1);
    return Status(
        ErrorCode::kParse,
        sendLeft ? fmt::format("{}: this send from rank {} to rank {} (tag {}) and {} after it "
                               "have no matching receive on rank {}: is the trace truncated?",
                               where, src, dst, tag, sends - recvs - 1, dst)
                 : fmt::format("{}: this receive on rank {} from rank {} (tag {}) and {} after "
                               "it have no matching send: is the trace truncated?",
                               where, dst, src, tag, recvs - sends - 1));
  }
  return Status::ok();
}

void MpiTrace::countOps() {
  sends = sendBytes = recvs = waits = 0;
  for (const auto& ops : ranks) {
    for (const MpiOp& op : ops) {
      switch (op.kind) {
        case MpiOpKind::kIsend:
        case MpiOpKind::kSend:
          ++sends;
          sendBytes += static_cast<std::uint64_t>(op.bytes);
          break;
        case MpiOpKind::kIrecv:
        case MpiOpKind::kRecv:
          ++recvs;
          break;
        case MpiOpKind::kWaitall:
        case MpiOpKind::kWait:
          ++waits;
          break;
        case MpiOpKind::kCompute:
          break;
      }
    }
  }
}

}  // namespace ebb::workload
