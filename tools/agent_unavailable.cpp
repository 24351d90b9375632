// `ebb agent` in a build without InfiniBand support (-DEBB_WITH_IB=OFF): the
// command exists, says why it cannot run and how to get it, and exits 1.
#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "tools/command.h"

namespace ebb::tools {

void addAgentCommand(CLI::App& app, CommandAction& action) {
  CLI::App* cmd = app.add_subcommand(
      "agent",
      "Run the per-switch agents next to OpenSM on an InfiniBand subnet. Not available in this "
      "build: it was configured with -DEBB_WITH_IB=OFF (no rdma-core/OpenSM).");
  cmd->allow_extras();
  cmd->callback([&action] {
    action = [](std::ostream&, std::ostream& err) {
      err << "ebb agent: this ebb was built without InfiniBand support (-DEBB_WITH_IB=OFF); "
             "install rdma-core, libibumad-dev, libibmad-dev, libibverbs-dev and libopensm-dev "
             "and configure with -DEBB_WITH_IB=ON (scripts/setup.sh installs them)\n";
      return kExitError;
    };
  });
}

}  // namespace ebb::tools
