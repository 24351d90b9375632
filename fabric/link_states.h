#pragma once

#include <cstdint>
#include <vector>

#include "fabric/ids.h"

namespace ebb::fabric {

class Topology;
class MinimalTree;

// Which link directions are on (usable). Gating acts per direction in the
// emulator; on InfiniBand both directions of a link change together.
class LinkStates {
 public:
  explicit LinkStates(std::size_t numLinks = 0, bool on = true)
      : bits_(numLinks, on ? kBoth : std::uint8_t{0}) {}
  static LinkStates allOn(const Topology& t);
  // Only the links of the minimal tree on (the paper's starting state).
  static LinkStates onlyMinimalTree(const Topology& t, const MinimalTree& mt);

  std::size_t numLinks() const { return bits_.size(); }
  bool isOn(LinkId l, Direction d) const { return (bits_[l.value()] & mask(d)) != 0; }
  bool isFullyOn(LinkId l) const { return bits_[l.value()] == kBoth; }
  bool isFullyOff(LinkId l) const { return bits_[l.value()] == 0; }
  void set(LinkId l, Direction d, bool on) {
    bits_[l.value()] = static_cast<std::uint8_t>(on ? (bits_[l.value()] | mask(d))
                                                    : (bits_[l.value()] & ~mask(d)));
  }
  void setLink(LinkId l, bool on) { bits_[l.value()] = on ? kBoth : std::uint8_t{0}; }
  std::size_t countOn(Direction d) const;

  bool operator==(const LinkStates&) const = default;

 private:
  static constexpr std::uint8_t kBoth = 3;
  static constexpr std::uint8_t mask(Direction d) {
    return static_cast<std::uint8_t>(1u << static_cast<unsigned>(d));
  }
  std::vector<std::uint8_t> bits_;
};

}  // namespace ebb::fabric
