#include "tools/topo_summary.h"

#include <fmt/format.h>

namespace ebb::tools {

namespace {
double percent(std::size_t part, std::size_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}
}  // namespace

TopoSummary summarize(const fabric::Topology& t, const fabric::MinimalTree& mt) {
  TopoSummary s;
  s.hosts = t.numHosts();
  s.switches = t.numSwitches();
  for (int l = 0; l < t.depth(); ++l)
    s.switchesPerLevel.push_back(t.switchesAtLevel(l).size());
  s.links = t.numLinks();
  s.hostLinks = t.numHosts();
  s.switchLinks = s.links - s.hostLinks;
  s.mtSwitches = mt.numSwitches();
  s.mtSwitchLinks = mt.numSwitchLinks();
  s.mtLinks = mt.numLinks();
  s.shape = t.isKAry() ? fmt::format("{}-ary {}-tree", t.k(), t.n())
            : !t.shape().empty()
                ? t.shape()
                : fmt::format("fat tree ({} level{})", t.depth(), t.depth() == 1 ? "" : "s");
  return s;
}

std::string formatText(const TopoSummary& s) {
  std::string out = fmt::format("fabric:        {}\n", s.shape);
  out += fmt::format("hosts:         {}\n", s.hosts);
  out += fmt::format("switches:      {} (", s.switches);
  for (std::size_t l = 0; l < s.switchesPerLevel.size(); ++l) {
    out += fmt::format("{}level {}: {}", l ? ", " : "", l, s.switchesPerLevel[l]);
  }
  out += ")\n";
  out += fmt::format("links:         {} ({} switch-to-switch, {} host)\n", s.links, s.switchLinks,
                     s.hostLinks);
  out += fmt::format("minimal tree:  {} of {} switches ({:.1f}%)\n", s.mtSwitches, s.switches,
                     percent(s.mtSwitches, s.switches));
  out += fmt::format("               {} of {} switch-to-switch links ({:.1f}%)\n", s.mtSwitchLinks,
                     s.switchLinks, percent(s.mtSwitchLinks, s.switchLinks));
  out += fmt::format("               {} of {} links with host links ({:.1f}%)\n", s.mtLinks,
                     s.links, percent(s.mtLinks, s.links));
  out += fmt::format("gateable:      {} switch-to-switch links may be switched off\n",
                     s.switchLinks - s.mtSwitchLinks);
  return out;
}

std::string formatJson(const TopoSummary& s) {
  std::string levels;
  for (std::size_t l = 0; l < s.switchesPerLevel.size(); ++l) {
    levels += fmt::format("{}{}", l ? ", " : "", s.switchesPerLevel[l]);
  }
  return fmt::format(
      "{{\n  \"shape\": \"{}\",\n  \"hosts\": {},\n  \"switches\": {},\n"
      "  \"switches_per_level\": [{}],\n  \"links\": {},\n  \"switch_links\": {},\n"
      "  \"host_links\": {},\n  \"mt_switches\": {},\n  \"mt_switch_links\": {},\n"
      "  \"mt_links\": {},\n  \"mt_switch_share\": {:.6f},\n  \"mt_switch_link_share\": "
      "{:.6f}\n}}\n",
      s.shape, s.hosts, s.switches, levels, s.links, s.switchLinks, s.hostLinks, s.mtSwitches,
      s.mtSwitchLinks, s.mtLinks, percent(s.mtSwitches, s.switches) / 100.0,
      percent(s.mtSwitchLinks, s.switchLinks) / 100.0);
}

}  // namespace ebb::tools
