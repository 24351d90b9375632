#include "replay/in_band.h"

#include <cstdint>
#include <deque>
#include <limits>

#include <fmt/format.h>

namespace ebb::replay {

Result<InBandDef> inBandFromConfig(const config::InBandSpec& spec, bool gating) {
  InBandDef def;
  if (!spec.enabled()) {
    if (!spec.management_switch().empty() || spec.resilience() != config::SINGLE_LINK) {
      return invalidArgument(
          "gating.in_band: management_switch and resilience apply only with enabled: true");
    }
    return def;
  }
  if (!gating) {
    return invalidArgument(
        "gating.in_band.enabled: in-band control needs gating (policy ALL_ON gates nothing)");
  }
  switch (spec.resilience()) {
    case config::SINGLE_LINK:
      def.resilience = agent::Resilience::kSingleLink;
      break;
    case config::NONE:
      def.resilience = agent::Resilience::kNone;
      break;
    default:
      return invalidArgument(fmt::format(
          "gating.in_band.resilience: unknown value {} (SINGLE_LINK or NONE)", spec.resilience()));
  }
  def.enabled = true;
  def.managementSwitch = spec.management_switch();
  return def;
}

Result<fabric::SwitchId> managementSwitch(const InBandDef& def, const fabric::Topology& topo) {
  if (def.managementSwitch.empty()) {
    if (topo.numHosts() == 0) {
      return invalidArgument(
          "gating.in_band.management_switch: the fabric has no host; name the switch");
    }
    return topo.leafOf(fabric::HostId(0));
  }
  const std::optional<fabric::SwitchId> sw = topo.findSwitch(def.managementSwitch);
  if (!sw) {
    return invalidArgument(
        fmt::format("gating.in_band.management_switch: no switch \"{}\"", def.managementSwitch));
  }
  return *sw;
}

std::vector<fabric::SwitchId> nearerEnds(const fabric::Topology& topo, fabric::SwitchId root) {
  constexpr std::uint32_t kFar = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> dist(topo.numSwitches(), kFar);
  std::deque<fabric::SwitchId> queue{root};
  dist[root.value()] = 0;
  while (!queue.empty()) {
    const fabric::SwitchId s = queue.front();
    queue.pop_front();
    for (const fabric::Port& p : topo.sw(s).ports) {
      if (p.role == fabric::PortRole::kUnused || !topo.isSwitchLink(p.link)) continue;
      const fabric::Link& l = topo.link(p.link);
      const fabric::SwitchId peer = l.lower.sw == s ? l.upper.sw : l.lower.sw;
      if (dist[peer.value()] != kFar) continue;
      dist[peer.value()] = dist[s.value()] + 1;
      queue.push_back(peer);
    }
  }
  std::vector<fabric::SwitchId> ends(topo.numLinks());
  for (fabric::LinkId::rep_type i = 0; i < topo.numLinks(); ++i) {
    const fabric::Link& l = topo.link(fabric::LinkId(i));
    // Levels alternate along a link, so the two distances differ (ties: the upper end).
    ends[i] = l.lowerIsHost || dist[l.upper.sw.value()] <= dist[l.lower.sw.value()] ? l.upper.sw
                                                                                    : l.lower.sw;
  }
  return ends;
}

void attachInBand(agent::SafetyGuard& guard, const fabric::Topology& topo, fabric::SwitchId root,
                  agent::Resilience resilience, const fabric::LinkStates& initial) {
  guard.setInBand({root, {}, resilience});
  const std::vector<fabric::SwitchId> ends = nearerEnds(topo, root);
  for (fabric::LinkId::rep_type i = 0; i < topo.numLinks(); ++i) {
    const fabric::LinkId link(i);
    if (topo.isSwitchLink(link) && !initial.isFullyOn(link)) guard.setGate(link, ends[i]);
  }
}

const char* resilienceName(agent::Resilience r) {
  return r == agent::Resilience::kNone ? "NONE" : "SINGLE_LINK";
}

void fillInBandReport(const fabric::Topology& topo, fabric::SwitchId root,
                      agent::Resilience resilience, const agent::SafetyGuard& guard,
                      results::InBandReport& r) {
  r.set_management_switch(topo.sw(root).name);
  r.set_resilience(resilienceName(resilience));
  r.set_guard_checks(guard.checks());
  r.set_guard_refused(guard.refused());
}

}  // namespace ebb::replay
