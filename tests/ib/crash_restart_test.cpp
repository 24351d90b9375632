// `ebb agent` killed without its SIGTERM restore (SIGKILL, a crash): the
// ports it set Disabled stay Disabled, and its state file says whose they
// are. The next run on the same state file takes them back and re-enables
// them on SIGTERM as its own, leaving alone a port an operator disabled
// (docs/ib_agent.md, "Crash and restart"). ibsim without the physical layer:
// Disabled ports keep reading Disabled, Polling ones never train.
#include <gtest/gtest.h>

#include <csignal>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>

#include "common/child_process.h"
#include "daemon/gate_record.h"
#include "fabric/minimal_tree.h"
#include "tests/harness/ibsim_fabric.h"
#include "tests/ib/daemon_rig.h"

namespace ebb::testing {
namespace {

using namespace std::chrono_literals;

const fabric::Topology& tree() {
  return fourAryThreeTree();
}

DaemonConfig kary(const std::string& agentFields, const std::string& name) {
  return {.topo = &tree(),
          .fabric = "kary_n_tree { k: 4 n: 3 }",
          .agentFields = agentFields,
          .name = name};
}

TEST(CrashRestart, ARunAfterSigkillTakesBackWhatTheKilledRunDisabledAndRestoresIt) {
  IbsimFabric fab(tree());
  const auto mt = fabric::MinimalTree::build(tree()).value();
  // An operator's port, Disabled before ebb ever ran: an up port of H2's
  // leaf off the minimal tree (the route "0,1" from H2 reaches that leaf).
  const fabric::SwitchId leaf = tree().link(tree().hosts()[1].link).upper.sw;
  fabric::PortId operatorPort;
  for (std::uint16_t p : tree().sw(leaf).upPorts) {
    if (!mt.containsLink(tree().sw(leaf).ports[p].link)) operatorPort = {leaf, p};
  }
  const fabric::LinkId operatorLink = tree().sw(leaf).ports[operatorPort.index].link;
  ASSERT_FALSE(mt.containsLink(operatorLink));
  const CommandResult off = fab.runClient(
      {"ibportstate", "-D", "0,1", std::to_string(operatorPort.ibPortNumber()), "disable"}, "H2");
  ASSERT_EQ(off.exitCode, 0) << off.out << off.err;

  // 1. The first run gates links under no load, until it settles.
  auto first = std::make_unique<Daemon>(fab, kary("", "first"));
  std::size_t quiet = 0;
  for (int round = 0; round < 20 && quiet < 2; ++round) {
    const auto ds = first->next(1500ms);
    const bool set =
        std::any_of(ds.begin(), ds.end(), [](const Decision& x) { return x.isSet("Disabled"); });
    quiet = set || first->offNow().empty() ? 0 : quiet + 1;
    ASSERT_TRUE(first->proc().running()) << first->err();
  }
  const std::set<fabric::LinkId> disabled = first->offNow();
  ASSERT_FALSE(disabled.empty()) << first->out() << first->err();
  EXPECT_EQ(disabled.count(operatorLink), 0u);
  // Its state file names every port it set Disabled, at the end it set; it
  // may name one more, whose Set went out and got no answer (a loaded
  // machine): that port may or may not be Disabled.
  const std::string statePath = fab.scratchDir() + "/agent.gates";
  auto held = daemon::GateRecord::read(statePath, tree());
  ASSERT_TRUE(held) << held.status().toString();
  std::set<fabric::LinkId> recorded;
  std::map<fabric::LinkId, PortName> endOf;
  for (const ib::HeldGate& g : held->gates) {
    EXPECT_FALSE(g.narrowed);
    const fabric::LinkId l = tree().sw(g.end.sw).ports[g.end.index].link;
    recorded.insert(l);
    endOf[l] = {tree().sw(g.end.sw).name, g.end.ibPortNumber()};
  }
  EXPECT_TRUE(std::includes(recorded.begin(), recorded.end(), disabled.begin(), disabled.end()))
      << "a port set Disabled is missing from the state file";

  // 2. SIGKILL: no restore; the ports stay Disabled.
  first->proc().signal(SIGKILL);
  ASSERT_TRUE(first->proc().wait(10s).has_value());
  std::vector<PortName> logged, all;
  for (const auto& [l, p] : endOf) {
    all.push_back(p);
    if (disabled.count(l)) logged.push_back(p);
  }
  waitForStates(fab, tree(), logged, "Disabled", [&] { return recorded; });
  const auto still = portStates(fab, tree(), all, recorded);
  std::set<fabric::LinkId> gated;  // what the fabric shows Disabled now
  for (const auto& [l, p] : endOf) {
    if (still.at(p) == "Disabled") gated.insert(l);
  }
  for (fabric::LinkId l : disabled) {
    if (!endOf.count(l)) continue;  // missing from the file: said above
    EXPECT_TRUE(gated.count(l)) << endOf[l].first << "[" << endOf[l].second << "] reads "
                                << still.at(endOf[l]);
  }
  std::vector<PortName> ports;
  for (fabric::LinkId l : gated)
    ports.push_back(endOf[l]);

  // 3. The next run takes them back (not the operator's port) ...
  Daemon second(fab, kary("restore_timeout_ms: 3000", "second"));
  ASSERT_TRUE(waitForText(second.outPath(), "ebb agent: 48", 60s)) << second.out() << second.err();
  const std::string out = second.out();
  EXPECT_NE(out.find(fmt::format("took back {} gate(s) a previous run left", gated.size())),
            std::string::npos)
      << out;
  for (fabric::LinkId l : gated) {
    EXPECT_NE(out.find(tree().describeLink(l) + " (Disabled at"), std::string::npos)
        << tree().describeLink(l) << "\n"
        << out;
  }
  EXPECT_EQ(out.find(tree().describeLink(operatorLink) + " (Disabled at"), std::string::npos)
      << out;
  // ... and on SIGTERM re-enables them as its own: Polling at each end the
  // first run set (no link training here, so it ends at the timeout, 1).
  // Printed once its SIGTERM handler is in place.
  ASSERT_TRUE(waitForText(second.outPath(), "metrics on http", 30s))
      << second.out() << second.err();
  second.proc().signal(SIGTERM);
  const std::optional<int> status = second.proc().wait(30s);
  ASSERT_TRUE(status.has_value()) << second.err();
  EXPECT_EQ(*status, 1) << second.out() << second.err();
  const std::string err = second.err();
  for (fabric::LinkId l : gated) {
    EXPECT_NE(err.find(tree().describeLink(l) + ": set Polling"), std::string::npos)
        << tree().describeLink(l) << "\n"
        << err;
  }
  EXPECT_EQ(err.find(tree().describeLink(operatorLink)), std::string::npos) << err;
  const auto after = waitForStates(fab, tree(), ports, "Polling", [&] { return recorded; });
  for (const PortName& p : ports) {
    EXPECT_EQ(after.at(p), "Polling") << p.first << "[" << p.second << "]";
  }
  const auto op =
      portStates(fab, tree(), {{tree().sw(leaf).name, operatorPort.ibPortNumber()}}, recorded);
  EXPECT_EQ(op.begin()->second, "Disabled");
  // What it set Polling is no longer held: the file lists none of them.
  held = daemon::GateRecord::read(statePath, tree());
  ASSERT_TRUE(held) << held.status().toString();
  for (const ib::HeldGate& g : held->gates) {
    EXPECT_EQ(gated.count(tree().sw(g.end.sw).ports[g.end.index].link), 0u);
  }
}

}  // namespace
}  // namespace ebb::testing
