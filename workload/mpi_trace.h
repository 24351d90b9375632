#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace ebb::workload {

enum class MpiOpKind : std::uint8_t {
  kCompute,
  kIsend,
  kIrecv,
  kWaitall,
  kSend,  // blocking: the rank waits until the message is delivered
  kRecv,  // blocking: the rank waits until a matching message has arrived
  kWait,  // one request: `count` names it (see below), 0 = the most recent one
};

struct MpiOp {
  MpiOpKind kind = MpiOpKind::kCompute;
  TimePs duration = 0;     // compute
  std::uint32_t peer = 0;  // (i)send: destination rank; (i)recv: source rank
  std::int64_t bytes = 0;
  std::int32_t tag = 0;
  // waitall: how many of the oldest outstanding requests. isend/irecv: an
  // optional name (the trace's request id + 1, 0 = unnamed) that a later wait
  // with the same count completes.
  std::uint32_t count = 0;
  // The line of the trace file the op comes from (0: none, e.g. generated).
  std::uint32_t line = 0;
};

// A closed-loop MPI trace: per rank, the operations in program order, with the
// time between calls (and the calls' own CPU time) as compute operations.
struct MpiTrace {
  std::vector<std::vector<MpiOp>> ranks;
  // The file each rank's ops come from, when ranks have files of their own
  // (SimGrid's per-rank files); empty: the trace's own path.
  std::vector<std::string> rankFiles;
  std::uint64_t sends = 0;
  std::uint64_t sendBytes = 0;
  std::uint64_t recvs = 0;
  std::uint64_t waits = 0;

  // Recomputes sends, sendBytes, recvs and waits from the programs.
  void countOps();
  // The file rank `rank`'s ops come from, or `tracePath`.
  const std::string& fileOf(std::size_t rank, const std::string& tracePath) const {
    return rank < rankFiles.size() && !rankFiles[rank].empty() ? rankFiles[rank] : tracePath;
  }
};

// Reads the AMG2013 event CSV (`rank,op,t_enter_s,t_exit_s,peer,bytes,tag,request`;
// ops isend, irecv, waitall, and blocking send and recv, case-insensitive). Errors: E_PARSE
// "<file>:<line>: <rule>" (among them a waitall of more requests than the rank has
// outstanding, and checkSendsMatchReceives), E_IO for a missing file.
Result<MpiTrace> readAmgCsv(const std::string& path);

// Every send has its receive and every receive its send, per (source,
// destination, tag), matched in program order, as MpiReplay matches them: a
// truncated trace breaks this. E_PARSE "<file>:<line>: ..." naming the first
// operation left over, in the file of its rank (fileOf(rank, tracePath)).
Status checkSendsMatchReceives(const MpiTrace& t, const std::string& tracePath);
// A receive smaller than the send it matches (in program order per source,
// destination and tag) would fail in MPI (MPI_ERR_TRUNCATE): E_PARSE naming
// both lines. For formats whose receives carry their buffer size.
Status checkReceivesHoldTheirSends(const MpiTrace& t, const std::string& tracePath);

}  // namespace ebb::workload
