#include "fabric/link_states.h"

#include "fabric/minimal_tree.h"
#include "fabric/topology.h"

namespace ebb::fabric {

LinkStates LinkStates::allOn(const Topology& t) {
  return LinkStates(t.numLinks(), true);
}

LinkStates LinkStates::onlyMinimalTree(const Topology& t, const MinimalTree& mt) {
  LinkStates s(t.numLinks(), false);
  for (std::size_t l = 0; l < t.numLinks(); ++l) {
    const LinkId id(static_cast<std::uint32_t>(l));
    if (mt.containsLink(id)) s.setLink(id, true);
  }
  return s;
}

std::size_t LinkStates::countOn(Direction d) const {
  std::size_t n = 0;
  for (std::uint8_t b : bits_)
    n += (b & mask(d)) ? 1u : 0u;
  return n;
}

}  // namespace ebb::fabric
