#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "fabric/kary_tree.h"
#include "fabric/topology.h"

namespace ebb::fabric {

// An extended generalised fat tree XGFT(h; m_1..m_h; w_1..w_h) (Öhring, Ibel,
// Das and Kumar, IPPS 1995; docs/fabric.md, "Generalised fat trees"): h
// levels of switches above the hosts; a node of level i - 1 has w_i parents,
// a switch of level i has m_i children. Hosts have one link, so w_1 = 1. A
// node of level i is labelled by digits at positions h..1, digit j ranging
// over m_j above the node's level (j > i) and over w_j at or below it; nodes
// of levels i - 1 and i are linked iff their labels differ at position i
// only. Real installations are 2- and 3-level XGFTs; a k-ary n-tree is
// XGFT(n; k..k; 1, k..k), and built from here with `ports` = 2k it is the
// same topology as KAryNTree's, switch for switch and port for port.
//
// ebb's levels count from the top (0 = the roots, XGFT level h). Switch ids
// are level-major from the top, then the label's digits h..2 read as a
// mixed-radix number (digit h most significant); names "S<l>_<d_h>_.._<d_2>".
// Host ids read digits h..1 the same way. A switch of XGFT level i has down
// ports 0..m_i - 1 (to the child whose digit i is that number) and up ports
// m_i + y for y in 0..w_{i+1} - 1 (to the parent whose digit i + 1 is y).
class Xgft {
 public:
  // The most levels (h): names and labels grow with them; 2^24 hosts, the
  // host limit, fill 24 levels of m_i = 2.
  static constexpr std::size_t kMaxLevels = 32;
  // E_INVALID for h < 1 or h > kMaxLevels, m and w of different lengths, an m_i or w_i of 0,
  // w_1 != 1, `ports` below what a level needs or above 65535, or sizes past
  // the limits (hosts: 2^24; switches: `maxSwitches`, raised by `raiseWith`).
  // ports = 0: every switch gets as many as the widest level needs.
  static Result<Xgft> make(std::vector<std::uint32_t> m, std::vector<std::uint32_t> w,
                           std::uint32_t ports = 0,
                           std::uint64_t maxSwitches = KAryNTree::kDefaultMaxSwitches,
                           std::string_view raiseWith = "");
  // "H:m1,...,mH:w1,...,wH", e.g. "3:24,24,8:1,24,24" (E_INVALID naming the
  // part that does not parse).
  static Result<Xgft> parse(std::string_view spec, std::uint32_t ports = 0,
                            std::uint64_t maxSwitches = KAryNTree::kDefaultMaxSwitches,
                            std::string_view raiseWith = "");

  std::uint32_t height() const { return static_cast<std::uint32_t>(m_.size()); }
  const std::vector<std::uint32_t>& m() const { return m_; }
  const std::vector<std::uint32_t>& w() const { return w_; }
  std::uint32_t ports() const { return ports_; }
  std::uint64_t numHosts() const;
  // Switches of XGFT level i (1 = the leaves, h = the roots).
  std::uint64_t switchesAt(std::uint32_t level) const;
  std::uint64_t numSwitches() const;
  // "XGFT(3; 24,24,8; 1,24,24)".
  std::string describe() const;

  Topology build() const;

 private:
  Xgft(std::vector<std::uint32_t> m, std::vector<std::uint32_t> w, std::uint32_t ports)
      : m_(std::move(m)), w_(std::move(w)), ports_(ports) {}
  // Digit j's radix (j = 1..h) at XGFT level `level`.
  std::uint32_t radix(std::uint32_t level, std::uint32_t j) const {
    return j > level ? m_[j - 1] : w_[j - 1];
  }
  std::vector<std::uint32_t> m_, w_;
  std::uint32_t ports_;
};

}  // namespace ebb::fabric
