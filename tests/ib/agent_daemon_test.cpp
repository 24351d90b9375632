// `ebb agent` against the real-protocol test fabric: ibsim simulates the
// 4-ary 3-tree that `ebb topo` writes, real OpenSM (updn) routes it, and the
// test plays the physical layer that ibsim lacks: when ebb disables a port the
// test Unlinks it on ibsim's console (so OpenSM gets trap 128 and re-routes),
// when ebb enables one the test ReLinks it. Utilization is driven by setting
// PortXmitData on the console. Checks use the real infiniband-diags.
#include <gtest/gtest.h>

#include <csignal>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>

#include "common/child_process.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "tests/harness/ibsim_fabric.h"
#include "tests/ib/daemon_rig.h"

namespace ebb::testing {
namespace {

using namespace std::chrono_literals;

const fabric::Topology& tree() {
  return fourAryThreeTree();
}

// The daemon's config on the 4-ary 3-tree.
DaemonConfig kary(const std::string& agentFields, const std::string& name,
                  std::vector<std::string> extraArgs = {}) {
  return {.topo = &tree(),
          .fabric = "kary_n_tree { k: 4 n: 3 }",
          .agentFields = agentFields,
          .name = name,
          .extraArgs = std::move(extraArgs)};
}

fabric::LinkId linkOf(const std::string& sw, int ibPort) {
  return testing::linkOf(tree(), sw, ibPort);
}

std::string routeFromH1(fabric::SwitchId target, const std::set<fabric::LinkId>& avoid) {
  return routeFrom(tree(), "H2", target, avoid);  // H1 and H2 share a leaf
}

// Low load, then rising load, then SIGTERM, with the test as physical layer.
TEST(AgentDaemon, GatesRealPortsKeepsEveryPairReachableAndRestoresOnSigterm) {
  IbsimFabric fab(tree());
  const auto mt = fabric::MinimalTree::build(tree()).value();
  // Restore waves under the sanitizer build on a loaded 2-core CI machine took
  // longer than the default 30 s, and once more than 120 s: give the daemon
  // (and the test) 240 s; the ASan suite's timeout per test is 600 s.
  Daemon d(fab, kary("min_dwell_ms: 1500 restore_timeout_ms: 240000", "gating"));
  // The test is the physical layer: a port Set Disabled loses its cable
  // (Unlink, after checking it reads Disabled), a port Set Polling gets it
  // back (ReLink, as link training would).
  PhysicalLayer phys(fab, d, {.verifyDisabled = true, .tree = &mt});
  const std::set<fabric::LinkId>& down = phys.down();  // unlinked on ebb's behalf
  const std::set<fabric::LinkId>& everDisabled = phys.everDisabled();
  auto play = [&](const std::vector<Decision>& ds) { phys.play(ds); };
  // Until a check period passes with nothing new done (refusals repeat).
  for (int round = 0, quiet = 0; quiet < 1 && round < 40; ++round) {
    const auto ds = d.next(2500ms);
    const bool acted = std::any_of(
        ds.begin(), ds.end(), [](const Decision& x) { return x.accepted() || !x.event.empty(); });
    if (!acted) ++quiet;
    play(ds);
    ASSERT_TRUE(d.proc().running()) << d.err();
  }
  ASSERT_FALSE(down.empty()) << d.out() << d.err();
  EXPECT_LE(phys.unverified() * 4, everDisabled.size()) << "too few ports read Disabled";
  EXPECT_EQ(d.err().find("failed safe"), std::string::npos) << d.err();
  // 2. OpenSM re-routed around every disabled link: all host pairs reachable.
  std::string broken = "not checked";
  for (int attempt = 0; attempt < 5 && !broken.empty(); ++attempt) {
    fab.waitForOpenSmLog("SUBNET UP", 1s);
    broken = checkAllPairs(fab, tree(), down);
  }
  EXPECT_EQ(broken, "");
  // 3. Load rises: every leaf up port sends a lot; the agents enable links,
  // the test ReLinks them, and they come back LinkUp.
  const std::size_t before = down.size();
  for (fabric::SwitchId s : tree().switchesAtLevel(2)) {
    for (std::uint16_t p : tree().sw(s).upPorts) {
      fab.setCounter(tree().sw(s).name, p + 1, "PortCountersExtended.PortXmitData", 4'000'000'000);
    }
  }
  std::vector<PortName> enabled;
  for (int i = 0; i < 10 && enabled.empty(); ++i) {
    for (const Decision& x : d.next(1500ms)) {
      if (x.isSet("Polling") && down.count(linkOf(x.sw, x.port))) {
        enabled.emplace_back(x.sw, x.port);
      }
      play({x});
    }
  }
  ASSERT_FALSE(enabled.empty()) << d.out();
  EXPECT_LT(down.size(), before);
  const auto upNow = waitForStates(fab, tree(), enabled, "LinkUp", [&] {
    std::set<fabric::LinkId> a = d.offNow();
    a.insert(down.begin(), down.end());
    return a;
  });
  const std::set<fabric::LinkId> offAgain = d.offNow();
  for (const auto& p : enabled) {
    // The load was one burst: once min_dwell has passed, ebb may have set
    // the port Disabled again (its log is ahead of what the test played).
    if (offAgain.count(linkOf(p.first, p.second)) && upNow.at(p) == "Disabled") continue;
    EXPECT_EQ(upNow.at(p), "LinkUp") << p.first << "[" << p.second << "]";
  }
  // 6. SIGTERM: the daemon re-enables every link it still has disabled, in
  // waves (a dark switch is reached once a link before it has trained); the
  // test goes on playing the physical layer for the restore Sets it logs.
  d.proc().signal(SIGTERM);
  for (int i = 0; i < 800 && d.proc().running(); ++i) {
    play(d.next(300ms));
  }
  play(d.next(0ms));
  const int status = d.proc().stop(20s);
  EXPECT_EQ(status, 0) << d.err();
  EXPECT_TRUE(down.empty()) << down.size() << " links were not re-enabled";
  // ebb's own count can differ from what the test had played when SIGTERM
  // came; its log says what it restored: everything still off, once each.
  std::smatch m;
  const std::string out = d.out();
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(re-enabled the (\d+) links)"))) << out;
  EXPECT_GE(std::stoul(m[1].str()), 1u);
  EXPECT_EQ(std::stoul(m[1].str()), d.countFrom("restore"));
  EXPECT_TRUE(d.offNow().empty()) << d.offNow().size() << " links left off in ebb's log";
  std::vector<PortName> lowers;
  for (fabric::LinkId l : everDisabled) {
    const fabric::PortId lower = tree().link(l).lower;
    lowers.emplace_back(tree().sw(lower.sw).name, lower.index + 1);
  }
  const auto after = portStates(fab, tree(), lowers, {});
  for (const PortName& p : lowers) {
    EXPECT_EQ(after.at(p), "LinkUp") << p.first << "[" << p.second << "]";
  }
}

// 6 without the physical layer (the player stopped): the ports still read
// Disabled when SIGTERM arrives and nothing retrains them after the Polling
// Sets, so the restore ends at restore_timeout_ms with exit 1, naming every
// link it set Polling that never read LinkUp.
TEST(AgentDaemon, SigtermWithoutLinkUpExitsOneNamingTheLinksWithinTheTimeout) {
  IbsimFabric fab(tree());
  Daemon d(fab, kary("restore_timeout_ms: 3000", "sigterm"));
  std::vector<Decision> offs;
  for (int i = 0; i < 10 && offs.empty(); ++i) {
    for (const Decision& x : d.next(2s)) {
      if (x.isSet("Disabled")) offs.push_back(x);
    }
  }
  ASSERT_FALSE(offs.empty()) << d.out() << d.err();
  std::vector<PortName> ports;
  for (const Decision& x : offs) {
    ports.emplace_back(x.sw, x.port);
  }
  auto before = waitForStates(fab, tree(), ports, "Disabled", [&] { return d.offNow(); });
  for (const auto& p : ports) {
    EXPECT_EQ(before[p], "Disabled") << p.first << "[" << p.second << "]";
  }
  const auto t0 = std::chrono::steady_clock::now();
  d.proc().signal(SIGTERM);
  const std::optional<int> status = d.proc().wait(10s);
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(status.has_value()) << "still running 10 s after SIGTERM\n" << d.err();
  EXPECT_EQ(*status, 1) << d.out() << d.err();
  // restore_timeout_ms is 3 s; the margin covers the start of the restore.
  EXPECT_LT(took, 4500ms);
  EXPECT_GE(took, 2900ms) << "ended before the timeout: " << d.err();
  const std::string err = d.err();
  EXPECT_NE(err.find("links not back up after 3 s (restore_timeout_ms)"), std::string::npos) << err;
  for (const auto& p : ports) {
    const std::string link = tree().describeLink(linkOf(p.first, p.second));
    EXPECT_NE(err.find(link + ": set Polling"), std::string::npos) << link << "\n" << err;
  }
  EXPECT_EQ(d.out().find("re-enabled the"), std::string::npos) << d.out();
  // The restore did set them Polling (ibsim has no link training).
  // Around every link ebb ever disabled: Polling ones pass no SMP either.
  auto after = waitForStates(fab, tree(), ports, "Polling", [&] { return d.everDisabled(); });
  for (const auto& p : ports) {
    EXPECT_EQ(after[p], "Polling") << p.first << "[" << p.second << "]";
  }
}

// One field of `smpquery -D portinfo` ("LinkWidthActive" -> "1X"), or why not.
std::string readPortInfo(IbsimFabric& fab, const std::string& route, int ibPort,
                         const std::string& key) {
  const std::regex re("\n" + key + R"(:\.*([^\n]+))");
  const CommandResult r =
      fab.runClient({"smpquery", "-D", "portinfo", route, std::to_string(ibPort)}, "H2", 30s);
  std::smatch m;
  const std::string text = "\n" + r.out;
  if (r.exitCode == 0 && std::regex_search(text, m, re)) return m[1].str();
  return fmt::format("unreadable by smpquery -D portinfo {} {}: {}", route, ibPort, r.err);
}

// Width reduction instead of disabling (agent.gating_action REDUCE_WIDTH):
// ebb writes 1x into LinkWidthEnabled at both ends of a non-MT link after
// reading what was there; ibsim applies it to LinkWidthActive at both ends at
// once and the link stays LinkUp (nothing for the test to play). ibsim sends
// trap 144, OpenSM heavy-sweeps and writes LinkWidthEnabled 255 (its default
// force_link_width), which ibsim ignores: the width stays reduced. SIGTERM
// writes back the width read before.
TEST(AgentDaemon, ReduceWidthKeepsLinksUpAtOneLaneAndRestoresTheWidthOnSigterm) {
  IbsimFabric fab(tree());
  const auto mt = fabric::MinimalTree::build(tree()).value();
  Daemon d(fab, kary("gating_action: REDUCE_WIDTH", "width"));
  std::vector<PortName> reduced;
  std::size_t decisions = 0;
  std::map<fabric::LinkId, int> endsSet;  // by link: reduce_width Sets logged
  auto halfDone = [&] {
    return std::any_of(endsSet.begin(), endsSet.end(), [](const auto& e) { return e.second < 2; });
  };
  for (int i = 0; i < 20 && (reduced.size() < 6 || halfDone()); ++i) {
    for (const Decision& x : d.next(2s)) {
      EXPECT_TRUE(x.setAction.empty() || x.setAction == "reduce_width")
          << x.setAction << " " << x.sw << "[" << x.port << "]";
      if (x.event == "port_set" && x.setAction == "reduce_width") {
        reduced.emplace_back(x.sw, x.port);
        ++endsSet[linkOf(x.sw, x.port)];
        EXPECT_FALSE(mt.containsLink(linkOf(x.sw, x.port)))
            << "ebb narrowed the MT link at " << x.sw << "[" << x.port << "]";
      }
      if (x.accepted()) {
        ++decisions;
        EXPECT_EQ(x.gatingAction, "reduce_width");
      }
    }
  }
  ASSERT_FALSE(reduced.empty()) << d.out() << d.err();
  EXPECT_GT(decisions, 0u);
  EXPECT_NE(d.out().find("gating action: reduce width"), std::string::npos) << d.out();
  // Both ends of each reduced link were set (every switch is allow-listed).
  EXPECT_FALSE(halfDone());
  std::set<fabric::LinkId> links;
  for (const auto& [l, n] : endsSet)
    links.insert(l);
  EXPECT_EQ(reduced.size(), 2 * links.size());
  // ibsim sends no trap 144 for it (the port the SMP entered by has no LID),
  // so make OpenSM heavy-sweep another way: a host cable out and back (trap
  // 128). Its sweep writes LinkWidthEnabled 255 (force_link_width), which
  // ibsim ignores: the widths stay reduced.
  const auto upCount = [](const std::string& t) {
    std::size_t n = 0;
    for (auto at = t.find("SUBNET UP"); at != std::string::npos; at = t.find("SUBNET UP", at + 1))
      ++n;
    return n;
  };
  const std::size_t sweeps = upCount(fab.openSmLog());
  fab.unlink("H63", 1);
  fab.relink("H63", 1);
  EXPECT_TRUE(waitForFile(
      fab.scratchDir() + "/opensm.log", [&](const std::string& t) { return upCount(t) > sweeps; },
      10s))
      << "OpenSM did not sweep again";
  for (const PortName& p : reduced) {
    const std::string route = routeFromH1(*tree().findSwitch(p.first), {});
    EXPECT_EQ(readPortInfo(fab, route, p.second, "LinkWidthEnabled"), "1X")
        << p.first << "[" << p.second << "]";
    EXPECT_EQ(readPortInfo(fab, route, p.second, "LinkWidthActive"), "1X")
        << p.first << "[" << p.second << "]";
    EXPECT_EQ(readPortInfo(fab, route, p.second, "PhysLinkState"), "LinkUp")
        << p.first << "[" << p.second << "]";
  }
  EXPECT_EQ(d.err().find("failed safe"), std::string::npos) << d.err();
  EXPECT_EQ(d.proc().stop(20s), 0) << d.err();
  std::smatch m;
  const std::string out = d.out();
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(restored the width of the (\d+) links)")))
      << out;
  EXPECT_GE(std::stoul(m[1].str()), links.size());
  EXPECT_EQ(std::stoul(m[1].str()), d.countFrom("restore"));
  // Back to what ebb read before: ibsim's "1X or 4X" for a 4xQDR cable.
  for (const PortName& p : reduced) {
    const std::string route = routeFromH1(*tree().findSwitch(p.first), {});
    EXPECT_EQ(readPortInfo(fab, route, p.second, "LinkWidthEnabled"), "1X or 4X")
        << p.first << "[" << p.second << "]";
    EXPECT_EQ(readPortInfo(fab, route, p.second, "LinkWidthActive"), "4X")
        << p.first << "[" << p.second << "]";
  }
}

// The time a line matching `re` appears in the file, waiting up to `timeout`.
bool waitForLine(const std::string& path, const std::regex& re, std::chrono::milliseconds timeout) {
  return waitForFile(
      path, [&](const std::string& t) { return std::regex_search(t, re); }, timeout);
}

// OpenSM's events: OpenSM loads ebb's plugin (opensm.conf event_plugin_name,
// found on LD_LIBRARY_PATH), ibsim's Unlink and ReLink send trap 128 to
// OpenSM, the plugin forwards it over the daemon's Unix socket, and the daemon
// re-reads that switch's ports at once: with a check period of 60 s, nothing
// but the event can make it look before the test gives up after 5 s.
TEST(AgentDaemon, OpenSmEventsMakeTheDaemonReReadASwitchAtOnce) {
  IbsimFabric fab(tree(), withOsmEventPlugin());
  ASSERT_NE(fab.openSmLog().find("ebb_osm_events: forwarding events to osm-events.sock"),
            std::string::npos)
      << fab.openSmLog().substr(0, 3000);
  Daemon d(fab, kary("osm_events: \"osm-events.sock\"", "events", {"agent.check_period_ms=60000"}));
  ASSERT_TRUE(waitForText(d.outPath(), "OpenSM events on", 20s)) << d.out() << d.err();
  ASSERT_NE(d.out().find("check period 60000 ms"), std::string::npos) << d.out();
  const fabric::SwitchId leaf = tree().switchesAtLevel(2).front();
  const std::string name = tree().sw(leaf).name;
  const int port = tree().sw(leaf).upPorts.back() + 1;
  using Clock = std::chrono::steady_clock;
  // Cable out: trap 128 from the leaf; its re-read finds the port down.
  auto t0 = Clock::now();
  fab.unlink(name, port);
  const std::regex down(fmt::format(
      R"re("event":"port_reread","switch":\d+,"switch_name":"{}","cause":"trap 128","since_reported_ms":([0-9.]+),"changes":\[[^\]]*\{{"port":{},"state":"(Polling|Disabled|Sleep)"\}})re",
      name, port));
  ASSERT_TRUE(waitForLine(d.logPath(), down, 5s))
      << "no re-read of " << name << " within 5 s\n"
      << readWholeFile(d.logPath()) << d.out() << d.err();
  EXPECT_LT(Clock::now() - t0, 5s);
  std::smatch m;
  const std::string log = readWholeFile(d.logPath());
  ASSERT_TRUE(std::regex_search(log, m, down));
  EXPECT_LT(std::stod(m[1].str()), 2000.0) << "ms from OpenSM's report to the re-read";
  // The unlink starts a heavy sweep; a port change during it is taken in by
  // the sweep, with no trap of its own. So the cable goes back once OpenSM is
  // idle again (a sweep can take seconds on a loaded machine).
  ASSERT_TRUE(waitForLine(d.logPath(),
                          std::regex(R"("trap":128[\s\S]*"osm_event":"heavy_sweep_done")"), 60s))
      << readWholeFile(d.logPath());
  // Cable back: trap 128 again, from both ends; the first end re-read finds
  // it LinkUp (the other then finds nothing new: the link is up already).
  t0 = Clock::now();
  fab.relink(name, port);
  const fabric::PortId far =
      tree().link(tree().sw(leaf).ports[static_cast<std::size_t>(port - 1)].link).upper;
  const auto upAt = [](const std::string& sw, int p) {
    return fmt::format(
        R"re("switch_name":"{}","cause":"trap 128","since_reported_ms":[0-9.]+,"changes":\[[^\]]*\{{"port":{},"state":"LinkUp"\}})re",
        sw, p);
  };
  const std::regex up(upAt(name, port) + "|" + upAt(tree().sw(far.sw).name, far.ibPortNumber()));
  ASSERT_TRUE(waitForLine(d.logPath(), up, 5s)) << readWholeFile(d.logPath());
  EXPECT_LT(Clock::now() - t0, 5s);
  // OpenSM's sweeps and traps: every event is in the decision log.
  EXPECT_NE(readWholeFile(d.logPath()).find(R"("osm_event":"trap","trap":128)"), std::string::npos);
  EXPECT_EQ(d.proc().stop(20s), 0) << d.err();
  EXPECT_TRUE(std::regex_search(
      d.out(), std::regex(R"([1-9]\d* OpenSM events \(0 malformed\), [1-9]\d* re-reads)")))
      << d.out();
  EXPECT_NE(d.out().find("re-read on OpenSM trap 128"), std::string::npos) << d.out();
}

// 4. Dry run: decisions are made and logged, no Set is sent.
TEST(AgentDaemon, DryRunDecidesButNeverSets) {
  IbsimFabric fab(tree());
  Daemon d(fab, kary("dry_run: true run_for_ms: 1500", "dryrun"));
  const auto status = d.proc().wait(30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << d.err();
  std::vector<Decision> offs;
  for (const Decision& x : d.next(0ms)) {
    if (x.accepted() && !x.on) offs.push_back(x);
    EXPECT_NE(x.event, "port_set") << "a Set went out in dry run: " << x.sw << "[" << x.port << "]";
  }
  EXPECT_FALSE(offs.empty()) << d.out();
  EXPECT_NE(d.out().find("mode: dry run"), std::string::npos);
  // No agent.ca: ebb asked libibverbs first, which sees nothing under ibsim.
  EXPECT_NE(d.out().find("libibverbs sees no RDMA device (no hardware, or ibsim"),
            std::string::npos)
      << d.out();
  EXPECT_NE(d.out().find(" 0 port Sets"), std::string::npos) << d.out();
  std::vector<PortName> ports;
  for (const Decision& x : offs)
    ports.emplace_back(x.sw, x.port);
  const auto states = portStates(fab, tree(), ports, {});
  for (const Decision& x : offs) {
    EXPECT_EQ(states.at({x.sw, x.port}), "LinkUp") << x.sw << "[" << x.port << "]";
  }
}

// A port found Disabled at start (an operator's, or a killed run's): the
// daemon runs its agents until run_for_ms. The last discovery reply used to
// leave the event loop out of work, so stopped: the daemon printed its
// startup line and exited 0 at once, doing nothing (a probe's finding).
TEST(AgentDaemon, APortFoundDisabledAtStartStillRunsTheAgents) {
  IbsimFabric fab(tree());
  const CommandResult r = fab.runClient({"ibportstate", "-D", "0,1", "8", "disable"}, "H1");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  Daemon d(fab, kary("dry_run: true run_for_ms: 1500", "found_disabled"));
  const auto status = d.proc().wait(30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << d.out() << d.err();
  EXPECT_NE(d.out().find("stopping (run_for_ms elapsed)"), std::string::npos) << d.out();
  EXPECT_EQ(d.err().find("internal error"), std::string::npos) << d.err();
}

// `ebb agent --sweep N`: every cabled port of every switch read N times over
// PMA, nothing decided, no Set sent (the timing behind docs/performance.md).
TEST(AgentDaemon, CounterSweepReadsEveryPortAndSetsNothing) {
  IbsimFabric fab(tree());
  std::size_t ports = 0;
  for (const fabric::Switch& s : tree().switches()) {
    for (const fabric::Port& p : s.ports)
      ports += p.role == fabric::PortRole::kUnused ? 0u : 1u;
  }
  Daemon d(fab, kary("max_outstanding: 16", "sweep", {"--sweep", "3"}));
  const auto status = d.proc().wait(60s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << d.out() << d.err();
  const std::string out = d.out();
  EXPECT_NE(out.find(fmt::format("counter sweep 3/3: {} switches, {} port reads in",
                                 tree().numSwitches(), ports)),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("at most 16 MADs outstanding"), std::string::npos) << out;
  EXPECT_EQ(out.find("failed"), std::string::npos) << out;
  EXPECT_EQ(out.find(" set "), std::string::npos) << out;
  EXPECT_TRUE(d.next(0ms).empty()) << "the sweep decided or set something";
}

// 5. ibsim dies mid-run: the daemon reports lost contact, stays up, exits
// cleanly on SIGTERM.
TEST(AgentDaemon, LostContactFailsSafeWithoutCrashing) {
  IbsimFabric fab(tree());
  Daemon d(fab, kary("mad_retries: 1 restore_timeout_ms: 2000 lost_contact_ms: 1000", "lost"));
  ASSERT_FALSE(d.next(10s).empty()) << d.err();
  fab.killIbsim();
  EXPECT_TRUE(waitForText(d.errPath(), "failed safe", 20s)) << d.err();
  EXPECT_TRUE(d.proc().running());
  const int status = d.proc().stop(20s);
  EXPECT_LT(status, 128) << "killed by a signal";
  EXPECT_NE(d.out().find("stopping (SIGTERM)"), std::string::npos) << d.out();
  // libumad2sim's line per MAD once ibsim is gone (thousands) is said once.
  const std::string err = d.err();
  std::size_t noise = 0;
  for (std::size_t at = 0; (at = err.find("ERR: umad2sim_write", at)) != std::string::npos; ++at)
    ++noise;
  EXPECT_EQ(noise, 2u) << "quoted in the clear line and the summary only: " << err;
  EXPECT_NE(err.find("the ibsim simulator is gone"), std::string::npos) << err;
  EXPECT_TRUE(std::regex_search(err, std::regex("ebb agent: \\d+ more \"ERR: umad2sim_write: "
                                                "cannot write\" lines from libumad2sim not shown")))
      << err;
}

// `ebb agent --list-devices` next to ibsim: libumad2sim simulates umad, not
// verbs, so libibverbs lists no device; ebb says so and exits 0.
TEST(AgentDaemon, ListDevicesUnderIbsimSaysVerbsSeesNoDevice) {
  IbsimFabric fab(tree(), {.startOpenSm = false});
  ChildProcess::Spec spec;
  spec.argv = {std::string(EBB_BINARY_DIR) + "/tools/ebb", "agent", "--list-devices"};
  spec.env = fab.clientEnv("H1");
  spec.env["ASAN_OPTIONS"] = kChildAsanOptions;
  spec.cwd = fab.scratchDir();
  const CommandResult r = runCommand(spec, 30s);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("libibverbs: no RDMA devices"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("ebb talks through libibumad"), std::string::npos) << r.out;
  // Without --config and without --list-devices: a usage error naming it.
  spec.argv.pop_back();
  const CommandResult u = runCommand(spec, 30s);
  EXPECT_NE(u.exitCode, 0);
  EXPECT_NE(u.err.find("--config is required"), std::string::npos) << u.err;
}

// Bad input: the fabric is never touched.
TEST(AgentDaemon, RefusesBadInputWithoutTouchingTheFabric) {
  IbsimFabric fab(tree());
  const std::string cfg = fab.scratchDir() + "/bad.textproto";
  std::ofstream(cfg) << "fabric { kary_n_tree { k: 4 n: 3 } }\n"
                        "agent { allow_switches: \"0x00000000deadbeef\" }\n";
  ChildProcess::Spec spec;
  spec.argv = {std::string(EBB_BINARY_DIR) + "/tools/ebb", "agent", "--config", cfg};
  spec.env = fab.clientEnv("H1");
  spec.env["ASAN_OPTIONS"] = kChildAsanOptions;
  spec.cwd = fab.scratchDir();
  CommandResult r = runCommand(spec, 30s);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("agent.allow_switches[0]: 0x00000000deadbeef is not a switch"),
            std::string::npos)
      << r.err;
  // No simulator under this socket name: a clear error after the open timeout.
  std::ofstream(cfg) << "fabric { kary_n_tree { k: 4 n: 3 } }\n";
  spec.argv.push_back("--open-timeout-ms");
  spec.argv.push_back("1500");
  spec.env["IBSIM_SOCKNAME"] = fab.socketName() + "-absent";
  r = runCommand(spec, 30s);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("opening the umad port took more than"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ebb::testing
