#include "policies/threshold_table.h"

#include <fmt/format.h>

namespace ebb::policies {

Result<std::vector<ThresholdRow>> thresholdTable(const Thresholds& t, int k) {
  if (k < 1) return Status(ErrorCode::kInvalidArgument, fmt::format("k = {}: need k >= 1", k));
  if (Status s = t.validate(); !s.isOk()) return s;
  std::vector<ThresholdRow> rows;
  rows.reserve(static_cast<std::size_t>(k));
  for (int i = k; i >= 1; --i) {
    ThresholdRow r;
    r.linksOn = i;
    r.factor = static_cast<double>(i) / static_cast<double>(k);
    r.off = t.offThreshold(i, k);
    r.effectiveOff = t.effectiveOff(i, k);
    if (t.kind == GatingKind::kStatic || i < k) {
      r.on = t.onThreshold();
      r.effectiveOn = t.effectiveOn(i, k);
    }
    rows.push_back(r);
  }
  return rows;
}

std::string formatThresholdTable(const std::vector<ThresholdRow>& rows) {
  const auto cell = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.4f}", *v) : std::string("n.a.");
  };
  std::string out = "| up links on | on | off | factor | effective on | effective off |\n";
  out += "|---|---|---|---|---|---|\n";
  for (const ThresholdRow& r : rows) {
    out += fmt::format("| {} | {} | {:.4f} | {:.4f} | {} | {:.4f} |\n", r.linksOn, cell(r.on),
                       r.off, r.factor, cell(r.effectiveOn), r.effectiveOff);
  }
  return out;
}

}  // namespace ebb::policies
