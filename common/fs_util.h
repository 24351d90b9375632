#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"

namespace ebb {

// The regular files in folder `dir` (with `recursive`, in its subfolders too)
// that `wanted` accepts (every one when it is empty), sorted. Never throws:
// a folder that cannot be read, or an accepted entry whose type cannot be
// found (a dangling symlink, a symlink loop), is E_IO naming that path and
// why, since silently skipping it would lose a file the caller needs.
Result<std::vector<std::filesystem::path>> listRegularFiles(
    const std::filesystem::path& dir, bool recursive,
    const std::function<bool(const std::filesystem::path&)>& wanted = {});

// `p` made absolute against the working directory, or `p` itself when that
// cannot be done (no working directory): a later open then names the path.
// std::filesystem::absolute throws for an empty path and on getcwd failure.
std::string absolutePath(const std::filesystem::path& p);

// Whether the process whose id `pidText` spells (decimal) is still running:
// a temporary file or folder named after a process that is gone is a
// leftover of a run killed outright (SIGKILL), which nothing else removes.
bool processAlive(const std::string& pidText);

}  // namespace ebb
