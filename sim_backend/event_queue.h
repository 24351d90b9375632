#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/time.h"

namespace ebb::sim {

// One network event: plain data, no closure (the emulator dispatches on kind).
struct NetEvent {
  TimePs time = 0;
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  std::uint8_t kind = 0;
};

// A monotone radix heap of NetEvents keyed by time: push O(1), pop amortized
// O(log of the time span between pending events). Why not a binary heap: the
// emulator holds thousands of near-future events and pops tens of millions;
// each item here moves only when its bucket is split, and buckets are flat
// vectors that keep their capacity (no allocation in steady state).
//
// Events with equal times pop in push order: a bucket index is a function of
// the key (given the last popped key), so equal keys always share a bucket and
// buckets are appended to and split in order.
//
// Contract: push() times are >= the time of the last pop() (the emulator only
// schedules at or after now). minTime() does not advance that bound.
class EventQueue {
 public:
  static constexpr TimePs kNever = std::numeric_limits<TimePs>::max();

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  void push(const NetEvent& e) {
    const auto key = static_cast<std::uint64_t>(e.time);
    buckets_[bucketOf(key)].push_back(e);
    ++size_;
    if (e.time < min_) min_ = e.time;
  }

  // Time of the earliest event; kNever when empty.
  TimePs minTime() {
    if (min_ != kUnknown) return min_;
    if (size_ == 0) return min_ = kNever;
    if (read0_ < buckets_[0].size()) return min_ = static_cast<TimePs>(last_);
    const auto& b = buckets_[firstNonEmpty()];
    TimePs m = kNever;
    for (const NetEvent& e : b) {
      if (e.time < m) m = e.time;
    }
    return min_ = m;
  }

  // Removes and returns the earliest event (precondition: !empty()).
  NetEvent pop() {
    if (read0_ == buckets_[0].size()) refill();
    --size_;
    const NetEvent e = buckets_[0][read0_++];
    if (read0_ == buckets_[0].size()) min_ = kUnknown;
    return e;
  }

 private:
  static constexpr TimePs kUnknown = -1;

  std::size_t bucketOf(std::uint64_t key) const {
    return static_cast<std::size_t>(std::bit_width(key ^ last_));
  }
  std::size_t firstNonEmpty() const {
    std::size_t i = 1;
    while (buckets_[i].empty())
      ++i;
    return i;
  }
  // Bucket 0 is exhausted: split the first non-empty bucket around its minimum.
  void refill() {
    buckets_[0].clear();
    read0_ = 0;
    const std::size_t i = firstNonEmpty();
    std::vector<NetEvent>& b = buckets_[i];
    std::uint64_t m = std::numeric_limits<std::uint64_t>::max();
    for (const NetEvent& e : b) {
      if (static_cast<std::uint64_t>(e.time) < m) m = static_cast<std::uint64_t>(e.time);
    }
    last_ = m;
    for (const NetEvent& e : b)  // every item lands in a bucket below i, in order
      buckets_[bucketOf(static_cast<std::uint64_t>(e.time))].push_back(e);
    b.clear();
  }

  std::array<std::vector<NetEvent>, 65> buckets_;
  std::size_t read0_ = 0;  // bucket 0 is read front to back, then cleared
  std::uint64_t last_ = 0;
  std::size_t size_ = 0;
  TimePs min_ = kNever;  // cached minTime(), kUnknown after a pop emptied bucket 0
};

}  // namespace ebb::sim
