#pragma once

#include <cstddef>
#include <vector>

#include "replay/runner.h"

namespace ebb::replay {

// Rows of the time series merged into longer periods: the one rule shared by
// the timeseries period (report.timeseries_period_cycles) and the plots'
// downsampling. Rates, loads, powers and link shares are averaged weighted
// by each row's span (a row may cover several idle check periods), latency
// is weighted by the messages delivered, deliveries and spans add up, and the
// merged row ends where its last row ends.
class RowMerger {
 public:
  void add(const PeriodRow& row);
  bool empty() const { return count_ == 0; }
  std::size_t count() const { return count_; }
  double spanCycles() const { return sum_.spanCycles; }
  // The merged row; starts a new one.
  PeriodRow take();

 private:
  PeriodRow sum_;
  double latencyWeight_ = 0;
  double weight_ = 0;  // the spans, or the rows where no span is given
  std::size_t count_ = 0;
};

// At most `maxRows` rows, each merging `ceil(rows / maxRows)` neighbours.
std::vector<PeriodRow> downsample(const std::vector<PeriodRow>& rows, std::size_t maxRows);

}  // namespace ebb::replay
