#pragma once

#include <functional>
#include <string>

#include "common/status.h"

namespace ebb {

// A gnuplot script for one output format: `terminal` is the `set terminal`
// argument (size included), `ext` the file extension of the figures.
using GnuplotScript =
    std::function<std::string(const std::string& terminal, const std::string& ext)>;

// Writes `script` twice, for PNG (pngcairo) then SVG at `width`x`height`
// pixels, into `dir`/`scriptName` (kept, to restyle the figures) and runs
// gnuplot on it in `dir`, so the script's relative paths start there.
// E_UNAVAILABLE when gnuplot is not installed or fails (its stderr quoted);
// E_IO when the script cannot be written.
Status renderGnuplot(const std::string& dir, const std::string& scriptName, int width, int height,
                     const GnuplotScript& script);

}  // namespace ebb
