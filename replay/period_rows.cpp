#include "replay/period_rows.h"

#include <algorithm>

namespace ebb::replay {

void RowMerger::add(const PeriodRow& row) {
  if (count_ == 0) {
    sum_ = PeriodRow{};
    sum_.linksOnShare.assign(row.linksOnShare.size(), 0.0);
    latencyWeight_ = 0;
    weight_ = 0;
  }
  ++count_;
  sum_.drain = count_ == 1 ? row.drain : sum_.drain && row.drain;  // wholly in the drain
  const double w = row.spanCycles > 0 ? row.spanCycles : 1.0;
  weight_ += w;
  sum_.timeCycles = row.timeCycles;
  sum_.spanCycles += row.spanCycles;
  sum_.rising = row.rising;
  sum_.injectedRate += w * row.injectedRate;
  sum_.offered += w * row.offered;
  sum_.accepted += w * row.accepted;
  sum_.powerSwitchLinks += w * row.powerSwitchLinks;
  sum_.oraclePowerSwitchLinks += w * row.oraclePowerSwitchLinks;
  sum_.powerAllLinks += w * row.powerAllLinks;
  for (std::size_t i = 0; i < std::min(sum_.linksOnShare.size(), row.linksOnShare.size()); ++i)
    sum_.linksOnShare[i] += w * row.linksOnShare[i];
  sum_.meanLatencyCycles += row.meanLatencyCycles * static_cast<double>(row.delivered);
  latencyWeight_ += static_cast<double>(row.delivered);
  sum_.delivered += row.delivered;
}

PeriodRow RowMerger::take() {
  PeriodRow r = std::move(sum_);
  const double n = weight_ > 0 ? weight_ : 1.0;
  r.injectedRate /= n;
  r.offered /= n;
  r.accepted /= n;
  r.powerSwitchLinks /= n;
  r.oraclePowerSwitchLinks /= n;
  r.powerAllLinks /= n;
  for (double& share : r.linksOnShare)
    share /= n;
  r.meanLatencyCycles = latencyWeight_ > 0 ? r.meanLatencyCycles / latencyWeight_ : 0;
  count_ = 0;
  weight_ = 0;
  sum_ = PeriodRow{};
  return r;
}

std::vector<PeriodRow> downsample(const std::vector<PeriodRow>& rows, std::size_t maxRows) {
  if (maxRows == 0 || rows.size() <= maxRows) return rows;
  const std::size_t group = (rows.size() + maxRows - 1) / maxRows;
  std::vector<PeriodRow> out;
  out.reserve(maxRows);
  RowMerger m;
  for (const PeriodRow& r : rows) {
    m.add(r);
    if (m.count() == group) out.push_back(m.take());
  }
  if (!m.empty()) out.push_back(m.take());
  return out;
}

}  // namespace ebb::replay
