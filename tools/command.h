#pragma once

#include <functional>
#include <iosfwd>

namespace CLI {
class App;
}

namespace ebb::tools {

// Exit codes of every ebb command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  // bad input or a failed run; the message says why
inline constexpr int kExitUsage = 2;  // bad command line

// A subcommand registers its options on `app` and sets `action` to what runs
// when it is chosen. Output goes to `out`, diagnostics to `err`.
using CommandAction = std::function<int(std::ostream& out, std::ostream& err)>;

void addTopoCommand(CLI::App& app, CommandAction& action);
void addReplayCommand(CLI::App& app, CommandAction& action);
void addGenCommand(CLI::App& app, CommandAction& action);
void addAgentCommand(CLI::App& app, CommandAction& action);
void addTuneCommand(CLI::App& app, CommandAction& action);
void addFaultsCommand(CLI::App& app, CommandAction& action);

// The whole ebb command line on `app`: its name and description, --version
// and every command. What runEbb parses, and what the man pages are made
// from (tools/man_page.h).
void buildEbbApp(CLI::App& app, CommandAction& action);

// Runs the ebb command line (argv as given to main).
int runEbb(int argc, const char* const* argv, std::ostream& out, std::ostream& err);
// Parses and checks the command line as runEbb does, without running the
// command: kExitOk when it would run (fuzz/cli_args_fuzz.cpp).
int parseEbb(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace ebb::tools
