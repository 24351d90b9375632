// ebb_man: writes the manual pages of the ebb command line (tools/man_page.h)
// into a folder, one roff file per page. Run at build time
// (packaging/man_pages.cmake); not installed.
// Usage: ebb_man OUT_DIR [EXTRA_DIR]   (EXTRA_DIR/<page>.roff, e.g.
// ebb-agent.1.roff, is appended to that page)
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tools/build_info.h"
#include "tools/command.h"
#include "tools/man_page.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: ebb_man OUT_DIR [EXTRA_DIR]\n";
    return 2;
  }
  std::map<std::string, std::string> extra;
  if (argc == 3) {
    for (const fs::directory_entry& e : fs::directory_iterator(argv[2])) {
      if (e.path().extension() != ".roff") continue;
      std::ifstream in(e.path());
      std::ostringstream text;
      text << in.rdbuf();
      extra[e.path().stem().string()] = text.str();  // "ebb-agent.1.roff" -> "ebb-agent.1"
    }
  }
  CLI::App app;
  ebb::tools::CommandAction action;
  ebb::tools::buildEbbApp(app, action);
  const auto pages = ebb::tools::renderManPages(app, ebb::tools::versionNumber(), extra);
  for (const auto& [file, _] : extra) {
    bool used = false;
    for (const ebb::tools::ManPage& p : pages)
      used = used || p.file == file;
    if (!used) {
      std::cerr << "ebb_man: " << argv[2] << "/" << file << ".roff: no such page\n";
      return 1;
    }
  }
  fs::create_directories(argv[1]);
  for (const ebb::tools::ManPage& p : pages) {
    std::ofstream out(fs::path(argv[1]) / p.file, std::ios::binary | std::ios::trunc);
    out << p.roff;
    if (!out) {
      std::cerr << "ebb_man: cannot write " << (fs::path(argv[1]) / p.file).string() << "\n";
      return 1;
    }
  }
  return 0;
}
