#include "ib_backend/topology_survey.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace ebb::ib {

using fabric::LinkId;
using fabric::PortId;
using Kind = PortSighting::Kind;

const char* linkFindingName(LinkFinding f) {
  switch (f) {
    case LinkFinding::kUp:
      return "up";
    case LinkFinding::kDisabled:
      return "disabled";
    case LinkFinding::kHostDown:
      return "host down";
    case LinkFinding::kDown:
      return "down";
    case LinkFinding::kMissing:
      return "missing";
    case LinkFinding::kMoved:
      return "moved";
    case LinkFinding::kUnverified:
      return "unverified";
  }
  return "?";
}

const char* differenceKindName(TopologyDifference::Kind k) {
  switch (k) {
    case TopologyDifference::Kind::kMissing:
      return "missing";
    case TopologyDifference::Kind::kExtra:
      return "extra";
    case TopologyDifference::Kind::kMoved:
      return "moved";
  }
  return "?";
}

std::string TopologySurvey::listing(const std::string& indent) const {
  std::string out;
  for (const TopologyDifference& d : differences) {
    if (!out.empty()) out += '\n';
    out += indent + differenceKindName(d.kind) + ": " + d.text;
  }
  return out;
}

namespace {

// One end of a cable: a node GUID and an IB port number.
struct End {
  std::uint64_t guid = 0;
  std::uint8_t port = 0;
  auto operator<=>(const End&) const = default;
};
using Cable = std::pair<End, End>;  // ends in order

class Comparison {
 public:
  Comparison(const fabric::Topology& topo, const std::vector<std::vector<PortSighting>>& seen)
      : topo_(topo), seen_(seen), found_(topo.numLinks()) {
    for (std::size_t l = 0; l < topo.numLinks(); ++l) {
      const fabric::Link& L = topo.links()[l];
      const LinkId id(static_cast<std::uint32_t>(l));
      configured_[endOf(L.upper)] = id;
      if (L.lowerIsHost) {
        const fabric::Host& h = topo.host(L.host);
        configured_[End{h.guid, static_cast<std::uint8_t>(h.portIndex + 1)}] = id;
      } else {
        configured_[endOf(L.lower)] = id;
      }
    }
  }

  TopologySurvey run() {
    std::set<Cable> cables;  // each fabric cable once, though seen from both ends
    for (std::size_t s = 0; s < seen_.size(); ++s) {
      const fabric::Switch& sw = topo_.switches()[s];
      for (std::size_t p = 0; p < seen_[s].size(); ++p) {
        const PortSighting& x = seen_[s][p];
        if (x.kind != Kind::kPeer) continue;
        isSwitch_[x.peerGuid] = x.peerIsSwitch;
        const End a{sw.guid, static_cast<std::uint8_t>(p + 1)}, b{x.peerGuid, x.peerPort};
        cables.insert(std::minmax(a, b));
      }
    }
    for (const Cable& c : cables) {
      const auto l = linkAt(c.first);
      if (l && l == linkAt(c.second)) found_[l->value()] = LinkFinding::kUp;
    }
    for (const Cable& c : cables) {
      const auto la = linkAt(c.first), lb = linkAt(c.second);
      if (la && la == lb) continue;
      if (!la && !lb) {
        add(TopologyDifference::Kind::kExtra,
            fmt::format("{}: in the fabric, not in the topology", cableName(c.first, c.second)));
        continue;
      }
      std::string was;
      for (const auto& l : {la, lb}) {
        if (!l) continue;
        found_[l->value()] = LinkFinding::kMoved;
        was += fmt::format("{}{}", was.empty() ? "" : " and ", linkName(*l));
      }
      add(TopologyDifference::Kind::kMoved,
          fmt::format("the fabric has {} where the topology has {}", cableName(c.first, c.second),
                      was));
    }
    for (std::size_t l = 0; l < found_.size(); ++l) {
      if (!found_[l]) classifyUnseen(LinkId(static_cast<std::uint32_t>(l)));
    }
    TopologySurvey out;
    for (const auto& f : found_)
      out.links.push_back(*f);
    std::stable_sort(diffs_.begin(), diffs_.end(), [](const auto& a, const auto& b) {
      auto rank = [](TopologyDifference::Kind k) {
        return k == TopologyDifference::Kind::kMissing ? 0
               : k == TopologyDifference::Kind::kMoved ? 1
                                                       : 2;
      };
      return rank(a.kind) < rank(b.kind);
    });
    out.differences = std::move(diffs_);
    out.unverified = std::move(unverified_);
    return out;
  }

 private:
  End endOf(PortId p) const {
    return End{topo_.sw(p.sw).guid, static_cast<std::uint8_t>(p.index + 1)};
  }
  std::optional<LinkId> linkAt(const End& e) const {
    const auto it = configured_.find(e);
    return it == configured_.end() ? std::nullopt : std::optional<LinkId>(it->second);
  }
  // "S1_0[3] (0x0002c90000000101)", "H7[1]", or an unknown node by GUID.
  std::string name(const End& e) const {
    if (const auto sw = topo_.findSwitchByGuid(e.guid)) {
      return fmt::format("{}[{}] (0x{:016x})", topo_.sw(*sw).name, e.port, e.guid);
    }
    for (const fabric::Host& h : topo_.hosts()) {
      if (h.guid == e.guid) return fmt::format("{}[{}] (0x{:016x})", h.name, e.port, e.guid);
    }
    const auto it = isSwitch_.find(e.guid);
    return fmt::format("{} 0x{:016x}[{}] (not in the topology)",
                       it != isSwitch_.end() && it->second ? "switch" : "node", e.guid, e.port);
  }
  // A cable for humans: the end nearer the hosts first (a host, then the
  // deeper switch), nodes the topology does not know last.
  std::string cableName(const End& a, const End& b) const {
    auto depth = [&](const End& e) {
      if (const auto sw = topo_.findSwitchByGuid(e.guid)) return topo_.sw(*sw).level;
      for (const fabric::Host& h : topo_.hosts()) {
        if (h.guid == e.guid) return topo_.depth();
      }
      return -1;
    };
    const bool swap = depth(b) > depth(a) || (depth(b) == depth(a) && b < a);
    return swap ? fmt::format("{} - {}", name(b), name(a))
                : fmt::format("{} - {}", name(a), name(b));
  }
  std::string linkName(LinkId l) const {
    const fabric::Link& L = topo_.link(l);
    if (L.lowerIsHost) {
      const fabric::Host& h = topo_.host(L.host);
      return fmt::format("{} - {}", name(endOf(L.upper)),
                         name(End{h.guid, static_cast<std::uint8_t>(h.portIndex + 1)}));
    }
    return fmt::format("{} - {}", name(endOf(L.lower)), name(endOf(L.upper)));
  }
  // Whether the switch of `p` was read and has that port.
  bool hasPort(PortId p) const { return p.index < seen_[p.sw.value()].size(); }
  // What port `p` showed; a port the switch does not have reads as no peer.
  PortSighting sighting(PortId p) const {
    const auto& ports = seen_[p.sw.value()];
    if (p.index < ports.size()) return ports[p.index];
    PortSighting x;
    if (!ports.empty()) {
      x.kind = Kind::kNoPeer;
      x.state = fmt::format("no such port (the switch has {})", ports.size());
    }
    return x;
  }
  std::string reads(PortId p, const PortSighting& x) const {
    const std::string where = topo_.describePort(p);
    switch (x.kind) {
      case Kind::kNotRead:
        return fmt::format("{} is out of reach", topo_.sw(p.sw).name);
      case Kind::kSilent:
        return fmt::format("{} reads {} but nothing answered through it", where, x.state);
      default:
        return fmt::format("{} reads {}", where, x.state);
    }
  }

  // A configured link no fabric cable accounts for: the states of its ends.
  void classifyUnseen(LinkId l) {
    const fabric::Link& L = topo_.link(l);
    const PortSighting up = sighting(L.upper);
    std::optional<PortSighting> low;
    if (!L.lowerIsHost) low = sighting(L.lower);
    LinkFinding& f = *(found_[l.value()] = LinkFinding::kUnverified);
    if (up.kind == Kind::kDisabled || (low && low->kind == Kind::kDisabled)) {
      f = LinkFinding::kDisabled;
    } else if (!low && up.kind == Kind::kNoPeer) {
      f = LinkFinding::kHostDown;
    } else if (low && up.kind == Kind::kNoPeer && low->kind == Kind::kNoPeer && hasPort(L.upper) &&
               hasPort(L.lower)) {
      // Both ports there, nothing trained: a cable out (pulled, dead) reads
      // so, as one that was never laid would. Taken as a failed cable: the
      // proofs count on it no more than on any failure, so a topology
      // that names one too many is safe, and a restart during an outage
      // keeps the fabric guarded (docs/ib_agent.md).
      f = LinkFinding::kDown;
    } else if (low && up.kind == Kind::kNoPeer && low->kind == Kind::kNoPeer) {
      f = LinkFinding::kMissing;
      add(TopologyDifference::Kind::kMissing,
          fmt::format("{}: in the topology, not in the fabric ({}, {})", linkName(l),
                      reads(L.lower, *low), reads(L.upper, up)));
    }
    if (f != LinkFinding::kUnverified) return;
    // An end out of reach or silent: what each end could tell.
    std::string why;
    if (low && low->kind != Kind::kNoPeer) why = reads(L.lower, *low);
    if (up.kind != Kind::kNoPeer) why += (why.empty() ? "" : "; ") + reads(L.upper, up);
    unverified_.push_back(fmt::format("{}: {}", topo_.describeLink(l), why));
  }

  void add(TopologyDifference::Kind k, std::string text) { diffs_.push_back({k, std::move(text)}); }

  const fabric::Topology& topo_;
  const std::vector<std::vector<PortSighting>>& seen_;
  std::vector<std::optional<LinkFinding>> found_;
  std::map<End, LinkId> configured_;
  std::map<std::uint64_t, bool> isSwitch_;
  std::vector<TopologyDifference> diffs_;
  std::vector<std::string> unverified_;
};

}  // namespace

TopologySurvey compareWithFabric(const fabric::Topology& topo,
                                 const std::vector<std::vector<PortSighting>>& seen) {
  return Comparison(topo, seen).run();
}

}  // namespace ebb::ib
