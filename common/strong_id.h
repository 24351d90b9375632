#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>

namespace ebb {

// A typed index: SwitchId and HostId cannot be mixed up or passed as bare ints.
template <class Tag, class Rep = std::uint32_t>
class StrongId {
 public:
  using rep_type = Rep;
  static constexpr Rep kInvalid = std::numeric_limits<Rep>::max();

  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep value) : value_(value) {}

  constexpr Rep value() const { return value_; }
  constexpr bool valid() const { return value_ != kInvalid; }
  constexpr auto operator<=>(const StrongId&) const = default;

 private:
  Rep value_ = kInvalid;
};

}  // namespace ebb

template <class Tag, class Rep>
struct std::hash<ebb::StrongId<Tag, Rep>> {
  std::size_t operator()(const ebb::StrongId<Tag, Rep>& id) const noexcept {
    return std::hash<Rep>{}(id.value());
  }
};
