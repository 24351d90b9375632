#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "fabric/connectivity.h"
#include "fabric/link_states.h"
#include "fabric/minimal_tree.h"

namespace ebb::agent {

// The last line of defence (DESIGN.md safety invariants 1 and 2): it keeps the
// process-wide view of which link directions are on and refuses any turn-off
// of a minimal-tree link, or one after which some host pair has no path.
class SafetyGuard {
 public:
  SafetyGuard(const fabric::Topology& topo, const fabric::MinimalTree& mt,
              fabric::LinkStates initial);

  // OK, or E_INVALID saying why the direction must stay on. Does not change state.
  Status checkTurnOff(fabric::LinkId link, fabric::Direction dir);
  void recordOn(fabric::LinkId link, fabric::Direction dir) { states_.set(link, dir, true); }
  void recordOff(fabric::LinkId link, fabric::Direction dir) { states_.set(link, dir, false); }
  // Proves the current view connected (tests call this after every change).
  Status checkAll();
  const fabric::LinkStates& states() const { return states_; }
  std::uint64_t refused() const { return refused_; }
  std::uint64_t checks() const { return checks_; }

 private:
  const fabric::Topology& topo_;
  const fabric::MinimalTree& mt_;
  fabric::LinkStates states_;
  fabric::Connectivity conn_;
  std::uint64_t refused_ = 0;
  std::uint64_t checks_ = 0;
};

}  // namespace ebb::agent
