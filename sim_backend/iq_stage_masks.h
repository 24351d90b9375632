#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace ebb::sim::iq {

// The input VCs of every switch input by pipeline stage, a bit per VC, and
// per switch a bit per input that has any VC in the stage: a stage visits
// only those inputs, in ascending order (the order of a full scan).
class StageMasks {
 public:
  enum Stage : std::uint8_t { kRouting, kVcAlloc, kReady };

  // `inputs[s]`: how many inputs switch s has; its inputs are numbered
  // consecutively after those of switch s - 1.
  void init(const std::vector<std::uint32_t>& inputs) {
    firstInput_.assign(inputs.size() + 1, 0);
    firstWord_.assign(inputs.size() + 1, 0);
    for (std::size_t s = 0; s < inputs.size(); ++s) {
      firstInput_[s + 1] = firstInput_[s] + inputs[s];
      firstWord_[s + 1] = firstWord_[s] + (inputs[s] + 63) / 64;
    }
    const std::uint32_t n = firstInput_.back();
    masks_.assign(n, {});
    for (std::size_t s = 0; s < inputs.size(); ++s) {
      for (std::uint32_t k = 0; k < inputs[s]; ++k) {
        masks_[firstInput_[s] + k].word = firstWord_[s] + k / 64;
        masks_[firstInput_[s] + k].bit = static_cast<std::uint8_t>(k % 64);
      }
    }
    for (auto& w : any_)
      w.assign(firstWord_.back(), 0);
  }

  std::uint16_t get(std::uint32_t input, Stage s) const { return masks_[input].stage[s]; }

  void set(std::uint32_t input, Stage s, std::uint16_t bits) {
    Masks& m = masks_[input];
    if (m.stage[s] == 0 && bits != 0) any_[s][m.word] |= std::uint64_t{1} << m.bit;
    m.stage[s] = static_cast<std::uint16_t>(m.stage[s] | bits);
  }

  void assign(std::uint32_t input, Stage s, std::uint16_t bits) {
    clear(input, s, 0xFFFF);
    set(input, s, bits);
  }

  void clear(std::uint32_t input, Stage s, std::uint16_t bits) {
    Masks& m = masks_[input];
    if (m.stage[s] == 0) return;
    m.stage[s] = static_cast<std::uint16_t>(m.stage[s] & ~bits);
    if (m.stage[s] == 0) any_[s][m.word] &= ~(std::uint64_t{1} << m.bit);
  }

  // Whether some input of switch `sw` has a VC in stage `s`.
  bool any(std::uint32_t sw, Stage s) const {
    for (std::uint32_t w = firstWord_[sw]; w < firstWord_[sw + 1]; ++w) {
      if (any_[s][w] != 0) return true;
    }
    return false;
  }

  // The one input of switch `sw` with a VC in stage `s`, if there is exactly
  // one (and the switch has at most 64 inputs); else kNoInput.
  static constexpr std::uint32_t kNoInput = 0xFFFFFFFF;
  std::uint32_t onlyInput(std::uint32_t sw, Stage s) const {
    const std::uint32_t w = firstWord_[sw];
    if (firstWord_[sw + 1] != w + 1) return kNoInput;
    const std::uint64_t bits = any_[s][w];
    if (bits == 0 || (bits & (bits - 1)) != 0) return kNoInput;
    return firstInput_[sw] + static_cast<std::uint32_t>(std::countr_zero(bits));
  }

  // Calls f(input) for each input of switch `sw` with a VC in stage `s`.
  // f may change the masks of that input only.
  template <class F>
  void forEach(std::uint32_t sw, Stage s, F&& f) const {
    for (std::uint32_t w = firstWord_[sw]; w < firstWord_[sw + 1]; ++w) {
      const std::uint32_t base = firstInput_[sw] + (w - firstWord_[sw]) * 64;
      for (std::uint64_t bits = any_[s][w]; bits != 0; bits &= bits - 1)
        f(base + static_cast<std::uint32_t>(std::countr_zero(bits)));
    }
  }

 private:
  struct Masks {
    std::uint16_t stage[3] = {0, 0, 0};
    std::uint8_t bit = 0;    // its bit in any_ ...
    std::uint32_t word = 0;  // ... in this word
  };
  std::vector<Masks> masks_;               // per input
  std::vector<std::uint32_t> firstInput_;  // per switch, and the total
  std::vector<std::uint32_t> firstWord_;   // per switch, and the total
  std::vector<std::uint64_t> any_[3];      // per stage: a bit per input
};

}  // namespace ebb::sim::iq
