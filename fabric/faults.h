#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric/ids.h"

namespace ebb::fabric {

class Topology;

// Which cables and switches have failed (docs/mechanisms.md §3.1). A link can
// fail whole or in one direction only (the emulator can fail one direction; on
// InfiniBand a port fails whole). A failed switch fails every link at its
// ports. Plain per-link and per-switch bytes: cheap to copy and to compare, so
// a caller can keep the last set and recompute only when it changes.
class FaultSet {
 public:
  // For a topology with no links and no switches; use FaultSet(topology).
  FaultSet() = default;
  // Nothing failed.
  explicit FaultSet(const Topology& t);

  void failLink(LinkId l);  // both directions
  void failLink(LinkId l, Direction d);
  // Undoes failLink for both directions; links of a failed switch stay failed.
  void repairLink(const Topology& t, LinkId l);
  // Undoes failLink for one direction.
  void repairLink(const Topology& t, LinkId l, Direction d);
  void failSwitch(const Topology& t, SwitchId s);
  void repairSwitch(const Topology& t, SwitchId s);

  // Whether that direction can carry traffic: not failed itself, and neither
  // end switch failed.
  bool usable(LinkId l, Direction d) const { return (dead_[l.value()] & mask(d)) == 0; }
  // Both directions usable: the cable can be part of a minimal tree.
  bool cableUsable(LinkId l) const { return dead_[l.value()] == 0; }
  // At least one direction unusable, whether failed itself or by a failed switch.
  bool linkFailed(LinkId l) const { return dead_[l.value()] != 0; }
  bool switchFailed(SwitchId s) const { return switchFailed_[s.value()] != 0; }

  bool empty() const { return numFailedLinks_ == 0 && numFailedSwitches_ == 0; }
  std::size_t numFailedSwitches() const { return numFailedSwitches_; }
  // Links failed themselves (not counting those failed only by a switch).
  std::size_t numFailedLinks() const { return numFailedLinks_; }

  // "no faults", or "switches failed: S0_0_0; links failed: S2_1_3[5] - S1_1_0[2] (up only)".
  std::string describe(const Topology& t) const;

  bool operator==(const FaultSet&) const = default;

 private:
  static constexpr std::uint8_t kBoth = 3;
  static constexpr std::uint8_t mask(Direction d) {
    return static_cast<std::uint8_t>(1u << static_cast<unsigned>(d));
  }
  void refresh(const Topology& t, LinkId l);

  std::vector<std::uint8_t> linkFailed_;    // per link: directions failed themselves
  std::vector<std::uint8_t> switchFailed_;  // per switch: 1 if failed
  std::vector<std::uint8_t> dead_;          // per link: directions unusable for any reason
  std::size_t numFailedLinks_ = 0;
  std::size_t numFailedSwitches_ = 0;
};

}  // namespace ebb::fabric
