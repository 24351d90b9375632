// `ebb agent` when its own way to the switches fails, on ibsim + real OpenSM
// (the irregular fabric of tests/ib/irregular_fabric.h, the test playing the
// physical layer): the management port's cable cut and reconnected, a
// switch cut off by failed cables repaired with no trap to tell, and no
// subnet manager running (docs/ib_agent.md, *Safe by default*).
#include <gtest/gtest.h>

#include <csignal>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "common/child_process.h"
#include "tests/harness/ibsim_fabric.h"
#include "tests/ib/daemon_rig.h"
#include "tests/ib/irregular_fabric.h"

namespace ebb::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Plays the physical layer until `done` holds (checked after each batch),
// at most `timeout`; the batches seen are appended to `seen`.
bool playUntil(Daemon& d, PhysicalLayer& phys, std::chrono::milliseconds timeout,
               const std::function<bool()>& done, std::vector<Decision>* seen = nullptr) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline && d.proc().running()) {
    const std::vector<Decision> ds = d.next(100ms);
    phys.play(ds);
    if (seen) seen->insert(seen->end(), ds.begin(), ds.end());
    if (done()) return true;
  }
  return false;
}

// SIGTERM, playing the restore's Sets until the daemon exits.
std::optional<int> sigterm(Daemon& d, PhysicalLayer& phys) {
  d.proc().signal(SIGTERM);
  playUntil(d, phys, 15s, [&] { return !d.proc().running(); });
  phys.play(d.next(0ms));
  return d.proc().wait(0ms);
}

std::string names(const std::set<fabric::LinkId>& links) {
  std::string out;
  for (fabric::LinkId l : links)
    out += (out.empty() ? "" : ", ") + irregular().describeLink(l);
  return out;
}

// (1) The cable of the management port (H1) is cut: every agent fails safe,
// but no re-enable reaches a switch. Nothing may claim a link re-enabled;
// the re-enables stay pending. The cable comes back: every pending
// re-enable goes out, before any new turn-off.
TEST(ManagementSafety, ReenablesNotDeliveredStayPendingAndGoOutFirstWhenContactReturns) {
  IbsimFabric fab(irregular(), fabricOptions(false));
  Daemon d(fab, onIrregular(fab,
                            "mad_retries: 1 lost_contact_ms: 600 restore_timeout_ms: 1000 "
                            "resume_after_fail_safe_ms: 1000",
                            "cut"));
  PhysicalLayer phys(fab, d, {.tree = &irregularTree()});
  playUntilQuiet(d, phys, 25s);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_FALSE(phys.down().empty()) << "ebb gated nothing\n" << d.out() << d.err();
  fab.unlink("H1", 1);
  ASSERT_TRUE(waitForText(d.errPath(), "failed safe", 20s)) << d.err();
  ASSERT_TRUE(waitForText(d.errPath(), "stays pending", 10s)) << d.err();
  std::vector<Decision> whileCut;
  playUntil(
      d, phys, 1500ms, [] { return false; }, &whileCut);
  for (const Decision& x : whileCut) {
    EXPECT_FALSE(x.isSet("Polling")) << "a Set acknowledged through a cut cable";
  }
  EXPECT_EQ(d.out().find("re-enable delivered"), std::string::npos) << d.out();
  EXPECT_EQ(d.out().find("re-enabled the"), std::string::npos) << d.out();
  const std::set<fabric::LinkId> pending = phys.down();
  ASSERT_FALSE(pending.empty());
  // Contact returns: the pending re-enables all go out (the player trains
  // them), each before any turn-off.
  fab.relink("H1", 1);
  std::vector<Decision> after;
  const bool allBack = playUntil(
      d, phys, 20s,
      [&] {
        return !std::any_of(pending.begin(), pending.end(),
                            [&](auto l) { return phys.down().count(l) > 0; });
      },
      &after);
  EXPECT_TRUE(allBack) << "still disabled: " << names(phys.down()) << "\n" << d.out() << d.err();
  std::set<fabric::LinkId> outstanding = pending;
  for (const Decision& x : after) {
    if (x.isSet("Polling")) outstanding.erase(d.linkOf(x.sw, x.port));
    if (x.isSet("Disabled")) {
      EXPECT_TRUE(outstanding.empty()) << "turned " << x.sw << "[" << x.port
                                       << "] off before re-enabling " << names(outstanding);
    }
  }
  EXPECT_NE(d.out().find("re-enable delivered"), std::string::npos) << d.out();
  const std::optional<int> status = sigterm(d, phys);
  ASSERT_TRUE(status) << "still running after SIGTERM";
  EXPECT_EQ(*status, 0) << d.out() << d.err();
}

// (1b) While the management port's cable is cut, a minimal-tree cable fails
// elsewhere: its trap goes nowhere (no event plugin, and the SM is cut off
// too). When the cable comes back, ebb reads every watched switch's ports
// again at once, finds the failure and re-homes the tree around it.
TEST(ManagementSafety, AFailureWhileTheManagementPathIsCutIsReadWhenItComesBack) {
  IbsimFabric fab(irregular(), fabricOptions(false));
  Daemon d(fab, onIrregular(fab, "lost_contact_ms: 60000 restore_timeout_ms: 5000", "outage"));
  PhysicalLayer phys(fab, d, {.tree = &irregularTree()});
  playUntilQuiet(d, phys, 25s);
  ASSERT_FALSE(HasFatalFailure());
  // A minimal-tree cable of a leaf away from H1's, up now.
  const fabric::Topology& t = irregular();
  const fabric::SwitchId h1Leaf = t.link(t.host(*t.findHost("H1")).link).upper.sw;
  std::optional<PortName> cable;
  fabric::LinkId cableLink;
  for (fabric::SwitchId leaf : t.switchesAtLevel(t.depth() - 1)) {
    if (leaf == h1Leaf || cable) continue;
    for (std::uint16_t p : t.sw(leaf).upPorts) {
      const fabric::LinkId l = t.sw(leaf).ports[p].link;
      if (irregularTree().containsLink(l) && !phys.down().count(l)) {
        cable = PortName{t.sw(leaf).name, p + 1};
        cableLink = l;
        break;
      }
    }
  }
  ASSERT_TRUE(cable.has_value());
  phys.forgetTree();
  fab.unlink("H1", 1);
  ASSERT_TRUE(playUntil(d, phys, 10s, [&] {
    return d.err().find("no master subnet manager") != std::string::npos;
  })) << d.err();
  phys.fail(*cable);
  playUntil(d, phys, 1s, [] { return false; });
  EXPECT_EQ(d.out().find("re-homed after " + t.describeLink(cableLink)), std::string::npos)
      << "heard of the failure through a cut cable?\n"
      << d.out();
  fab.relink("H1", 1);
  EXPECT_TRUE(playUntil(d, phys, 20s,
                        [&] {
                          return d.out().find("re-homed after " + t.describeLink(cableLink)) !=
                                 std::string::npos;
                        }))
      << d.out() << d.err();
  // Found by a re-read at one end of the failed cable: the one after the
  // outage, or that of a switch back in reach (whichever read it first; the
  // line comes once all of that switch's ports are read).
  const fabric::PortId upper = t.link(cableLink).upper;
  const auto readThere = [&] {
    const std::string out = d.out();
    for (const char* why : {"after the management path came back", "when it came back in reach"}) {
      for (const auto& [sw, port] :
           {*cable, PortName{t.sw(upper.sw).name, static_cast<int>(upper.ibPortNumber())}}) {
        if (out.find(fmt::format("{} re-read {}: [{}]", sw, why, port)) != std::string::npos)
          return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(playUntil(d, phys, 5s, readThere)) << d.out();
  const std::optional<int> status = sigterm(d, phys);
  ASSERT_TRUE(status) << "still running after SIGTERM";
}

// (2) The minimal tree's root loses every cable it has up (the player Unlinks
// them); there is no event plugin, so no trap tells ebb of the repair that
// follows. A re-probe (or the re-read of a switch back in reach) finds it:
// the root is in reach again, and SIGTERM then
// re-enables every link ebb disabled, at the root's end too: exit 0.
TEST(ManagementSafety, ARepairWhoseTrapIsLostIsFoundAndSigtermRestoresEveryLink) {
  IbsimFabric fab(irregular(), fabricOptions(false));
  Daemon d(fab, onIrregular(fab, "mad_retries: 1 lost_contact_ms: 600 restore_timeout_ms: 5000",
                            "repair"));
  PhysicalLayer phys(fab, d, {.tree = &irregularTree()});
  playUntilQuiet(d, phys, 25s);
  ASSERT_FALSE(HasFatalFailure());
  const fabric::SwitchId root = irregularTree().root();
  const fabric::Switch& sw = irregular().sw(root);
  phys.forgetTree();
  std::vector<PortName> failed;
  for (std::uint16_t p = 0; p < sw.ports.size(); ++p) {
    const fabric::LinkId l = sw.ports[p].link;
    if (!l.valid() || phys.down().count(l)) continue;  // ebb's own: unlinked already
    failed.push_back({sw.name, p + 1});
    phys.fail(failed.back());
  }
  ASSERT_FALSE(failed.empty());
  ASSERT_TRUE(
      playUntil(d, phys, 20s,
                [&] { return d.err().find(sw.name + " is out of reach") != std::string::npos; }))
      << d.out() << d.err();
  for (const PortName& p : failed)
    fab.relink(p.first, p.second);  // repaired; the trap goes nowhere
  EXPECT_TRUE(
      playUntil(d, phys, 20s,
                [&] { return d.out().find(sw.name + " is in reach again") != std::string::npos; }))
      << d.out() << d.err();
  EXPECT_TRUE(d.out().find("reads LinkUp again (no trap told of it)") != std::string::npos ||
              d.out().find(sw.name + " re-read when it came back in reach:") != std::string::npos)
      << d.out();
  const std::optional<int> status = sigterm(d, phys);
  ASSERT_TRUE(status) << "still running after SIGTERM";
  EXPECT_EQ(*status, 0) << d.out() << d.err();
  EXPECT_TRUE(phys.down().empty()) << "still disabled: " << names(phys.down());
}

// (3) No subnet manager: nothing re-routes around a disabled link, so ebb
// turns nothing off and says why, once. OpenSM starts: gating proceeds.
// OpenSM stops: ebb says so again; load turns links on, and they are not
// turned off again when it goes.
TEST(ManagementSafety, NoTurnOffWithoutAMasterSubnetManagerAndGatingOnceOneRuns) {
  IbsimFabric fab(irregular(), {.startOpenSm = false});
  Daemon d(fab, onIrregular(fab, "", "nosm"));
  PhysicalLayer phys(fab, d, {.tree = &irregularTree()});
  ASSERT_TRUE(waitForText(d.outPath(), "switches watched", 20s)) << d.out() << d.err();
  ASSERT_TRUE(waitForText(d.errPath(), "warning: no master subnet manager", 5s)) << d.err();
  playUntil(d, phys, 2s, [] { return false; });  // ten check periods
  EXPECT_TRUE(d.everDisabled().empty()) << "a link turned off with no SM";
  const std::string err = d.err();
  EXPECT_EQ(err.find("no master subnet manager"), err.rfind("no master subnet manager"))
      << "said more than once: " << err;
  EXPECT_NE(err.find("MasterSMLID 0"), std::string::npos) << err;

  ChildProcess::Spec sm;
  sm.argv = {"opensm", "-R", "updn", "-s", "10", "-d2", "-f", fab.scratchDir() + "/sm.log", "-e"};
  sm.env = fab.clientEnv("H0");
  sm.env["OSM_CACHE_DIR"] = fab.scratchDir();
  sm.env["OSM_TMP_DIR"] = fab.scratchDir();
  sm.cwd = fab.scratchDir();
  sm.stdoutPath = fab.scratchDir() + "/sm.out";
  ChildProcess opensm(sm);
  ASSERT_TRUE(waitForText(fab.scratchDir() + "/sm.log", "SUBNET UP", 20s))
      << readWholeFile(fab.scratchDir() + "/sm.out");
  EXPECT_TRUE(playUntil(d, phys, 20s, [&] { return !phys.everDisabled().empty(); }))
      << d.out() << d.err();
  EXPECT_NE(d.out().find("routes the subnet: turn-offs resume"), std::string::npos) << d.out();
  playUntilQuiet(d, phys, 20s);
  ASSERT_FALSE(HasFatalFailure());
  // The SM dies (the LIDs and routes it set stay): ebb says so, and a link
  // that load turned on is not turned off again when the load goes.
  opensm.stop(3000ms);
  ASSERT_TRUE(playUntil(d, phys, 10s, [&] {
    return d.err().find("does not answer SMInfo") != std::string::npos;
  })) << d.err();
  const fabric::Switch& leaf = irregular().sw(*irregular().findSwitch("L5"));
  std::vector<Decision> afterSm;
  std::uint64_t sent = 0;
  for (int i = 0; i < 8; ++i) {  // 0.8 s of load far above what the links carry
    sent += 500'000'000;
    for (std::uint16_t p : leaf.upPorts)
      fab.setCounter(leaf.name, p + 1, "PortCountersExtended.PortXmitData", sent);
    playUntil(
        d, phys, 100ms, [] { return false; }, &afterSm);
  }
  const auto refusedNoSm = [&] {
    return std::any_of(afterSm.begin(), afterSm.end(), [](const Decision& x) {
      return x.refused && x.why.find("no master subnet manager") != std::string::npos;
    });
  };
  EXPECT_TRUE(playUntil(d, phys, 5s, refusedNoSm, &afterSm)) << readWholeFile(d.logPath());
  EXPECT_TRUE(std::any_of(afterSm.begin(), afterSm.end(), [](const Decision& x) {
    return x.isSet("Polling");
  })) << "the load turned nothing on (turn-ons go on without an SM)";
  for (const Decision& x : afterSm) {
    EXPECT_FALSE(x.isSet("Disabled")) << x.sw << "[" << x.port << "] disabled with no SM";
  }
  const std::optional<int> status = sigterm(d, phys);
  ASSERT_TRUE(status) << "still running after SIGTERM";
  EXPECT_EQ(*status, 0) << d.out() << d.err();
}

}  // namespace
}  // namespace ebb::testing
