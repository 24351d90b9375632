// Topology versus fabric over the FakeFabric: the backend is given one
// topology, the fabric is cabled after another (same switches and GUIDs);
// discovery lists every missing, extra and moved cable, refuses by default,
// and under WARN leaves those links alone. A port found Disabled is a cable
// that is there, not a missing one.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "agent/virtual_scheduler.h"
#include "fabric/ibnetdiscover.h"
#include "tests/ib_backend/ib_rig.h"

namespace ebb::ib {
namespace {

using agent::LinkPowerState;
using fabric::LinkId;
using fabric::PortId;
using fabric::SwitchId;
using testing::kMs;

struct Cable {
  std::string a;
  int pa;
  std::string b;
  int pb;
};

// An ibsim net file of 2 spines (S1, S2: 8 ports) and 3 leaves (L1..L3: 6
// ports, one host each on port 1), cabled as `cables`: the same nodes and
// GUIDs whatever the cables.
fabric::Topology netOf(const std::vector<Cable>& cables) {
  const std::vector<std::pair<std::string, int>> switches = {
      {"S1", 8}, {"S2", 8}, {"L1", 6}, {"L2", 6}, {"L3", 6}};
  std::map<std::string, std::string> lines;
  for (const Cable& c : cables) {
    lines[c.a] += fmt::format("[{}]\t\"{}\"[{}]\t# lid 0 4xQDR\n", c.pa, c.b, c.pb);
    lines[c.b] += fmt::format("[{}]\t\"{}\"[{}]\t# lid 0 4xQDR\n", c.pb, c.a, c.pa);
  }
  std::string text;
  for (int h = 1; h <= 3; ++h) {
    text += fmt::format(
        "caguid=0x00000000000a000{}\nHca\t1 \"H{}\"\n[1]\t\"L{}\"[1]\t# lid 0 4xQDR\n\n", h, h, h);
    lines[fmt::format("L{}", h)] += fmt::format("[1]\t\"H{}\"[1]\t# lid 0 4xQDR\n", h);
  }
  for (std::size_t s = 0; s < switches.size(); ++s) {
    const auto& [name, ports] = switches[s];
    text += fmt::format("switchguid=0x00000000000b000{}\nSwitch\t{} \"{}\"\n{}\n", s + 1, ports,
                        name, lines[name]);
  }
  std::istringstream in(text);
  auto t = fabric::parseIbnetdiscover(in, "net");
  EXPECT_TRUE(t) << t.status().toString() << "\n" << text;
  return std::move(t).value();
}

// Every leaf to both spines, on irregular ports.
std::vector<Cable> configured() {
  return {{"L1", 3, "S1", 2}, {"L1", 5, "S2", 7}, {"L2", 4, "S1", 5},
          {"L2", 6, "S2", 1}, {"L3", 2, "S1", 8}, {"L3", 3, "S2", 4}};
}

// A backend over `topo` on a fabric cabled as `fabricTopo`, attached at H1.
struct MismatchRig {
  MismatchRig(const fabric::Topology& topo, const fabric::Topology& fabricTopo,
              TopologyMismatch mode)
      : fab(fabricTopo, fabric::HostId(0)) {
    TransportOptions t;
    t.timeoutPs = 50 * kMs;
    t.retries = 1;
    mad = std::make_unique<FakeMadTransport>(sched, t, fab.responder());
    IbBackendOptions o;
    for (const fabric::Switch& s : topo.switches())
      o.allowGuids.insert(s.guid);
    o.linkPollPs = 10 * kMs;
    o.topologyMismatch = mode;
    backend = std::make_unique<IbBackend>(topo, *mad, sched, o);
  }
  Status init() {
    Status out(ErrorCode::kInternal, "not done");
    backend->initialize([&](Status s) { out = s; });
    sched.runAll();
    return out;
  }
  Result<LinkPowerState> set(PortId p, bool on) {
    Result<LinkPowerState> out = Status(ErrorCode::kInternal, "not done");
    backend->applyLinkState(p, on, [&](Result<LinkPowerState> r) { out = r; });
    sched.runUntil(sched.now() + 2000 * kMs);
    return out;
  }
  agent::VirtualScheduler sched;
  testing::FakeFabric fab;
  std::unique_ptr<FakeMadTransport> mad;
  std::unique_ptr<IbBackend> backend;
};

LinkId linkAt(const fabric::Topology& t, const std::string& sw, int ibPort) {
  return t.sw(*t.findSwitch(sw)).ports.at(static_cast<std::size_t>(ibPort - 1)).link;
}

PortId portOf(const fabric::Topology& t, const std::string& sw, int ibPort) {
  return PortId{*t.findSwitch(sw), static_cast<std::uint16_t>(ibPort - 1)};
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(TopologySurvey, AFabricAsConfiguredHasNoDifference) {
  const fabric::Topology topo = netOf(configured());
  MismatchRig rig(topo, topo, TopologyMismatch::kRefuse);
  ASSERT_TRUE(rig.init().isOk());
  const TopologySurvey& s = rig.backend->topologySurvey();
  EXPECT_TRUE(s.matches()) << s.listing();
  EXPECT_TRUE(s.unverified.empty());
  for (LinkFinding f : s.links)
    EXPECT_EQ(f, LinkFinding::kUp);
  EXPECT_EQ(rig.fab.sets, 0);
}

// The fabric lacks L3[2]-S1[8] (both ports there, nothing trained: a cable
// down, taken as failed), has L2[2]-S2[3] that the topology does not
// (extra), and L1[5] goes to S2[6] instead of S2[7] (moved).
std::vector<Cable> cabledDifferently() {
  return {{"L1", 3, "S1", 2}, {"L1", 5, "S2", 6}, {"L2", 4, "S1", 5},
          {"L2", 6, "S2", 1}, {"L2", 2, "S2", 3}, {"L3", 3, "S2", 4}};
}

TEST(TopologySurvey, RefuseListsEveryMissingExtraAndMovedCableBeforeAnySet) {
  const fabric::Topology topo = netOf(configured());
  const fabric::Topology wired = netOf(cabledDifferently());
  MismatchRig rig(topo, wired, TopologyMismatch::kRefuse);
  const Status st = rig.init();
  ASSERT_FALSE(st.isOk());
  const std::string m = st.message();
  EXPECT_TRUE(contains(m, "differ from the topology in 2 places")) << m;
  EXPECT_FALSE(contains(m, "L3[2]")) << "a cable down is a failure, not a difference: " << m;
  EXPECT_TRUE(contains(m,
                       "extra: L2[2] (0x00000000000b0004) - S2[3] (0x00000000000b0002): in "
                       "the fabric, not in the topology"))
      << m;
  EXPECT_TRUE(contains(m,
                       "moved: the fabric has L1[5] (0x00000000000b0003) - S2[6] "
                       "(0x00000000000b0002) where the topology has L1[5] "
                       "(0x00000000000b0003) - S2[7] (0x00000000000b0002)"))
      << m;
  EXPECT_EQ(rig.fab.sets, 0);
}

TEST(TopologySurvey, WarnRunsAndNeverSetsALinkItCannotVouchFor) {
  const fabric::Topology topo = netOf(configured());
  const fabric::Topology wired = netOf(cabledDifferently());
  MismatchRig rig(topo, wired, TopologyMismatch::kWarn);
  ASSERT_TRUE(rig.init().isOk());
  const TopologySurvey& s = rig.backend->topologySurvey();
  ASSERT_EQ(s.differences.size(), 2u) << s.listing();
  EXPECT_EQ(s.differences[0].kind, TopologyDifference::Kind::kMoved);
  EXPECT_EQ(s.differences[1].kind, TopologyDifference::Kind::kExtra);
  const LinkId missing = linkAt(topo, "L3", 2), moved = linkAt(topo, "L1", 5);
  EXPECT_EQ(s.links[missing.value()], LinkFinding::kDown);
  // A failed part, as a cable that went down a moment after the start.
  EXPECT_EQ(rig.backend->failedLinks(), std::vector<LinkId>{missing});
  EXPECT_EQ(s.links[moved.value()], LinkFinding::kMoved);
  EXPECT_EQ(s.links[linkAt(topo, "L2", 6).value()], LinkFinding::kUp);
  const fabric::LinkStates ls = rig.backend->linkStates();
  EXPECT_FALSE(ls.isFullyOn(missing));
  EXPECT_FALSE(ls.isFullyOn(moved));
  EXPECT_TRUE(ls.isFullyOn(linkAt(topo, "L2", 6)));
  // Every switch is still reached over the cables that are as configured.
  for (std::uint32_t i = 0; i < topo.numSwitches(); ++i)
    EXPECT_TRUE(rig.backend->reachable(SwitchId(i))) << topo.sw(SwitchId(i)).name;
  // Turning them on goes no further than "turning on"; off they already are.
  auto on = rig.set(portOf(topo, "L1", 5), true);
  ASSERT_TRUE(on) << on.status().toString();
  EXPECT_EQ(*on, LinkPowerState::kTurningOn);
  auto off = rig.set(portOf(topo, "L3", 2), false);
  ASSERT_TRUE(off) << off.status().toString();
  EXPECT_EQ(*off, LinkPowerState::kOff);
  EXPECT_EQ(rig.fab.sets, 0) << "no Set to a link whose cable is not as configured";
  // A link that is as configured is gated as usual.
  auto gate = rig.set(portOf(topo, "L2", 4), false);
  ASSERT_TRUE(gate) << gate.status().toString();
  EXPECT_EQ(rig.fab.sets, 1);
}

// A port that reads Disabled (an earlier run, an operator) has its cable:
// the link is down, not missing (missing is both ends Polling, above), and
// comes back by Polling at that end. A host port that reads Polling is a
// host that is down, not a difference.
TEST(TopologySurvey, ADisabledPortIsACablePresentButDown) {
  const fabric::Topology topo = netOf(configured());
  MismatchRig rig(topo, topo, TopologyMismatch::kRefuse);
  const PortId atUpper = portOf(topo, "S2", 1);  // L2[6]-S2[1], disabled at the spine
  rig.fab.phys(atUpper) = PhysState::kDisabled;
  const PortId atLower = portOf(topo, "L3", 3);  // L3[3]-S2[4], disabled at the leaf
  rig.fab.phys(atLower) = PhysState::kDisabled;
  rig.fab.phys(portOf(topo, "L2", 1)) = PhysState::kPolling;  // H2 is off
  ASSERT_TRUE(rig.init().isOk());
  const TopologySurvey& s = rig.backend->topologySurvey();
  EXPECT_TRUE(s.matches()) << s.listing();
  EXPECT_TRUE(s.unverified.empty());
  EXPECT_EQ(s.links[linkAt(topo, "S2", 1).value()], LinkFinding::kDisabled);
  EXPECT_EQ(s.links[linkAt(topo, "L3", 3).value()], LinkFinding::kDisabled);
  EXPECT_EQ(s.links[linkAt(topo, "L2", 1).value()], LinkFinding::kHostDown);
  // Both disabled links read off and come back by Polling at the end that
  // reads Disabled, whichever end that is.
  rig.fab.trainAfter = 2;
  for (const PortId end : {atUpper, atLower}) {
    const LinkId l = topo.sw(end.sw).ports[end.index].link;
    EXPECT_FALSE(rig.backend->linkStates().isFullyOn(l));
    auto on = rig.set(topo.link(l).lower, true);
    ASSERT_TRUE(on) << on.status().toString();
    EXPECT_EQ(rig.fab.phys(end), PhysState::kLinkUp) << topo.describePort(end);
    EXPECT_TRUE(rig.backend->linkStates().isFullyOn(l)) << topo.describeLink(l);
  }
}

// A switch that cannot be reached: its cables cannot be checked either way.
// They are listed apart (not differences: REFUSE starts) and left alone.
TEST(TopologySurvey, CablesOfASwitchOutOfReachAreUnverifiedNotMissing) {
  const fabric::Topology topo = netOf(configured());
  MismatchRig rig(topo, topo, TopologyMismatch::kRefuse);
  // S1 disabled every port at its own end: its leaves' ports still read LinkUp
  // (as under ibsim) but nothing answers through them.
  for (int p : {2, 5, 8})
    rig.fab.phys(portOf(topo, "S1", p)) = PhysState::kDisabled;
  ASSERT_TRUE(rig.init().isOk());
  const TopologySurvey& s = rig.backend->topologySurvey();
  EXPECT_TRUE(s.matches()) << s.listing();
  ASSERT_EQ(s.unverified.size(), 3u);
  EXPECT_TRUE(contains(s.unverified[0], "nothing answered through it")) << s.unverified[0];
  EXPECT_FALSE(rig.backend->reachable(*topo.findSwitch("S1")));
  auto on = rig.set(portOf(topo, "L2", 4), true);
  ASSERT_TRUE(on) << on.status().toString();
  EXPECT_EQ(*on, LinkPowerState::kTurningOn);
  EXPECT_EQ(rig.fab.sets, 0);
}

// The 2-ary 3-tree of the other backend tests: every port read, every
// LinkUp one probed, host cables included.
TEST(TopologySurvey, EveryCableOfATreeIsCheckedHostsIncluded) {
  testing::Rig rig;
  ASSERT_TRUE(rig.init().isOk());
  const TopologySurvey& s = rig.backend->topologySurvey();
  EXPECT_TRUE(s.matches()) << s.listing();
  ASSERT_EQ(s.links.size(), testing::tree().numLinks());
  for (LinkFinding f : s.links)
    EXPECT_EQ(f, LinkFinding::kUp);
}

}  // namespace
}  // namespace ebb::ib
