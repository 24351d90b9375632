#include "fabric/faults.h"

#include <fmt/format.h>

#include "fabric/topology.h"

namespace ebb::fabric {

FaultSet::FaultSet(const Topology& t)
    : linkFailed_(t.numLinks(), 0), switchFailed_(t.numSwitches(), 0), dead_(t.numLinks(), 0) {}

void FaultSet::failLink(LinkId l) {
  if (linkFailed_[l.value()] == 0) ++numFailedLinks_;
  linkFailed_[l.value()] = kBoth;
  dead_[l.value()] = kBoth;
}

void FaultSet::failLink(LinkId l, Direction d) {
  if (linkFailed_[l.value()] == 0) ++numFailedLinks_;
  linkFailed_[l.value()] |= mask(d);
  dead_[l.value()] |= mask(d);
}

void FaultSet::repairLink(const Topology& t, LinkId l) {
  if (linkFailed_[l.value()] != 0) --numFailedLinks_;
  linkFailed_[l.value()] = 0;
  refresh(t, l);
}

void FaultSet::repairLink(const Topology& t, LinkId l, Direction d) {
  if (linkFailed_[l.value()] == 0) return;
  linkFailed_[l.value()] &= static_cast<std::uint8_t>(~mask(d));
  if (linkFailed_[l.value()] == 0) --numFailedLinks_;
  refresh(t, l);
}

void FaultSet::failSwitch(const Topology& t, SwitchId s) {
  if (switchFailed_[s.value()] != 0) return;
  switchFailed_[s.value()] = 1;
  ++numFailedSwitches_;
  for (const Port& p : t.sw(s).ports) {
    if (p.role != PortRole::kUnused) dead_[p.link.value()] = kBoth;
  }
}

void FaultSet::repairSwitch(const Topology& t, SwitchId s) {
  if (switchFailed_[s.value()] == 0) return;
  switchFailed_[s.value()] = 0;
  --numFailedSwitches_;
  for (const Port& p : t.sw(s).ports) {
    if (p.role != PortRole::kUnused) refresh(t, p.link);
  }
}

// Recomputes a link's unusable directions from its own failure and its ends.
void FaultSet::refresh(const Topology& t, LinkId l) {
  const Link& link = t.link(l);
  const bool endFailed =
      switchFailed(link.upper.sw) || (!link.lowerIsHost && switchFailed(link.lower.sw));
  dead_[l.value()] = endFailed ? kBoth : linkFailed_[l.value()];
}

std::string FaultSet::describe(const Topology& t) const {
  if (empty()) return "no faults";
  std::string out;
  if (numFailedSwitches_ > 0) {
    out += "switches failed:";
    const char* sep = " ";
    for (std::size_t s = 0; s < switchFailed_.size(); ++s) {
      if (!switchFailed_[s]) continue;
      out += sep + t.sw(SwitchId(static_cast<std::uint32_t>(s))).name;
      sep = ", ";
    }
  }
  if (numFailedLinks_ > 0) {
    if (!out.empty()) out += "; ";
    out += "links failed:";
    const char* sep = " ";
    for (std::size_t l = 0; l < linkFailed_.size(); ++l) {
      const std::uint8_t bits = linkFailed_[l];
      if (bits == 0) continue;
      const char* only = bits == kBoth                  ? ""
                         : bits == mask(Direction::kUp) ? " (up only)"
                                                        : " (down only)";
      out +=
          fmt::format("{}{}{}", sep, t.describeLink(LinkId(static_cast<std::uint32_t>(l))), only);
      sep = ", ";
    }
  }
  return out;
}

}  // namespace ebb::fabric
