// Topology versus fabric on ibsim + OpenSM: a hand-written fabric that is not
// a k-ary n-tree (3 spines of 12 ports, 5 leaves of 8, irregular port
// numbers, one leaf cabled to two spines only), and a topology given to ebb
// that differs from it by one cable missing from the fabric (its ports read
// nothing trained: a failed cable, taken in as one) and one extra cable (a
// difference). REFUSE exits 1 before anything is Set, naming the extra one;
// WARN lists it and runs with the missing one failed.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "common/child_process.h"
#include "fabric/ibnetdiscover.h"
#include "tests/harness/ibsim_fabric.h"
#include "tests/ib/irregular_fabric.h"

namespace ebb::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kChildAsanOptions =
    "verify_asan_link_order=0:detect_leaks=0:replace_intrin=0:intercept_memcpy=0";

// The irregular fabric (tests/ib/irregular_fabric.h) has both disputed
// cables; here L3[6]-S1[7] is in the topology only (missing from the fabric)
// and L4[7]-S2[10] in the fabric only (an extra cable). Each is one line in
// the net file at each end.
struct Disputed {
  const char* line;
  const char* side;  // "config" or "fabric"
};
constexpr Disputed kDisputed[] = {{"[7]\t\"L3\"[6]", "config"},
                                  {"[6]\t\"S1\"[7]", "config"},
                                  {"[10]\t\"L4\"[7]", "fabric"},
                                  {"[7]\t\"S2\"[10]", "fabric"}};

// The net file as one side has it: the other side's disputed cables dropped.
std::string netFor(const std::string& side) {
  std::istringstream in(irregularNet());
  std::string line, out;
  while (std::getline(in, line)) {
    const auto* d = std::find_if(std::begin(kDisputed), std::end(kDisputed),
                                 [&](const Disputed& x) { return line == x.line; });
    if (d != std::end(kDisputed) && side != d->side) continue;
    out += line + "\n";
  }
  return out;
}

fabric::Topology parse(const std::string& text) {
  std::istringstream in(text);
  auto t = fabric::parseIbnetdiscover(in, "net");
  if (!t) throw std::runtime_error(t.status().toString());
  return std::move(t).value();
}

const fabric::Topology& wired() {
  static const fabric::Topology t = parse(netFor("fabric"));
  return t;
}

// Runs `ebb agent` at H1 on the topology side of the net file, to the end.
CommandResult runAgent(IbsimFabric& fab, const std::string& name, const std::string& fields) {
  const std::string dir = fab.scratchDir();
  std::ofstream(dir + "/config.net") << netFor("config");
  std::string allow;
  const fabric::Topology configured = parse(netFor("config"));
  for (const fabric::Switch& s : configured.switches())
    allow += fmt::format(" allow_switches: \"0x{:016x}\"", s.guid);
  const std::string cfg = dir + "/" + name + ".textproto";
  std::ofstream(cfg) << fmt::format(
      "name: \"{}\"\nfabric {{ topology_file {{ path: \"config.net\" format: IBSIM_NET }} }}\n"
      "gating {{ policy: DYNAMIC u_on: 0.15 }}\n"
      "agent {{ check_period_ms: 200 mad_timeout_ms: 100 metrics_listen: \"off\" "
      "decision_log: \"{}.jsonl\" lock_file: \"{}.lock\"{} {} }}\n",
      name, name, name, allow, fields);
  ChildProcess::Spec spec;
  spec.argv = {std::string(EBB_BINARY_DIR) + "/tools/ebb", "agent", "--config", cfg};
  spec.env = fab.clientEnv("H1");
  spec.env["ASAN_OPTIONS"] = kChildAsanOptions;
  spec.cwd = dir;
  return runCommand(spec, 60s);
}

// A cable of the topology whose two ports read nothing trained: down, a
// failed part (as one pulled while ebb runs), not a difference.
constexpr const char* kDownAtStart = "1 link(s) down at start, taken as failed: L3[6] - S1[7]";
constexpr const char* kExtra =
    "extra: L4[7] (0x0002c90000c00004) - S2[10] (0x0002c90000b00002): in the fabric, not in the "
    "topology";

TEST(TopologyMismatch, RefuseExitsBeforeAnySetNamingTheExtraCableNotTheDownOne) {
  IbsimFabric fab(wired());
  const CommandResult r = runAgent(fab, "refuse", "");
  ASSERT_FALSE(r.timedOut);
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("differ from the topology in 1 place "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("L3[6]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(kExtra), std::string::npos) << r.err;
  // It stopped at discovery: no agent started, no decision log opened.
  EXPECT_EQ(r.out.find("switches watched"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(fab.scratchDir() + "/refuse.jsonl"));
}

TEST(TopologyMismatch, WarnListsTheExtraCableAndRunsWithTheDownOneFailed) {
  IbsimFabric fab(wired());
  const CommandResult r =
      runAgent(fab, "warn", "topology_mismatch: WARN dry_run: true run_for_ms: 1500");
  ASSERT_FALSE(r.timedOut);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("warning: the fabric's cables differ from the topology in 1 place "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find(kDownAtStart), std::string::npos) << r.out;
  EXPECT_NE(r.err.find(kExtra), std::string::npos) << r.err;
  // 8 switches, 14 switch links and 10 host links in the topology; the missing one is down.
  EXPECT_NE(r.out.find("8 switches (8 reachable), 24 links (1 down)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stopping (run_for_ms elapsed)"), std::string::npos) << r.out;
  const std::string log = readWholeFile(fab.scratchDir() + "/warn.jsonl");
  EXPECT_EQ(log.find(R"("event":"topology_mismatch","kind":"missing")"), std::string::npos) << log;
  EXPECT_NE(log.find(R"("event":"topology_mismatch","kind":"extra")"), std::string::npos) << log;
  EXPECT_EQ(log.find(R"("event":"port_set")"), std::string::npos) << "dry run: " << log;
}

}  // namespace
}  // namespace ebb::testing
