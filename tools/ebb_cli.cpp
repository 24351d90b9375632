#include <new>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "common/status.h"
#include "tools/build_info.h"
#include "tools/cli_checks.h"
#include "tools/command.h"

namespace ebb::tools {

void buildEbbApp(CLI::App& app, CommandAction& action) {
  app.name("ebb");
  app.description(
      "ebb: power-aware control of fat-tree interconnects. Per-switch agents gate links on and off "
      "without disconnecting the fabric and put idle links into low-power idle, on an emulated "
      "k-ary n-tree or next to OpenSM on a real InfiniBand subnet.");
  app.require_subcommand(1);
  app.set_version_flag("--version", versionText(),
                       "Print the version, git revision, build type and whether InfiniBand "
                       "support is compiled in, and exit");
  addTopoCommand(app, action);
  addReplayCommand(app, action);
  addGenCommand(app, action);
  addAgentCommand(app, action);
  addTuneCommand(app, action);
  addFaultsCommand(app, action);
  requireDecimalNumbers(app);
  // The error alone: dispatch() adds the one hint, naming both kinds of help.
  app.failure_message(
      [](const CLI::App*, const CLI::Error& e) { return std::string(e.what()) + "\n"; });
}

namespace {

// The command line parsed and checked; with `run`, the chosen command run.
int dispatch(int argc, const char* const* argv, std::ostream& out, std::ostream& err, bool run) {
  CLI::App app;
  CommandAction action;
  buildEbbApp(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are ParseErrors with exit code 0; CLI11 prints the
    // help of the chosen subcommand.
    if (e.get_exit_code() == 0) {
      app.exit(e, out, err);
      return kExitOk;
    }
    // A first word that is no command (a typo, an old name): CLI11 only says
    // a subcommand is required. Name it and the commands.
    if (argc > 1 && app.get_subcommands().empty()) {
      const std::string first = argv[1];
      std::string names;
      for (const CLI::App* sub : app.get_subcommands({}))
        names += (names.empty() ? "" : ", ") + sub->get_name();
      err << (first.rfind('-', 0) == 0
                  ? "'" + first + "' is not an option of ebb (before the command)"
                  : "'" + first + "' is not an ebb command")
          << "; the commands: " << names << "\n";
    } else {
      app.exit(e, out, err);
    }
    err << "Run 'ebb --help' or 'ebb <command> --help'.\n";
    return kExitUsage;
  }
  if (!action) return kExitUsage;
  if (!run) return kExitOk;
  try {
    return action(out, err);
  } catch (const Error& e) {
    err << "ebb: " << e.what() << "\n";
    return kExitError;
  } catch (const std::bad_alloc&) {
    // Caught, not an abort: the unwinding removes what the command created
    // (its output folders are kept only on success).
    err << "ebb: E_UNAVAILABLE: out of memory: the run needs more memory than the process "
           "may have (very many packets in flight at once, a very large fabric or trace)\n";
    return kExitError;
  }
}

}  // namespace

int runEbb(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  return dispatch(argc, argv, out, err, true);
}

int parseEbb(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  return dispatch(argc, argv, out, err, false);
}

}  // namespace ebb::tools
