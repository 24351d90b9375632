#include "tools/build_info.h"

#include <fmt/format.h>

namespace ebb::tools {

// Defined in the generated build_info_values.cpp (tools/build_info.cmake).
namespace build_info {
extern const char* const kVersion;
extern const char* const kGitRevision;
extern const char* const kBuildType;
extern const bool kWithIb;
extern const bool kSanitized;
}  // namespace build_info

std::string versionNumber() {
  return build_info::kVersion;
}

std::string versionText() {
  return fmt::format(
      "ebb {}\ngit revision: {}\nbuild type: {}{}\nInfiniBand support: {}", build_info::kVersion,
      build_info::kGitRevision, build_info::kBuildType,
      build_info::kSanitized ? " (AddressSanitizer + UndefinedBehaviorSanitizer)" : "",
      build_info::kWithIb ? "yes (ebb agent, libibumad; OpenSM event plugin)"
                          : "no (configured with -DEBB_WITH_IB=OFF: ebb agent is unavailable)");
}

}  // namespace ebb::tools
