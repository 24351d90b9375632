// Topology versus fabric on ibsim + OpenSM: a hand-written fabric that is not
// a k-ary n-tree (3 spines of 12 ports, 5 leaves of 8, irregular port
// numbers, one leaf cabled to two spines only), and a topology given to ebb
// that differs from it by one missing and one extra cable. REFUSE exits 1
// before anything is Set, naming both; WARN lists both and runs.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/child_process.h"
#include "fabric/ibnetdiscover.h"
#include "tests/harness/ibsim_fabric.h"

namespace ebb::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kChildAsanOptions =
    "verify_asan_link_order=0:detect_leaks=0:replace_intrin=0:intercept_memcpy=0";

// The ibsim net file. "@fabric " lines are cabled in the fabric only (the
// extra cable L4[7]-S2[10]), "@config " lines in the topology only (the
// missing cable L3[6]-S1[7]); the rest is both.
constexpr const char* kNet = R"(
caguid=0x0002c90000a00000
Hca	1 "H0"
[1]	"L1"[1]
caguid=0x0002c90000a00001
Hca	1 "H1"
[1]	"L1"[3]
caguid=0x0002c90000a00002
Hca	1 "H2"
[1]	"L2"[2]
caguid=0x0002c90000a00003
Hca	1 "H3"
[1]	"L2"[4]
caguid=0x0002c90000a00004
Hca	1 "H4"
[1]	"L3"[1]
caguid=0x0002c90000a00005
Hca	1 "H5"
[1]	"L3"[2]
caguid=0x0002c90000a00006
Hca	1 "H6"
[1]	"L4"[3]
caguid=0x0002c90000a00007
Hca	1 "H7"
[1]	"L4"[8]
caguid=0x0002c90000a00008
Hca	1 "H8"
[1]	"L5"[4]
caguid=0x0002c90000a00009
Hca	1 "H9"
[1]	"L5"[7]

switchguid=0x0002c90000b00001
Switch	12 "S1"
[1]	"L1"[5]
[4]	"L2"[1]
@config [7]	"L3"[6]
[10]	"L4"[2]
[12]	"L5"[1]

switchguid=0x0002c90000b00002
Switch	12 "S2"
[3]	"L1"[6]
[1]	"L2"[7]
[5]	"L3"[3]
@fabric [10]	"L4"[7]
[8]	"L5"[2]

switchguid=0x0002c90000b00003
Switch	12 "S3"
[2]	"L1"[8]
[6]	"L2"[5]
[9]	"L3"[4]
[12]	"L4"[5]
[3]	"L5"[6]

switchguid=0x0002c90000c00001
Switch	8 "L1"
[1]	"H0"[1]
[3]	"H1"[1]
[5]	"S1"[1]
[6]	"S2"[3]
[8]	"S3"[2]

switchguid=0x0002c90000c00002
Switch	8 "L2"
[2]	"H2"[1]
[4]	"H3"[1]
[1]	"S1"[4]
[7]	"S2"[1]
[5]	"S3"[6]

switchguid=0x0002c90000c00003
Switch	8 "L3"
[1]	"H4"[1]
[2]	"H5"[1]
@config [6]	"S1"[7]
[3]	"S2"[5]
[4]	"S3"[9]

switchguid=0x0002c90000c00004
Switch	8 "L4"
[3]	"H6"[1]
[8]	"H7"[1]
[2]	"S1"[10]
@fabric [7]	"S2"[10]
[5]	"S3"[12]

switchguid=0x0002c90000c00005
Switch	8 "L5"
[4]	"H8"[1]
[7]	"H9"[1]
[1]	"S1"[12]
[2]	"S2"[8]
[6]	"S3"[3]
)";

// kNet as one side has it: that side's tagged lines untagged, the other's dropped.
std::string netFor(const std::string& side) {
  std::istringstream in(kNet);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.starts_with("@")) {
      const std::size_t sp = line.find(' ');
      if (line.substr(1, sp - 1) != side) continue;
      line = line.substr(sp + 1);
    }
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

// Runs `ebb agent` at H1 on the topology side of kNet, to the end.
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

constexpr const char* kMissing =
    "missing: L3[6] (0x0002c90000c00003) - S1[7] (0x0002c90000b00001): in the topology, not in "
    "the fabric (L3[6] reads Polling, S1[7] reads Polling)";
constexpr const char* kExtra =
    "extra: L4[7] (0x0002c90000c00004) - S2[10] (0x0002c90000b00002): in the fabric, not in the "
    "topology";

TEST(TopologyMismatch, RefuseExitsBeforeAnySetNamingTheMissingAndTheExtraCable) {
  IbsimFabric fab(wired());
  const CommandResult r = runAgent(fab, "refuse", "");
  ASSERT_FALSE(r.timedOut);
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("differ from the topology in 2 places"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(kMissing), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(kExtra), std::string::npos) << r.err;
  // It stopped at discovery: no agent started, no decision log opened.
  EXPECT_EQ(r.out.find("switches watched"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(fab.scratchDir() + "/refuse.jsonl"));
}

TEST(TopologyMismatch, WarnListsBothAndRunsWithTheMissingCableDown) {
  IbsimFabric fab(wired());
  const CommandResult r =
      runAgent(fab, "warn", "topology_mismatch: WARN dry_run: true run_for_ms: 1500");
  ASSERT_FALSE(r.timedOut);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("warning: the fabric's cables differ from the topology in 2 places"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(kMissing), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(kExtra), std::string::npos) << r.err;
  // 8 switches, 14 switch links and 10 host links in the topology; the missing one is down.
  EXPECT_NE(r.out.find("8 switches (8 reachable), 24 links (1 down)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stopping (run_for_ms elapsed)"), std::string::npos) << r.out;
  const std::string log = readWholeFile(fab.scratchDir() + "/warn.jsonl");
  EXPECT_NE(log.find(R"("event":"topology_mismatch","kind":"missing")"), std::string::npos) << log;
  EXPECT_NE(log.find(R"("event":"topology_mismatch","kind":"extra")"), std::string::npos) << log;
  EXPECT_EQ(log.find(R"("event":"port_set")"), std::string::npos) << "dry run: " << log;
}

}  // namespace
}  // namespace ebb::testing
