#include "fabric/ibnetdiscover.h"

#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "common/file_io.h"
#include "common/guid.h"
#include "fabric/ibsim_netfile.h"

#include "fabric/topology_builder.h"

namespace ebb::fabric {

namespace {

// Routers are read (their cables checked like any other) but are not part of
// the fat tree: they and their cables are left out of the Topology.
enum class NodeType { kSwitch, kCa, kRouter };

struct Node {
  NodeType type;
  int numPorts;
  std::string id;    // the quoted id ("S-0002c9..." or the net file's name)
  std::string desc;  // node description from the comment, may be empty
  std::uint64_t guid;
  int line;
};

// A "(portguid)" after a port number: of the line's node or of its peer.
struct PortGuid {
  std::uint64_t guid;
  std::string nodeId;
  int port;
  int line;
};

struct PortDecl {
  std::size_t node;
  int port;
  std::string peerId;
  int peerPort;
  int line;
};

class ParseError {
 public:
  ParseError(int line, std::string rule) : line_(line), rule_(std::move(rule)) {}
  int line() const { return line_; }
  const std::string& rule() const { return rule_; }

 private:
  int line_;
  std::string rule_;
};

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool startsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

// Reads a positive decimal at the front of `s`, advancing it.
std::optional<int> takeInt(std::string_view& s) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || v < 0) return std::nullopt;
  s.remove_prefix(static_cast<std::size_t>(ptr - s.data()));
  return v;
}

// Reads "<text>" at the front of `s`, advancing past the closing quote.
std::optional<std::string> takeQuoted(std::string_view& s) {
  if (s.empty() || s.front() != '"') return std::nullopt;
  const auto close = s.find('"', 1);
  if (close == std::string_view::npos) return std::nullopt;
  std::string out(s.substr(1, close - 1));
  s.remove_prefix(close + 1);
  return out;
}

// Reads "[N]" at the front of `s`.
std::optional<int> takeBracketInt(std::string_view& s) {
  if (s.empty() || s.front() != '[') return std::nullopt;
  s.remove_prefix(1);
  auto v = takeInt(s);
  if (!v || s.empty() || s.front() != ']') return std::nullopt;
  s.remove_prefix(1);
  return v;
}

// The digits of a "[N]" at the front of `s` that takeBracketInt could not
// read as an int (too large): a range error, not a syntax one.
std::optional<std::string_view> oversizedBracketInt(std::string_view s) {
  if (s.empty() || s.front() != '[') return std::nullopt;
  const auto close = s.find(']');
  if (close == std::string_view::npos || close == 1) return std::nullopt;
  const std::string_view digits = s.substr(1, close - 1);
  if (digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  return digits;
}

void skipSpace(std::string_view& s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
}

// Skips an optional "(portguid)" and "[ext N]" after a port number; returns
// the port GUID when there is one.
std::optional<std::uint64_t> skipDecorations(std::string_view& s) {
  std::optional<std::uint64_t> guid;
  while (true) {
    if (!s.empty() && s.front() == '(') {
      const auto close = s.find(')');
      if (close == std::string_view::npos) return guid;
      guid = parseGuid(s.substr(1, close - 1));
      s.remove_prefix(close + 1);
    } else if (startsWith(s, "[ext")) {
      const auto close = s.find(']');
      if (close == std::string_view::npos) return guid;
      s.remove_prefix(close + 1);
    } else {
      return guid;
    }
  }
}

std::string descriptionFromComment(std::string_view rest) {
  const auto hash = rest.find('#');
  if (hash == std::string_view::npos) return {};
  std::string_view c = trim(rest.substr(hash + 1));
  auto q = takeQuoted(c);
  return q ? *q : std::string();
}

class Parser {
 public:
  void line(std::string_view raw, int lineNo) {
    std::string_view s = trim(raw);
    if (s.empty() || s.front() == '#') return;
    if (s.front() == '[') return portLine(s, lineNo);
    if (const auto eq = s.find('='); eq != std::string_view::npos && s.find('"') > eq) {
      return keyValue(s.substr(0, eq), s.substr(eq + 1), lineNo);
    }
    nodeHeader(s, lineNo);
  }

  Result<Topology> finish(const std::string& source, const std::vector<std::string>& roots,
                          const std::string& rootsField);

 private:
  void keyValue(std::string_view key, std::string_view value, int lineNo) {
    key = trim(key);
    value = trim(value);
    if (key == "switchguid" || key == "caguid" || key == "rtguid") {
      const auto paren = value.find('(');
      auto guid = parseGuid(trim(value.substr(0, paren)));
      if (!guid) throw ParseError(lineNo, fmt::format("{} must be a hexadecimal GUID", key));
      // As ibsim reads it: the GUID of the next node of that type, the ones
      // after it counting up (ibnetdiscover gives every node its own line).
      // caguid= before a Switch header went to the switch.
      const NodeType type = key == "switchguid" ? NodeType::kSwitch
                            : key == "caguid"   ? NodeType::kCa
                                                : NodeType::kRouter;
      nextGuid_[static_cast<std::size_t>(type)] = *guid;
    } else if (key != "vendid" && key != "devid" && key != "sysimgguid") {
      throw ParseError(lineNo, fmt::format("unknown setting '{}'", key));
    }
  }

  void nodeHeader(std::string_view s, int lineNo) {
    NodeType type;
    if (startsWith(s, "Switch")) {
      type = NodeType::kSwitch;
      s.remove_prefix(6);
    } else if (startsWith(s, "Hca")) {
      type = NodeType::kCa;
      s.remove_prefix(3);
    } else if (startsWith(s, "Ca")) {
      type = NodeType::kCa;
      s.remove_prefix(2);
    } else if (startsWith(s, "Rt")) {
      type = NodeType::kRouter;
      s.remove_prefix(2);
    } else {
      throw ParseError(lineNo,
                       "expected a node header (Switch, Ca, Hca or Rt), a port line '[N] ...' or "
                       "a setting 'key=value'");
    }
    skipSpace(s);
    auto ports = takeInt(s);
    if (!ports || *ports < 1 || *ports > static_cast<std::int64_t>(kMaxNetfilePorts)) {
      throw ParseError(
          lineNo, fmt::format("a node header needs a port count from 1 to {}", kMaxNetfilePorts));
    }
    skipSpace(s);
    auto id = takeQuoted(s);
    if (!id || id->empty()) throw ParseError(lineNo, "a node header needs a quoted node id");
    if (ids_.count(*id)) {
      throw ParseError(lineNo, fmt::format("node \"{}\" is declared twice (first at line {})", *id,
                                           nodes_[ids_[*id]].line));
    }
    std::optional<std::uint64_t>& next = nextGuid_[static_cast<std::size_t>(type)];
    std::uint64_t guid = next.value_or(0);
    // ibnetdiscover's own ids, "S-" / "H-" / "R-" and 16 hex digits, carry
    // the GUID; a name such as "h-2" does not.
    if (!next && id->size() == 18 && (*id)[1] == '-' &&
        ((*id)[0] == 'S' || (*id)[0] == 'H' || (*id)[0] == 'R')) {
      guid = parseGuid(std::string_view(*id).substr(2)).value_or(0);
    }
    if (next) next = *next + 1;
    if (guid != 0) {
      // Two nodes with one GUID would be one node to every MAD ebb sends.
      auto [it, fresh] = guids_.emplace(guid, nodes_.size());
      if (!fresh) {
        const Node& first = nodes_[it->second];
        throw ParseError(lineNo, fmt::format("node \"{}\" has GUID 0x{:016x}, already the GUID "
                                             "of \"{}\" (line {}): every node has its own GUID",
                                             *id, guid, first.id, first.line));
      }
    }
    ids_[*id] = nodes_.size();
    nodes_.push_back({type, *ports, *id, descriptionFromComment(s), guid, lineNo});
  }

  void portLine(std::string_view s, int lineNo) {
    if (nodes_.empty()) throw ParseError(lineNo, "a port line before any node header");
    const Node& node = nodes_.back();
    const std::string_view atPort = s;
    auto port = takeBracketInt(s);
    if (!port) {
      if (auto digits = oversizedBracketInt(atPort)) {
        throw ParseError(lineNo, fmt::format("port {} is out of range: \"{}\" has ports 1..{}",
                                             *digits, node.id, node.numPorts));
      }
      throw ParseError(lineNo, "a port line starts with '[<port number>]'");
    }
    if (*port < 1 || *port > node.numPorts) {
      throw ParseError(lineNo, fmt::format("port {} is out of range: \"{}\" has ports 1..{}", *port,
                                           node.id, node.numPorts));
    }
    const std::optional<std::uint64_t> guid = skipDecorations(s);
    skipSpace(s);
    auto peer = takeQuoted(s);
    if (!peer || peer->empty()) {
      throw ParseError(lineNo, "a port line needs the quoted id of its peer node");
    }
    const std::string_view atPeerPort = s;
    auto peerPort = takeBracketInt(s);
    if (!peerPort) {
      if (auto digits = oversizedBracketInt(atPeerPort)) {
        throw ParseError(lineNo,
                         fmt::format("peer port {} is out of range: a node has at most {} ports",
                                     *digits, kMaxNetfilePorts));
      }
    }
    if (!peerPort) {
      throw ParseError(lineNo, "the peer node id must be followed by '[<port number>]'");
    }
    if (*peerPort < 1) {
      throw ParseError(lineNo, fmt::format("peer port {} of \"{}\" is out of range: ports are "
                                           "numbered from 1",
                                           *peerPort, *peer));
    }
    if (guid) portGuids_.push_back({*guid, node.id, *port, lineNo});
    if (const auto peerGuid = skipDecorations(s)) {
      portGuids_.push_back({*peerGuid, *peer, *peerPort, lineNo});
    }
    const std::size_t nodeIndex = nodes_.size() - 1;
    const auto key = std::make_pair(nodeIndex, *port);
    if (declared_.count(key)) {
      throw ParseError(lineNo, fmt::format("port {} of \"{}\" is listed twice", *port, node.id));
    }
    declared_[key] = decls_.size();
    decls_.push_back({nodeIndex, *port, *peer, *peerPort, lineNo});
  }

  std::vector<Node> nodes_;
  std::unordered_map<std::string, std::size_t> ids_;
  std::unordered_map<std::uint64_t, std::size_t> guids_;  // GUID -> node
  std::vector<PortDecl> decls_;
  std::vector<PortGuid> portGuids_;  // in file order
  std::map<std::pair<std::size_t, int>, std::size_t> declared_;
  // Per node type (switch, CA, router): the GUID the next one gets, from
  // the last switchguid= / caguid= / rtguid= (ibsim's GUID bases).
  std::optional<std::uint64_t> nextGuid_[3];
};

Result<Topology> Parser::finish(const std::string& source, const std::vector<std::string>& roots,
                                const std::string& rootsField) {
  const auto fail = [&](int lineNo, const std::string& rule) -> Result<Topology> {
    return {ErrorCode::kParse, fmt::format("{}:{}: {}", source, lineNo, rule)};
  };
  if (nodes_.empty()) return fail(0, "no nodes: the file is empty or not ibnetdiscover output");
  // Names: descriptions when present and unique (also against every other
  // node's id), else the description and the id, else the id. A name that
  // still repeats is refused: faults and reports find a switch by name.
  std::map<std::string, int> descCount;
  for (const Node& n : nodes_)
    ++descCount[n.desc];
  const auto nameOf = [&](const Node& n) {
    if (n.desc.empty()) return n.id;
    const auto other = ids_.find(n.desc);
    const bool clash =
        descCount[n.desc] > 1 || (other != ids_.end() && nodes_[other->second].id != n.id);
    return clash ? n.desc + " " + n.id : n.desc;
  };
  std::map<std::string, int> lineOfName;
  for (const Node& n : nodes_) {
    if (n.type == NodeType::kRouter) continue;
    const auto [it, fresh] = lineOfName.emplace(nameOf(n), n.line);
    if (!fresh) {
      return fail(n.line, fmt::format("two nodes would both be named \"{}\" (lines {} and {}): "
                                      "give them distinct descriptions or ids",
                                      it->first, it->second, n.line));
    }
  }
  // Two ports with one GUID would be one port to a subnet manager. The ports
  // of a switch share its port GUID (IB gives a switch one, on port 0).
  std::map<std::uint64_t, std::pair<std::size_t, int>> portOfGuid;  // -> (node, port)
  std::map<std::uint64_t, const PortGuid*> firstOfGuid;
  for (const PortGuid& g : portGuids_) {
    const auto it = ids_.find(g.nodeId);
    if (it == ids_.end() || g.guid == 0) continue;  // an undeclared peer fails below
    const int port = nodes_[it->second].type == NodeType::kSwitch ? 0 : g.port;
    const auto [at, fresh] = portOfGuid.emplace(g.guid, std::make_pair(it->second, port));
    if (fresh) {
      firstOfGuid[g.guid] = &g;
    } else if (at->second != std::make_pair(it->second, port)) {
      const PortGuid& first = *firstOfGuid[g.guid];
      return fail(g.line,
                  fmt::format("port \"{}\"[{}] has port GUID 0x{:016x}, already the GUID "
                              "of port \"{}\"[{}] (line {}): every port has its own GUID",
                              g.nodeId, g.port, g.guid, first.nodeId, first.port, first.line));
    }
  }
  TopologyBuilder b;
  std::vector<std::uint32_t> handle(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    std::string name = nameOf(n);
    if (n.type == NodeType::kRouter) continue;
    if (n.type == NodeType::kSwitch) {
      // Port 0 is the switch management port; cabled ports are 1..N (labels 0..N-1).
      handle[i] = b.addSwitch(std::move(name), n.guid, n.numPorts).value();
    } else {
      handle[i] = b.addHost(std::move(name), n.guid).value();
    }
  }
  std::set<std::pair<std::size_t, int>> done;
  for (const PortDecl& d : decls_) {
    const auto it = ids_.find(d.peerId);
    if (it == ids_.end()) {
      return fail(d.line, fmt::format("peer \"{}\" is never declared (truncated file?)", d.peerId));
    }
    const std::size_t peer = it->second;
    const Node& pn = nodes_[peer];
    if (d.peerPort > pn.numPorts) {
      return fail(d.line, fmt::format("peer port {} is out of range: \"{}\" has ports 1..{}",
                                      d.peerPort, pn.id, pn.numPorts));
    }
    if (const auto back = declared_.find({peer, d.peerPort}); back != declared_.end()) {
      const PortDecl& o = decls_[back->second];
      if (o.peerId != nodes_[d.node].id || o.peerPort != d.port) {
        return fail(d.line, fmt::format("the two ends disagree: \"{}\"[{}] names \"{}\"[{}], but "
                                        "line {} says \"{}\"[{}] goes to \"{}\"[{}]",
                                        nodes_[d.node].id, d.port, pn.id, d.peerPort, o.line, pn.id,
                                        d.peerPort, o.peerId, o.peerPort));
      }
    }
    if (done.count({d.node, d.port})) continue;
    done.insert({d.node, d.port});
    done.insert({peer, d.peerPort});
    const Node& n = nodes_[d.node];
    if (n.type == NodeType::kRouter || pn.type == NodeType::kRouter) continue;
    Status st;
    const auto label = [](int p) { return static_cast<std::uint16_t>(p - 1); };
    if (n.type == NodeType::kSwitch && pn.type == NodeType::kSwitch) {
      st = b.connectSwitches({SwitchId(handle[d.node]), label(d.port)},
                             {SwitchId(handle[peer]), label(d.peerPort)});
    } else if (n.type == NodeType::kCa && pn.type == NodeType::kSwitch) {
      st = b.connectHost(HostId(handle[d.node]), label(d.port),
                         {SwitchId(handle[peer]), label(d.peerPort)});
    } else if (n.type == NodeType::kSwitch && pn.type == NodeType::kCa) {
      st = b.connectHost(HostId(handle[peer]), label(d.peerPort),
                         {SwitchId(handle[d.node]), label(d.port)});
    } else {
      return {ErrorCode::kNotFatTree,
              fmt::format("{}:{}: hosts \"{}\" and \"{}\" are cabled directly to each other",
                          source, d.line, n.id, pn.id)};
    }
    if (!st.isOk()) return fail(d.line, st.message());
  }
  if (!roots.empty()) {
    if (Status st = b.setRoots(roots, rootsField); !st.isOk()) return st;
  }
  Result<Topology> t = b.build();
  if (!t) return {t.status().code(), source + ": " + t.status().message()};
  return t;
}

}  // namespace

Result<Topology> parseIbnetdiscover(std::istream& in, const std::string& sourceName,
                                    const std::vector<std::string>& roots,
                                    const std::string& rootsField) {
  Parser parser;
  std::string text;
  int lineNo = 0;
  try {
    for (bool tooLong = false;;) {
      const bool got = readBoundedLine(in, text, tooLong);
      if (tooLong) throw ParseError(lineNo + 1, lineTooLongRule("topology file"));
      if (!got) break;
      ++lineNo;
      if (const std::string rule = binaryLineRule(text, "topology file"); !rule.empty())
        throw ParseError(lineNo, rule);
      parser.line(text, lineNo);
    }
  } catch (const ParseError& e) {
    return {ErrorCode::kParse, fmt::format("{}:{}: {}", sourceName, e.line(), e.rule())};
  }
  return parser.finish(sourceName, roots, rootsField);
}

Result<Topology> readIbnetdiscoverFile(const std::string& path,
                                       const std::vector<std::string>& roots,
                                       const std::string& rootsField) {
  if (Status s = checkReadableFile(path, "topology file"); !s.isOk()) return s;
  std::ifstream in(path);
  if (!in) return {ErrorCode::kIo, fmt::format("cannot open topology file {}", path)};
  skipUtf8Bom(in);
  return parseIbnetdiscover(in, path, roots, rootsField);
}

}  // namespace ebb::fabric
