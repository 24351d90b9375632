#include "fabric/leaf_reach.h"

namespace ebb::fabric {

LeafReach::LeafReach(const Topology& t) : topo_(t) {
  leaves_ = t.switchesAtLevel(t.depth() - 1);
  leafIndex_.assign(t.numSwitches(), 0);
  for (std::size_t i = 0; i < leaves_.size(); ++i)
    leafIndex_[leaves_[i].value()] = static_cast<std::uint32_t>(i);
  words_ = (leaves_.size() + 63) / 64;
  down_.assign(t.numSwitches() * words_, 0);
  reach_.assign(t.numSwitches() * words_, 0);
}

}  // namespace ebb::fabric
