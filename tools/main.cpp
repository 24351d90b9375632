#include <iostream>

#include "tools/command.h"

int main(int argc, char** argv) {
  const int code = ebb::tools::runEbb(argc, argv, std::cout, std::cerr);
  // What went to standard output (a report, an exported topology) must not
  // be lost quietly: a full disk or a closed file there is an error.
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "ebb: E_IO: standard output: write failed (disk full?); the output is "
                 "incomplete\n";
    return code == ebb::tools::kExitOk ? ebb::tools::kExitError : code;
  }
  return code;
}
