#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "policies/thresholds.h"

namespace ebb::policies {

// One row of Table 1 (static) or Table 2 (dynamic) of Alonso et al. 2007: the
// thresholds a switch applies with i of its k up links on, on u_up (the
// utilization of the links that are on) and relative to the full up-link
// throughput ("effective" = factor i/k times the threshold).
struct ThresholdRow {
  int linksOn = 0;                    // i
  std::optional<double> on;           // U_on; empty ("n.a.") for dynamic thresholds at i = k
  double off = 0;                     // U_off (static) or U_off(i) = U_on (i-1)/k (dynamic)
  double factor = 0;                  // i / k
  std::optional<double> effectiveOn;  // factor * on
  double effectiveOff = 0;            // factor * off
};

// The rows for i = k down to 1, as the paper lists them. Table 1 gives U_on even
// with all links on; Table 2 writes "n.a." there (nothing left to turn on).
// E_INVALID if k < 1 or the thresholds break their validity rule.
Result<std::vector<ThresholdRow>> thresholdTable(const Thresholds& t, int k);

// Markdown table of the rows (values to 4 decimals), for docs and reports.
std::string formatThresholdTable(const std::vector<ThresholdRow>& rows);

}  // namespace ebb::policies
