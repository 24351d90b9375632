#pragma once

// Checked conversions of the counts a user writes (cycles, microseconds,
// milliseconds) into picoseconds: every one names the field it came from and
// says which rule it broke, instead of wrapping around (docs/replay.md,
// "Configuration rules").

#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "common/time.h"

namespace ebb {

// count x unitPs for a count >= 0, or E_INVALID naming `field` when the count
// is negative or the product does not fit in TimePs (about 106 days).
// `unitName` says what one unit is in the message ("cycles of 1000 ps").
Result<TimePs> scaleToPs(std::string_view field, std::int64_t count, TimePs unitPs,
                         std::string_view unitName);

// A whole number of cycles of `cyclePs` picoseconds.
Result<TimePs> cyclesToPs(std::string_view field, std::int64_t cycles, TimePs cyclePs);

// Milliseconds (ebb agent's settings).
Result<TimePs> msToPs(std::string_view field, std::int64_t ms);

// Microseconds as a decimal (traces, job starts, compute gaps): finite,
// >= 0 and within the time range, rounded to the nearest picosecond.
Result<TimePs> usToPs(std::string_view field, double us);

// a * b for counts (bytes, packets, settings), or E_INVALID naming `field`
// when the product does not fit in int64.
Result<std::int64_t> checkedProduct(std::string_view field, std::int64_t a, std::int64_t b);

}  // namespace ebb
