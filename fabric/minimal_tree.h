#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/status.h"
#include "fabric/faults.h"
#include "fabric/topology.h"

namespace ebb::fabric {

struct Rehomed;

// The Minimal Tree: a spanning tree of the hosts that gating never touches.
// Built for any fat tree: the root is the root switch with the lowest GUID
// (then name) that every leaf can reach upward; each switch's designated up link is its
// lowest-numbered up port whose parent can still reach that root; the MT is every leaf plus the
// switches on the designated chains, with the designated links and all host
// links. On a k-ary n-tree this is exactly the paper's MT (up port k of every
// switch with w_l .. w_{n-2} = 0).
class MinimalTree {
 public:
  // E_NOT_FAT_TREE when no root is reachable upward from every leaf.
  static Result<MinimalTree> build(const Topology& topo);
  // Re-homing (docs/mechanisms.md §3.1): a new minimal tree over the cables
  // that survive `faults` (both directions usable), spanning the largest part
  // of the hosts it can. Never an error: hosts it cannot span are listed. With
  // no faults it equals build(topo) whenever that succeeds.
  static Rehomed build(const Topology& topo, const FaultSet& faults);

  // Invalid only for a re-homed tree that spans no host.
  SwitchId root() const { return root_; }
  bool containsSwitch(SwitchId s) const { return switchIn_[s.value()] != 0; }
  bool containsLink(LinkId l) const { return linkIn_[l.value()] != 0; }
  // The MT up port (label) of an MT switch; nullopt for the root and non-MT switches.
  std::optional<std::uint16_t> upPort(SwitchId s) const;

  std::size_t numSwitches() const { return numSwitches_; }
  std::size_t numSwitchLinks() const { return numSwitchLinks_; }  // switch-to-switch only
  std::size_t numLinks() const { return numLinks_; }              // host links included

  bool operator==(const MinimalTree&) const = default;

 private:
  static constexpr std::uint16_t kNone = 0xFFFF;
  template <class Usable, class Keep>
  static MinimalTree assemble(const Topology& t, SwitchId root, const Usable& usable,
                              const Keep& keepHost);

  SwitchId root_;
  std::vector<std::uint8_t> switchIn_;
  std::vector<std::uint8_t> linkIn_;
  std::vector<std::uint16_t> upPort_;
  std::size_t numSwitches_ = 0;
  std::size_t numSwitchLinks_ = 0;
  std::size_t numLinks_ = 0;
};

// The result of re-homing. A host is spanned by `tree` iff its cable survives
// and its leaf reaches the root over surviving cables; `outside` lists the
// others, ascending. `cutOff` is the subset of `outside` with no up*/down*
// path, in either direction, to or from any spanned host: physically cut off
// from the main part (its own cable failed, its leaf lost every way up, or it
// sits in a part the surviving cables separate from the root's). The hosts of
// `outside` that are not cut off can still reach some spanned hosts through
// links outside the tree; linksToRestore (fabric/recovery.h) turns those on.
//
// `oneWay` is the subset of `outside` joined to the spanned hosts in one
// direction only (a failed direction of its cable, or of every way up or
// down its leaf has): it can send to them but not hear from them, or the
// reverse, so a closed-loop rank there cannot finish either.
struct Rehomed {
  MinimalTree tree;
  std::vector<HostId> outside;
  std::vector<HostId> cutOff;
  std::vector<HostId> oneWay;
};

}  // namespace ebb::fabric
