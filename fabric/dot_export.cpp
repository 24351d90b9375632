#include "fabric/dot_export.h"

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace ebb::fabric {

namespace {

// A DOT quoted string (ID) of `name`: a quote and a backslash are escaped, so
// a name ending in a backslash does not swallow the closing quote, and a line
// break becomes \n. Graphviz reads "\\" as the node name's backslash and
// shows one (the label escapes of escString).
std::string dotQuoted(std::string_view name) {
  std::string q = "\"";
  for (const char c : name) {
    switch (c) {
      case '"':
        q += "\\\"";
        break;
      case '\\':
        q += "\\\\";
        break;
      case '\n':
        q += "\\n";
        break;
      case '\r':
        q += "\\r";
        break;
      default:
        q += c;
    }
  }
  q += '"';
  return q;
}

}  // namespace

void writeDot(const Topology& t, const MinimalTree& mt, std::ostream& out) {
  out << "graph fabric {\n  rankdir=TB;\n  node [shape=ellipse, fontsize=10];\n";
  for (int level = 0; level < t.depth(); ++level) {
    out << "  { rank=same;";
    for (SwitchId s : t.switchesAtLevel(level)) {
      out << " " << dotQuoted(t.sw(s).name);
    }
    out << " }\n";
  }
  for (SwitchId::rep_type s = 0; s < t.numSwitches(); ++s) {
    const bool inMt = mt.containsSwitch(SwitchId(s));
    out << fmt::format("  {} [style={}];\n", dotQuoted(t.sw(SwitchId(s)).name),
                       inMt ? "\"filled,bold\", fillcolor=lightblue" : "solid");
  }
  out << "  { rank=same;";
  for (const Host& h : t.hosts())
    out << " " << dotQuoted(h.name);
  out << " }\n";
  for (const Host& h : t.hosts())
    out << fmt::format("  {} [shape=box];\n", dotQuoted(h.name));
  for (LinkId::rep_type i = 0; i < t.numLinks(); ++i) {
    const Link& l = t.link(LinkId(i));
    const std::string lower = l.lowerIsHost ? t.host(l.host).name : t.sw(l.lower.sw).name;
    const bool inMt = mt.containsLink(LinkId(i));
    out << fmt::format("  {} -- {} [{}];\n", dotQuoted(t.sw(l.upper.sw).name), dotQuoted(lower),
                       inMt ? "penwidth=3, color=blue" : "penwidth=1, color=grey70");
  }
  out << "}\n";
}

}  // namespace ebb::fabric
