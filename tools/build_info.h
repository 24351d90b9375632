#pragma once

#include <string>

namespace ebb::tools {

// What `ebb --version` prints: the version (CMake's project version), the git
// revision the binary was built from ("unknown" outside a git checkout), the
// build type and whether InfiniBand support (`ebb agent`, the OpenSM event
// plugin) is compiled in. The values come from build_info_values.cpp, which
// tools/build_info.cmake writes at build time.
std::string versionText();

// The bare version, e.g. "0.1.0" (man pages' footers).
std::string versionNumber();

}  // namespace ebb::tools
