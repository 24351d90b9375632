#include <iostream>

#include "tools/command.h"

int main(int argc, char** argv) {
  return ebb::tools::runEbb(argc, argv, std::cout, std::cerr);
}
