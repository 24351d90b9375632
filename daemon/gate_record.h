#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "fabric/topology.h"
#include "ib_backend/ib_backend.h"

namespace ebb::daemon {

// The agent's state file (agent.state_file; docs/ib_agent.md, "Crash and
// restart"): the gates it holds on the fabric, one per line, rewritten whole
// (temporary file, fsync, rename) before each Disabled or narrowing Set goes
// out and after each change, so that a run started after a crash takes back
// what the killed run left gated. A line names the switch by GUID and the
// port by its IB number, so it survives renaming switches in the topology:
//
//   disable 0x0008f10500200001 3   # S1_0_0[3] - S2_0_0[1]
//   width   0x0008f10500200001 3 2 # restore LinkWidthEnabled 2 (4x)
//
// '#' starts a comment; blank lines are ignored.
class GateRecord {
 public:
  struct Read {
    std::vector<ib::HeldGate> gates;
    // Lines naming a switch or port the topology does not have (it changed
    // since): skipped, each said once.
    std::vector<std::string> skipped;
  };
  // An absent file holds nothing. Errors (E_INVALID) name the file, the line
  // and the rule; E_IO when it cannot be read.
  static Result<Read> read(const std::string& path, const fabric::Topology& topo);
  // The file's text for `gates` (sorted as given).
  static std::string render(const std::vector<ib::HeldGate>& gates, const fabric::Topology& topo);
  // Replaces the file with `text`: a crash leaves the old file or the new one.
  static Status write(const std::string& path, const std::string& text);
};

}  // namespace ebb::daemon
