#pragma once

#include <filesystem>
#include <string_view>

#include "common/status.h"

namespace ebb {

// Writes `contents` to `path` atomically: into a temporary file beside it
// (named after the process and thread, so concurrent writers never share one),
// then renamed over `path`. A reader, or a run interrupted midway, sees the
// old file or the new one, never half of one. E_IO names the path.
Status writeFile(const std::filesystem::path& path, std::string_view contents);

}  // namespace ebb
