#pragma once

// Turns the ranks' logs of an OTF2 trace into the replayed trace: each
// collective is matched across its communicator's members (the k-th
// collective of every member on a communicator is one operation) and
// expanded over them with expandCollectiveOver. Only built with OTF2.

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "workload/collectives.h"
#include "workload/mpi_trace.h"
#include "workload/otf2_communicators.h"
#include "workload/otf2_rank_log.h"

namespace ebb::workload::otf2 {

// Merges `logs` (one per rank): point-to-point ops in order, each collective
// expanded over its communicator's members at once; members must agree on
// each collective's operation and root, and a rank's collectives run in its
// order, whatever their communicators. Errors are E_PARSE naming `anchor`.
// `collectives` is set to the number of operations expanded.
Result<MpiTrace> assembleRanks(const std::string& anchor, std::vector<RankLog>& logs,
                               const Communicators& comms, const CollectiveAlgos& algos,
                               std::uint64_t& collectives);

}  // namespace ebb::workload::otf2
