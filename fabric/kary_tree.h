#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "fabric/topology.h"

namespace ebb::fabric {

// A k-ary n-tree wired and labelled as in Alonso et al. (docs/mechanisms.md §1):
// switch ids are level-major, then w_0 .. w_{n-2} read as a base-k number
// (w_0 most significant); host ids are p_0 .. p_{n-1} read the same way.
// Switches are named "S<l>_<w_0>_..._<w_{n-2}>", hosts "H<id>".
class KAryNTree {
 public:
  // Largest fabric ebb builds: 2^24 hosts (guards against overflow of k^n).
  static constexpr std::uint64_t kMaxHosts = std::uint64_t{1} << 24;

  // Switches ebb builds unless told otherwise: building costs about 1 KB of
  // memory per switch with its ports and links (1 M switches: about 1 GB).
  static constexpr std::uint64_t kDefaultMaxSwitches = std::uint64_t{1} << 20;
  // Ports count too (about 24 bytes each, whether cabled or not): a fabric
  // may have at most this many ports per switch of the limit, switches x
  // ports <= kPortsPerSwitch x maxSwitches, so that a few switches of 65535
  // ports each cannot take gigabytes under the switch count.
  static constexpr std::uint64_t kPortsPerSwitch = 32;

  // Fails with E_INVALID for k < 2, n < 1, or a size above the limits (naming
  // the count, the memory estimate and the limit when n * k^(n-1) exceeds
  // `maxSwitches`: (raised deliberately by the caller's
  // --max-switches or fabric.kary_n_tree.max_switches)).
  // `raiseWith` names that knob in the message.
  static Result<KAryNTree> make(int k, int n, std::uint64_t maxSwitches = kDefaultMaxSwitches,
                                std::string_view raiseWith = "");

  // E_INVALID when `switches` of `ports` each exceed the port budget of
  // `maxSwitches` (kPortsPerSwitch each), naming `what` (the fabric), the
  // ports, the memory estimate, the limit and `raiseWith`.
  static Status checkPorts(std::string_view what, std::uint64_t switches, std::uint64_t ports,
                           std::uint64_t maxSwitches, std::string_view raiseWith);

  int k() const { return k_; }
  int n() const { return n_; }
  std::uint32_t numHosts() const { return pow(n_); }
  std::uint32_t switchesPerLevel() const { return pow(n_ - 1); }
  std::uint32_t numSwitches() const { return static_cast<std::uint32_t>(n_) * switchesPerLevel(); }

  SwitchId switchId(int level, const std::vector<int>& w) const;
  HostId hostId(const std::vector<int>& p) const;
  std::vector<int> hostDigits(HostId h) const;  // p_0 .. p_{n-1}
  KAryLabel label(SwitchId s) const;            // (w, l)

  // The topology with all switches, hosts and links (ports 0..k-1 down, k..2k-1 up).
  Topology build() const;

 private:
  KAryNTree(int k, int n) : k_(k), n_(n) {}
  std::uint32_t pow(int e) const;
  int k_;
  int n_;
};

}  // namespace ebb::fabric
