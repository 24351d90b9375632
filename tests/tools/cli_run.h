#pragma once

// Runs the ebb command line in-process, as a user would type it, and keeps
// its exit code, stdout and stderr: shared by the tests of every command.
#include <sstream>
#include <string>
#include <vector>

#include "tools/command.h"

namespace ebb::tools::testing {

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

inline CliRun ebb(std::vector<std::string> args) {
  args.insert(args.begin(), "ebb");
  std::vector<const char*> argv;
  for (const auto& a : args)
    argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = runEbb(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

}  // namespace ebb::tools::testing
