#pragma once

#include <cstddef>

#include "fabric/ids.h"
#include "fabric/kary_tree.h"

namespace ebb::sim {

// Links traversed between two hosts of a k-ary n-tree: 2 host links plus 2 per
// level climbed to the nearest common ancestor (the zero-load formulas' h).
inline int linksBetween(const fabric::KAryNTree& t, fabric::HostId a, fabric::HostId b) {
  const auto pa = t.hostDigits(a), pb = t.hostDigits(b);
  int common = 0;
  while (common < t.n() - 1 &&
         pa[static_cast<std::size_t>(common)] == pb[static_cast<std::size_t>(common)])
    ++common;
  return 2 + 2 * ((t.n() - 1) - common);
}

}  // namespace ebb::sim
