// `ebb agent` on a failing fabric that is not a k-ary n-tree (issue 13): 3
// spines of 12 ports and 5 leaves of 8, each leaf cabled once to every spine
// at irregular port numbers, on ibsim + real OpenSM, the test playing the
// physical layer (tests/ib/daemon_rig.h). A leaf that ebb left hanging on its
// minimal-tree cable loses that cable (the test Unlinks it: a failure ebb did
// not cause): every host pair must have a route again within a few seconds,
// whether ebb hears of it from OpenSM's trap or only by lost counters, and
// SIGTERM in the middle of that recovery must end within restore_timeout_ms.
// SIGTERM with links that never train exits 1 naming them; a second agent is
// refused; a load that flaps must stop flapping (docs/ib_agent.md).
#include <gtest/gtest.h>

#include <csignal>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>

#include "common/child_process.h"
#include "fabric/ibnetdiscover.h"
#include "fabric/minimal_tree.h"
#include "tests/harness/ibsim_fabric.h"
#include "tests/ib/daemon_rig.h"
#include "tests/ib/irregular_fabric.h"

namespace ebb::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// The fabric (tests/ib/irregular_fabric.h) and its minimal tree.
const fabric::MinimalTree& tree() {
  return irregularTree();
}

fabric::SwitchId leafOf(const std::string& host) {
  for (const fabric::Host& h : irregular().hosts()) {
    if (h.name == host) return irregular().link(h.link).upper.sw;
  }
  throw std::runtime_error("no host " + host);
}

std::vector<fabric::SwitchId> leaves() {
  std::vector<fabric::SwitchId> out;
  for (const fabric::Host& h : irregular().hosts()) {
    const fabric::SwitchId s = irregular().link(h.link).upper.sw;
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

PortName nameOf(fabric::SwitchId s, std::uint16_t index) {
  return {irregular().sw(s).name, index + 1};
}

// The leaf's up port on its minimal-tree cable (ebb never gates it).
PortName treeUpPort(fabric::SwitchId leaf) {
  for (std::uint16_t p : irregular().sw(leaf).upPorts) {
    if (tree().containsLink(irregular().sw(leaf).ports[p].link)) return nameOf(leaf, p);
  }
  throw std::runtime_error("a leaf off the minimal tree");
}

// Plays the physical layer until ebb has gated the fabric: a second passes
// with nothing new decided or set (a refusal is logged once), at most 25 s.
void gateUntilQuiet(Daemon& d, PhysicalLayer& phys) {
  playUntilQuiet(d, phys, 25s);
}

// A leaf other than the daemon's own, with 3 or more up cables, that hangs
// on its minimal-tree cable alone: every other up link of it is off (the
// precondition of the failure tests). L4 first, when it qualifies.
std::optional<fabric::SwitchId> hangingLeaf(const PhysicalLayer& phys) {
  std::vector<fabric::SwitchId> order = leaves();
  std::stable_partition(order.begin(), order.end(),
                        [](fabric::SwitchId s) { return irregular().sw(s).name == "L4"; });
  for (fabric::SwitchId s : order) {
    const fabric::Switch& sw = irregular().sw(s);
    if (s == leafOf("H1") || sw.upPorts.size() < 3) continue;
    const bool hangs = std::all_of(sw.upPorts.begin(), sw.upPorts.end(), [&](std::uint16_t p) {
      const fabric::LinkId l = sw.ports[p].link;
      return tree().containsLink(l) || phys.down().count(l) > 0;
    });
    if (hangs) return s;
  }
  return std::nullopt;
}

std::string describe(const std::set<fabric::LinkId>& links) {
  std::string out;
  for (fabric::LinkId l : links)
    out += (out.empty() ? "" : ", ") + irregular().describeLink(l);
  return out.empty() ? "none" : out;
}

// checkAllPairs while the physical layer goes on answering ebb's Sets (a
// dump_fts through a fabric in flux can take seconds; a link waiting that long
// for its ReLink would slow the recovery under test), avoiding the links cut
// when the dump is done.
std::string checkPairsPlaying(IbsimFabric& fab, Daemon& d, PhysicalLayer& phys) {
  return checkAllPairs(
      fab, irregular(), [&] { phys.play(d.next(0ms)); }, [&] { return phys.cut(); });
}

// Gates the fabric, checks the precondition (a leaf hangs on its tree
// cable), fails that cable; returns the leaf, or nullopt after a failed
// assertion.
std::optional<fabric::SwitchId> gateThenFailATreeCable(IbsimFabric& fab, Daemon& d,
                                                       PhysicalLayer& phys) {
  gateUntilQuiet(d, phys);
  if (::testing::Test::HasFatalFailure()) return std::nullopt;
  const auto leaf = hangingLeaf(phys);
  EXPECT_TRUE(leaf) << "no leaf hangs on its tree cable alone; ebb disabled: "
                    << describe(phys.down()) << "\n"
                    << d.out() << d.err();
  if (!leaf) return std::nullopt;
  // Every pair is reachable before the failure (the gating itself is sound).
  std::string broken = "not checked";
  for (int i = 0; i < 20 && !broken.empty(); ++i) {
    phys.play(d.next(0ms));
    broken = checkPairsPlaying(fab, d, phys);
    if (!broken.empty()) waitForSweepAfter(fab, openSmSweeps(fab), 500ms);
  }
  EXPECT_EQ(broken, "") << "before the failure";
  phys.forgetTree();  // the cable fails: ebb re-homes the minimal tree
  phys.fail(treeUpPort(*leaf));
  return leaf;
}

// Plays the physical layer until every host pair has a route that avoids the
// failed cable and the links still disabled, at most `timeout`; "" or the
// last broken pair.
std::string playUntilAllPairs(IbsimFabric& fab, Daemon& d, PhysicalLayer& phys,
                              std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::string broken = "not checked";
  while (Clock::now() < deadline && d.proc().running()) {
    phys.play(d.next(200ms));
    broken = checkPairsPlaying(fab, d, phys);
    if (broken.empty()) break;
  }
  return broken;
}

// Plays the physical layer (links re-enabled in a later wave train too) until
// the daemon logs that every link its re-homing turned on is up again.
bool playUntilRecovered(Daemon& d, PhysicalLayer& phys, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline && d.proc().running()) {
    phys.play(d.next(200ms));
    if (readWholeFile(d.logPath()).find("\"event\":\"recovered\"") != std::string::npos) {
      return true;
    }
  }
  return false;
}

struct Shutdown {
  std::optional<int> status;
  std::chrono::milliseconds took{0};
};

// SIGTERM, then plays the restore's Sets until the daemon exits, at most `timeout`.
Shutdown sigterm(Daemon& d, PhysicalLayer& phys, std::chrono::milliseconds timeout) {
  const auto t0 = Clock::now();
  d.proc().signal(SIGTERM);
  while (d.proc().running() && Clock::now() - t0 < timeout) {
    phys.play(d.next(100ms));
  }
  Shutdown s;
  s.status = d.proc().wait(0ms);
  s.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
  phys.play(d.next(0ms));
  return s;
}

void report(const char* what, std::chrono::milliseconds ms) {
  ::testing::Test::RecordProperty(what, static_cast<int>(ms.count()));
  std::cout << what << ": " << ms.count() << " ms\n";
}

// The body of (1) and (2): gate, fail a hanging leaf's tree cable, play
// until every pair is routed again (at most `pairsWithin`) and ebb says it
// recovered, then stop the daemon.
void failATreeCableAndRecover(IbsimFabric& fab, Daemon& d, std::chrono::milliseconds pairsWithin) {
  PhysicalLayer phys(fab, d, {.tree = &tree()});
  const auto leaf = gateThenFailATreeCable(fab, d, phys);
  ASSERT_TRUE(leaf);
  const auto t0 = Clock::now();
  const std::string broken = playUntilAllPairs(fab, d, phys, pairsWithin);
  report("recovery_ms", std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0));
  EXPECT_EQ(broken, "") << irregular().sw(*leaf).name
                        << " lost its tree cable; still disabled: " << describe(phys.down()) << "\n"
                        << readWholeFile(d.logPath()) << d.out() << d.err();
  // ebb says when every link it re-enabled was up again, and how long it took.
  EXPECT_TRUE(playUntilRecovered(d, phys, 10s))
      << d.out() << d.err() << "still disabled: " << describe(phys.down()) << "\n"
      << readWholeFile(d.logPath());
  EXPECT_TRUE(waitForText(d.outPath(), "link(s) up again in", 5s)) << d.out();
  const Shutdown s = sigterm(d, phys, 15s);
  EXPECT_TRUE(s.status) << "still running 15 s after SIGTERM";
  // A switch out of reach while the routes heal is held, not failed safe.
  EXPECT_EQ(d.err().find("failed safe"), std::string::npos) << d.err();
}

// (1) The failure reported by OpenSM's trap 128 (ebb's event plugin).
TEST(Resilience, TreeCableOfAGatedLeafFailsAndEveryPairComesBack) {
  IbsimFabric fab(irregular(), fabricOptions(true));
  Daemon d(fab,
           onIrregular(fab, "osm_events: \"osm-events.sock\" restore_timeout_ms: 10000", "trap"));
  ASSERT_TRUE(waitForText(d.outPath(), "OpenSM events on", 20s)) << d.out() << d.err();
  failATreeCableAndRecover(fab, d, 25s);
}

// (1b) A recovery overtaken by the repair of its cause: the links the
// re-homing turned on never train (the test does not play their Polling),
// then the failed cable comes back and the agents re-home again. At
// restore_timeout_ms ebb reports that recovery superseded (a later re-homing
// took over), not incomplete: nothing timed out, nothing to reach out for.
TEST(Resilience, ARecoveryOvertakenByTheRepairOfItsCauseIsSupersededNotTimedOut) {
  IbsimFabric fab(irregular(), fabricOptions(true));
  Daemon d(fab, onIrregular(fab, "osm_events: \"osm-events.sock\" restore_timeout_ms: 2500",
                            "superseded"));
  ASSERT_TRUE(waitForText(d.outPath(), "OpenSM events on", 20s)) << d.out() << d.err();
  PhysicalLayer phys(fab, d, {.tree = &tree()});
  const auto leaf = gateThenFailATreeCable(fab, d, phys);
  ASSERT_TRUE(leaf);
  const auto playButPolling = [&](std::vector<Decision> ds) {
    std::erase_if(ds, [](const Decision& x) { return x.isSet("Polling"); });
    phys.play(ds);
  };
  const auto playUntil = [&](const std::function<bool()>& done, std::chrono::seconds limit) {
    const auto deadline = Clock::now() + limit;
    while (!done() && Clock::now() < deadline && d.proc().running())
      playButPolling(d.next(200ms));
    return done();
  };
  const std::string cable = irregular().describeLink(
      linkOf(irregular(), treeUpPort(*leaf).first, treeUpPort(*leaf).second));
  ASSERT_TRUE(playUntil([&] { return d.out().find(cable + " down") != std::string::npos; }, 15s))
      << d.out() << d.err();
  fab.relink(treeUpPort(*leaf).first, treeUpPort(*leaf).second);
  ASSERT_TRUE(playUntil([&] { return d.out().find(cable + " up") != std::string::npos; }, 15s))
      << d.out() << d.err();
  const auto said = [&] {
    return d.out().find("superseded after") != std::string::npos ||
           d.err().find("incomplete after") != std::string::npos;
  };
  ASSERT_TRUE(playUntil(said, 15s)) << d.out() << d.err();
  // The line names the recovery's cause (maybe with others of the same instant).
  const std::string out = d.out();
  const std::size_t at = out.find("superseded after");
  ASSERT_NE(at, std::string::npos) << out << d.err();
  const std::size_t lineStart = out.rfind('\n', at) + 1;
  EXPECT_NE(out.substr(lineStart, at - lineStart).find(cable + " down"), std::string::npos) << out;
  EXPECT_EQ(d.err().find("incomplete after"), std::string::npos) << d.err();
  EXPECT_NE(readWholeFile(d.logPath()).find("\"event\":\"recovery_superseded\""),
            std::string::npos);
  const Shutdown s = sigterm(d, phys, 15s);
  EXPECT_TRUE(s.status) << "still running 15 s after SIGTERM";
}

// (2) The same without the event plugin: only the leaf's counters, failing
// by LID and by directed route for lost_contact_ms, tell ebb.
TEST(Resilience, TreeCableFailureSeenOnlyByLostCountersAndEveryPairComesBack) {
  IbsimFabric fab(irregular(), fabricOptions(false));
  Daemon d(fab, onIrregular(fab, "mad_retries: 1 lost_contact_ms: 600 restore_timeout_ms: 10000",
                            "counters"));
  failATreeCableAndRecover(fab, d, 30s);
}

// (2b) A whole switch fails: the minimal tree's root, on which every gated
// leaf hangs. Its agent's counters go unanswered (neither by LID nor by
// directed route once its cables are gone): ebb holds that switch, it does
// not fail it safe, and re-homes the tree on another spine; every pair has
// a route again and ebb says it recovered.
TEST(Resilience, TheTreeRootSwitchFailsWholeAndEveryPairComesBack) {
  IbsimFabric fab(irregular(), fabricOptions(false));
  Daemon d(fab, onIrregular(fab, "mad_retries: 1 lost_contact_ms: 600 restore_timeout_ms: 10000",
                            "root"));
  PhysicalLayer phys(fab, d, {.tree = &tree()});
  gateUntilQuiet(d, phys);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_FALSE(phys.down().empty()) << "ebb gated nothing\n" << d.out() << d.err();
  const fabric::SwitchId root = tree().root();
  const fabric::Switch& sw = irregular().sw(root);
  phys.forgetTree();
  for (std::uint16_t p = 0; p < sw.ports.size(); ++p) {
    if (sw.ports[p].link.valid()) phys.fail(nameOf(root, p));
  }
  const auto t0 = Clock::now();
  const std::string broken = playUntilAllPairs(fab, d, phys, 40s);
  report("root_recovery_ms",
         std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0));
  EXPECT_EQ(broken, "") << sw.name << " failed; still disabled: " << describe(phys.down()) << "\n"
                        << readWholeFile(d.logPath()) << d.out() << d.err();
  EXPECT_TRUE(playUntilRecovered(d, phys, 10s))
      << d.out() << d.err() << "still disabled: " << describe(phys.down()) << "\n"
      << readWholeFile(d.logPath());
  EXPECT_TRUE(d.proc().running()) << d.err();
  const Shutdown s = sigterm(d, phys, 15s);
  EXPECT_TRUE(s.status) << "still running 15 s after SIGTERM";
  EXPECT_EQ(d.err().find("failed safe"), std::string::npos) << d.err();
}

// (2b') Two single failures seconds apart. A leaf hangs on its tree cable,
// one spare disabled at its spine's end, another at the leaf itself. That
// spine fails whole: the leaf is still reached, but if its tree cable failed
// next, nothing ebb reaches could bring back the spare disabled at the leaf.
// The re-homing after the spine's failure lifts that gate (the guard may
// disable it again, at the spine's end); the tree cable then fails, and
// every pair comes back.
TEST(Resilience, TwoFailuresSecondsApartLeaveNoLeafStranded) {
  IbsimFabric fab(irregular(), fabricOptions(true));
  Daemon d(fab, onIrregular(fab,
                            "osm_events: \"osm-events.sock\" mad_retries: 1 lost_contact_ms: 600 "
                            "restore_timeout_ms: 3000",
                            "twice"));
  ASSERT_TRUE(waitForText(d.outPath(), "OpenSM events on", 20s)) << d.out() << d.err();
  PhysicalLayer phys(fab, d, {.tree = &tree()});
  gateUntilQuiet(d, phys);
  ASSERT_FALSE(HasFatalFailure());
  const auto leaf = hangingLeaf(phys);
  ASSERT_TRUE(leaf) << "ebb disabled: " << describe(phys.down()) << "\n" << d.out() << d.err();
  const fabric::Switch& lsw = irregular().sw(*leaf);
  // Of the leaf's spares, which are disabled at the leaf itself, and a spine
  // holding one disabled at its own end.
  const auto gatedAtLeaf = [&] {
    std::vector<fabric::LinkId> out;
    for (std::uint16_t p : lsw.upPorts) {
      const fabric::LinkId l = lsw.ports[p].link;
      const auto at = phys.disabledAt(l);
      if (phys.down().count(l) && at && at->first == lsw.name) out.push_back(l);
    }
    return out;
  };
  std::optional<fabric::SwitchId> spine;
  for (std::uint16_t p : lsw.upPorts) {
    const fabric::LinkId l = lsw.ports[p].link;
    const auto at = phys.disabledAt(l);
    if (phys.down().count(l) && at && at->first != lsw.name) spine = irregular().link(l).upper.sw;
  }
  ASSERT_TRUE(spine) << lsw.name << ": no spare disabled at its spine's end";
  ASSERT_FALSE(gatedAtLeaf().empty()) << lsw.name << ": no spare disabled at the leaf";
  // The first failure: that spine, whole (the links ebb disabled at it die
  // unseen).
  phys.forgetTree();
  const fabric::Switch& ssw = irregular().sw(*spine);
  for (std::uint16_t p = 0; p < ssw.ports.size(); ++p) {
    const fabric::LinkId l = ssw.ports[p].link;
    if (!l.valid()) continue;
    if (phys.down().count(l)) {
      phys.die(l);
    } else {
      phys.fail(nameOf(*spine, p));
    }
  }
  EXPECT_EQ(playUntilAllPairs(fab, d, phys, 20s), "")
      << ssw.name << " failed\n"
      << readWholeFile(d.logPath()) << d.out() << d.err();
  // ebb lifts the gate at the leaf (whatever it disables again, it
  // disables at the spine's end).
  const auto deadline = Clock::now() + 10s;
  while (!gatedAtLeaf().empty() && Clock::now() < deadline && d.proc().running())
    phys.play(d.next(200ms));
  ASSERT_TRUE(gatedAtLeaf().empty()) << lsw.name << " still has a spare disabled at itself: "
                                     << irregular().describeLink(gatedAtLeaf().front()) << "\n"
                                     << readWholeFile(d.logPath()) << d.out() << d.err();
  EXPECT_NE(d.out().find("to keep single-failure resilience)"), std::string::npos) << d.out();
  // The second failure: the leaf's tree cable.
  phys.fail(treeUpPort(*leaf));
  const auto t0 = Clock::now();
  const std::string broken = playUntilAllPairs(fab, d, phys, 20s);
  report("second_failure_recovery_ms",
         std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0));
  EXPECT_EQ(broken, "") << lsw.name << " lost its tree cable after " << ssw.name
                        << "; still disabled: " << describe(phys.down()) << "\n"
                        << readWholeFile(d.logPath()) << d.out() << d.err();
  const Shutdown s = sigterm(d, phys, 15s);
  EXPECT_TRUE(s.status) << "still running 15 s after SIGTERM";
}

// (2c) The minimal tree's root C1 fails whole where a cable to it has a
// parallel twin: ebb hears of the first cable, turns on its twin (to the
// same dead switch), and the rest of the fabric behind C1 is out of reach, so
// no trap or counter read tells of C1's other cable. Once the twin has not
// come up within restore_timeout_ms, ebb reaches out to the switches out of
// reach, reads them again and re-homes on C2: every pair comes back.
constexpr const char* kNetParallelRoot = R"(
caguid=0x0002c90100000001
Hca	1 "H0"
[1]	"L1"[1]
caguid=0x0002c90100000002
Hca	1 "H1"
[1]	"L1"[2]
caguid=0x0002c90100000003
Hca	1 "H2"
[1]	"L2"[1]
caguid=0x0002c90100000004
Hca	1 "H3"
[1]	"L3"[1]
caguid=0x0002c90100000005
Hca	1 "H4"
[1]	"L3"[2]
switchguid=0x0002c90000000001
Switch	8 "C1"
[1]	"A1"[5]
[2]	"A1"[6]
[3]	"A2"[5]
switchguid=0x0002c90000000002
Switch	8 "C2"
[1]	"A2"[6]
[2]	"A1"[7]
switchguid=0x0002c90000000003
Switch	8 "A1"
[1]	"L1"[5]
[2]	"L1"[6]
[3]	"L2"[5]
[4]	"L3"[7]
[5]	"C1"[1]
[6]	"C1"[2]
[7]	"C2"[2]
switchguid=0x0002c90000000004
Switch	8 "A2"
[1]	"L1"[7]
[2]	"L2"[6]
[3]	"L3"[5]
[4]	"L3"[6]
[5]	"C1"[3]
[6]	"C2"[1]
switchguid=0x0002c90000000005
Switch	8 "L1"
[1]	"H0"[1]
[2]	"H1"[1]
[5]	"A1"[1]
[6]	"A1"[2]
[7]	"A2"[1]
switchguid=0x0002c90000000006
Switch	8 "L2"
[1]	"H2"[1]
[5]	"A1"[3]
[6]	"A2"[2]
switchguid=0x0002c90000000007
Switch	8 "L3"
[1]	"H3"[1]
[2]	"H4"[1]
[5]	"A2"[3]
[6]	"A2"[4]
[7]	"A1"[4]
)";

TEST(Resilience, ARootDyingBehindAParallelCableIsReachedAgain) {
  constexpr auto kRestoreTimeout = 3000ms;
  static const fabric::Topology topo = [] {
    std::istringstream in(kNetParallelRoot);
    return fabric::parseIbnetdiscover(in, "net").value();
  }();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
  IbsimFabric fab(topo, fabricOptions(true));
  std::ofstream(fab.scratchDir() + "/fabric.net") << kNetParallelRoot;
  Daemon d(fab, {.topo = &topo,
                 .fabric = R"(topology_file { path: "fabric.net" format: IBSIM_NET })",
                 .agentFields = fmt::format(
                     "lock_file: \"twin.lock\" osm_events: \"osm-events.sock\" mad_retries: 1 "
                     "lost_contact_ms: 600 restore_timeout_ms: {}",
                     kRestoreTimeout.count()),
                 .name = "twin"});
  ASSERT_TRUE(waitForText(d.outPath(), "OpenSM events on", 20s)) << d.out() << d.err();
  PhysicalLayer phys(fab, d, {.tree = &mt});
  playUntilQuiet(d, phys, 25s);
  ASSERT_FALSE(HasFatalFailure());
  const fabric::Switch& root = topo.sw(mt.root());
  ASSERT_EQ(root.name, "C1");
  phys.forgetTree();
  for (std::uint16_t p = 0; p < root.ports.size(); ++p) {
    const fabric::LinkId l = root.ports[p].link;
    if (!l.valid()) continue;
    if (phys.down().count(l)) {
      phys.die(l);  // ebb disabled it: it dies unseen
    } else {
      phys.fail({root.name, p + 1});
    }
  }
  const auto t0 = Clock::now();
  std::string broken = "not checked";
  while (Clock::now() - t0 < kRestoreTimeout + 20s && d.proc().running()) {
    phys.play(d.next(200ms));
    broken = checkAllPairs(
        fab, topo, [&] { phys.play(d.next(0ms)); }, [&] { return phys.cut(); });
    if (broken.empty()) break;
  }
  report("dead_root_behind_twin_ms",
         std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0));
  EXPECT_EQ(broken, "") << readWholeFile(d.logPath()) << d.out() << d.err();
  const Shutdown s = sigterm(d, phys, 15s);
  EXPECT_TRUE(s.status) << "still running 15 s after SIGTERM";
  EXPECT_NE(d.err().find("switches out of reach: turning on"), std::string::npos) << d.err();
}

// (3) SIGTERM as soon as ebb has heard of the failure: the restore ends
// within restore_timeout_ms (plus a margin for the start of the restore),
// with exit 0 only if every link ebb disabled came back, else exit 1 naming
// every link still out.
TEST(Resilience, SigtermDuringRecoveryEndsWithinTheRestoreTimeout) {
  constexpr auto kRestoreTimeout = 5000ms;
  IbsimFabric fab(irregular(), fabricOptions(true));
  Daemon d(fab, onIrregular(fab,
                            fmt::format("osm_events: \"osm-events.sock\" restore_timeout_ms: {}",
                                        kRestoreTimeout.count()),
                            "sigterm"));
  ASSERT_TRUE(waitForText(d.outPath(), "OpenSM events on", 20s)) << d.out() << d.err();
  PhysicalLayer phys(fab, d, {.tree = &tree()});
  const auto leaf = gateThenFailATreeCable(fab, d, phys);
  ASSERT_TRUE(leaf);
  // ebb hears of the failure: the trap's re-read (or anything new) in its log.
  const std::size_t logged = readWholeFile(d.logPath()).size();
  EXPECT_TRUE(waitForFile(
      d.logPath(), [&](const std::string& t) { return t.size() > logged; }, 5s))
      << "ebb logged nothing after the failure";
  phys.play(d.next(0ms));
  const Shutdown s = sigterm(d, phys, kRestoreTimeout + 10s);
  report("shutdown_ms", s.took);
  ASSERT_TRUE(s.status) << "still running " << s.took.count() << " ms after SIGTERM\n" << d.err();
  EXPECT_LT(s.took, kRestoreTimeout + 1500ms) << d.err();
  const std::string out = d.out(), err = d.err();
  if (*s.status == 0) {
    // Said of the links once they are up: none the test still holds out.
    EXPECT_TRUE(phys.down().empty()) << "exit 0 with links still out: " << describe(phys.down());
    EXPECT_NE(out.find("re-enabled the"), std::string::npos) << out;
  } else {
    EXPECT_EQ(*s.status, 1) << out << err;
    EXPECT_NE(err.find("links not back up after"), std::string::npos) << err;
    for (fabric::LinkId l : phys.down()) {
      EXPECT_NE(err.find(irregular().describeLink(l)), std::string::npos)
          << irregular().describeLink(l) << " is out and not named\n"
          << err;
    }
  }
}

// (4) SIGTERM with the physical layer stopped: the links ebb set Polling
// never train. ebb exits 1 within restore_timeout_ms (plus the start of the
// restore), naming every link it had disabled, and never says re-enabled.
TEST(Resilience, SigtermWithLinksThatNeverComeUpExitsOneNamingThem) {
  constexpr auto kRestoreTimeout = 3000ms;
  IbsimFabric fab(irregular(), fabricOptions(false));
  Daemon d(fab, onIrregular(fab, "restore_timeout_ms: 3000", "stopped"));
  PhysicalLayer phys(fab, d, {.tree = &tree()});
  gateUntilQuiet(d, phys);
  ASSERT_FALSE(HasFatalFailure());
  const std::set<fabric::LinkId> disabled = phys.down();
  ASSERT_FALSE(disabled.empty()) << d.out() << d.err();
  const auto t0 = Clock::now();
  d.proc().signal(SIGTERM);  // and the player plays nothing more
  const std::optional<int> status = d.proc().wait(10s);
  const auto took = Clock::now() - t0;
  ASSERT_TRUE(status.has_value()) << "still running 10 s after SIGTERM\n" << d.err();
  EXPECT_EQ(*status, 1) << d.out() << d.err();
  EXPECT_LT(took, kRestoreTimeout + 1500ms);
  EXPECT_GE(took, kRestoreTimeout - 100ms) << "ended before the timeout: " << d.err();
  const std::string err = d.err();
  EXPECT_NE(err.find("not back up after 3 s (restore_timeout_ms)"), std::string::npos) << err;
  for (fabric::LinkId l : disabled) {
    const std::string link = irregular().describeLink(l);
    EXPECT_NE(err.find(link + ": "), std::string::npos) << link << "\n" << err;
  }
  EXPECT_EQ(d.out().find("re-enabled the"), std::string::npos) << d.out();
}

// (5) A second `ebb agent` on the same fabric (the same lock file) refuses
// to start, before any Set, naming the holder; the first runs on and ends
// cleanly.
TEST(Resilience, ASecondAgentOnTheSameFabricIsRefusedBeforeAnySet) {
  IbsimFabric fab(irregular(), fabricOptions(false));
  DaemonConfig first = onIrregular(fab, "", "first");
  first.agentFields = R"(lock_file: "fabric.lock")";
  Daemon d1(fab, first);
  PhysicalLayer phys(fab, d1, {.tree = &tree()});
  ASSERT_TRUE(waitForText(d1.outPath(), "ebb agent:", 20s)) << d1.out() << d1.err();
  DaemonConfig second = onIrregular(fab, "", "second");
  second.agentFields = R"(lock_file: "fabric.lock")";
  Daemon d2(fab, second);
  const std::optional<int> status = d2.proc().wait(20s);
  ASSERT_TRUE(status.has_value()) << "the second agent is still running\n" << d2.out();
  EXPECT_NE(*status, 0);
  const std::string err = d2.err();
  EXPECT_NE(err.find("another ebb agent (pid " + std::to_string(d1.proc().pid())),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("fabric.lock"), std::string::npos) << err;
  EXPECT_EQ(readWholeFile(d2.logPath()).find("port_set"), std::string::npos);
  // The first one gated meanwhile and still ends cleanly.
  gateUntilQuiet(d1, phys);
  EXPECT_TRUE(d1.proc().running());
  EXPECT_FALSE(phys.everDisabled().empty()) << d1.out() << d1.err();
  const Shutdown s = sigterm(d1, phys, 15s);
  ASSERT_TRUE(s.status) << "still running 15 s after SIGTERM";
  EXPECT_EQ(*s.status, 0) << d1.out() << d1.err();
}

// (6) Load on a leaf's up ports alternates above and below the threshold
// every two check periods. With flap_limit 2 in a window of 3 s, no link goes
// off more than twice within any 3 s; the third turn-off is refused with the
// flap hold and the link stays on for the hold; the hold is logged once when
// it starts and once when it ends.
TEST(Resilience, FlappingLoadIsHeldOnAfterFlapLimitTurnOffs) {
  constexpr int kLimit = 2;
  // A hold at least as long as the window: the window after a hold holds only
  // the turn-offs that follow it.
  constexpr std::int64_t kWindowMs = 3000, kHoldMs = 4000;
  IbsimFabric fab(irregular(), fabricOptions(false));
  Daemon d(fab, onIrregular(fab,
                            fmt::format("flap_limit: {} flap_window_ms: {} flap_hold_ms: {}",
                                        kLimit, kWindowMs, kHoldMs),
                            "flap"));
  PhysicalLayer phys(fab, d, {.tree = &tree()});
  gateUntilQuiet(d, phys);
  ASSERT_FALSE(HasFatalFailure());
  const fabric::SwitchId leaf = *irregular().findSwitch("L5");
  const fabric::Switch& sw = irregular().sw(leaf);
  std::map<std::uint16_t, std::uint64_t> sent;  // PortXmitData per up port, in 4-byte words
  // High: a 400 ms phase sends about 10 times what the link carries.
  constexpr std::uint64_t kBurst = 500'000'000;
  const auto t0 = Clock::now();
  bool held = false;
  std::optional<Clock::time_point> heldAt;
  while (Clock::now() - t0 < 40s &&
         !(heldAt && Clock::now() - *heldAt > std::chrono::milliseconds(kHoldMs) + 1s)) {
    const auto phase = (Clock::now() - t0) / 400ms;
    if (phase % 2 == 0) {
      for (std::uint16_t p : sw.upPorts) {
        sent[p] += kBurst;
        fab.setCounter(sw.name, p + 1, "PortCountersExtended.PortXmitData", sent[p]);
      }
    }
    const auto ds = d.next(100ms);
    phys.play(ds);
    for (const Decision& x : ds) {
      if (x.refused && x.why.find("flap damping") != std::string::npos && !held) {
        held = true;
        heldAt = Clock::now();
      }
    }
    ASSERT_TRUE(d.proc().running()) << d.err();
  }
  report("flap_test_ms", std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0));
  const std::vector<Decision> log = d.all();
  ASSERT_TRUE(held) << "no turn-off refused by the flap hold\n" << readWholeFile(d.logPath());
  // Turn-offs per link, in the daemon's time.
  std::map<fabric::LinkId, std::vector<double>> offs;
  std::map<fabric::LinkId, double> firstHold;
  std::size_t leafOffs = 0;
  for (const Decision& x : log) {
    if (!x.event.empty() || x.sw.empty() || x.on) continue;
    const fabric::LinkId l = d.linkOf(x.sw, x.port);
    if (x.accepted()) {
      offs[l].push_back(x.timeMs);
      leafOffs += x.sw == sw.name;
    } else if (x.why.find("flap damping") != std::string::npos &&
               x.why.find("went off") != std::string::npos && !firstHold.count(l)) {
      firstHold[l] = x.timeMs;
      EXPECT_NE(x.why.find(fmt::format("went off {} times within {} ms", kLimit, kWindowMs)),
                std::string::npos)
          << x.why;
    }
  }
  EXPECT_GT(leafOffs, static_cast<std::size_t>(kLimit)) << "the load did not make L5 flap";
  // A hold is logged once, when it starts ("went off ..."), not every check
  // period while it holds ("held on for N ms more"); its end once.
  for (const Decision& x : log) {
    EXPECT_EQ(x.why.find("ms more"), std::string::npos) << "a hold logged again: " << x.why;
  }
  EXPECT_NE(d.out().find("is no longer held on"), std::string::npos) << d.out();
  ASSERT_FALSE(firstHold.empty()) << readWholeFile(d.logPath());
  for (const auto& [l, times] : offs) {
    for (std::size_t i = 0; i < times.size(); ++i) {
      const auto inWindow =
          std::count_if(times.begin() + static_cast<std::ptrdiff_t>(i), times.end(),
                        [&](double t) { return t < times[i] + static_cast<double>(kWindowMs); });
      EXPECT_LE(inWindow, kLimit) << irregular().describeLink(l) << " went off " << inWindow
                                  << " times within " << kWindowMs << " ms from " << times[i];
    }
    // Held on: no turn-off for the hold after the refusal.
    if (firstHold.count(l)) {
      for (double t : times) {
        EXPECT_FALSE(t > firstHold[l] && t < firstHold[l] + static_cast<double>(kHoldMs))
            << irregular().describeLink(l) << " went off " << t - firstHold[l]
            << " ms into its hold";
      }
    }
  }
  const Shutdown s = sigterm(d, phys, 15s);
  EXPECT_EQ(s.status, std::optional<int>(0)) << d.err();
}

}  // namespace
}  // namespace ebb::testing
