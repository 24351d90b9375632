#include "fabric/dot_export.h"

#include <fmt/format.h>

namespace ebb::fabric {

void writeDot(const Topology& t, const MinimalTree& mt, std::ostream& out) {
  out << "graph fabric {\n  rankdir=TB;\n  node [shape=ellipse, fontsize=10];\n";
  for (int level = 0; level < t.depth(); ++level) {
    out << "  { rank=same;";
    for (SwitchId s : t.switchesAtLevel(level)) {
      out << fmt::format(" \"{}\"", t.sw(s).name);
    }
    out << " }\n";
  }
  for (SwitchId::rep_type s = 0; s < t.numSwitches(); ++s) {
    const bool inMt = mt.containsSwitch(SwitchId(s));
    out << fmt::format("  \"{}\" [style={}];\n", t.sw(SwitchId(s)).name,
                       inMt ? "\"filled,bold\", fillcolor=lightblue" : "solid");
  }
  out << "  { rank=same;";
  for (const Host& h : t.hosts())
    out << fmt::format(" \"{}\"", h.name);
  out << " }\n";
  for (const Host& h : t.hosts())
    out << fmt::format("  \"{}\" [shape=box];\n", h.name);
  for (LinkId::rep_type i = 0; i < t.numLinks(); ++i) {
    const Link& l = t.link(LinkId(i));
    const std::string lower = l.lowerIsHost ? t.host(l.host).name : t.sw(l.lower.sw).name;
    const bool inMt = mt.containsLink(LinkId(i));
    out << fmt::format("  \"{}\" -- \"{}\" [{}];\n", t.sw(l.upper.sw).name, lower,
                       inMt ? "penwidth=3, color=blue" : "penwidth=1, color=grey70");
  }
  out << "}\n";
}

}  // namespace ebb::fabric
