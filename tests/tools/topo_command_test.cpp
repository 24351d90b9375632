#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fabric/ibnetdiscover.h"
#include "fabric/kary_tree.h"
#include "tools/command.h"
#include "workload/traffic_file.h"

namespace ebb::tools {
namespace {

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

CliRun ebb(std::vector<std::string> args) {
  args.insert(args.begin(), "ebb");
  std::vector<const char*> argv;
  for (const auto& a : args)
    argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = runEbb(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

std::filesystem::path scratch(const std::string& name) {
  auto dir =
      std::filesystem::temp_directory_path() / ("ebb-tools-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

TEST(TopoCommand, SummaryOfThePaperTree) {
  CliRun r = ebb({"topo", "--k", "4", "--n", "3"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("4-ary 3-tree"), std::string::npos);
  EXPECT_NE(r.out.find("hosts:         64"), std::string::npos);
  EXPECT_NE(r.out.find("48 (level 0: 16, level 1: 16, level 2: 16)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("21 of 48 switches"), std::string::npos);
  EXPECT_NE(r.out.find("20 of 128 switch-to-switch links (15.6%)"), std::string::npos);
}

TEST(TopoCommand, JsonSummary) {
  CliRun r = ebb({"topo", "--k", "4", "--n", "4", "--json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("\"hosts\": 256"), std::string::npos);
  EXPECT_NE(r.out.find("\"mt_switches\": 85"), std::string::npos);
  EXPECT_NE(r.out.find("\"mt_switch_links\": 84"), std::string::npos);
}

TEST(TopoCommand, ExportIbsimReadsBackAsTheSameFabric) {
  CliRun r = ebb({"topo", "--k", "3", "--n", "3", "--export", "ibsim"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto path = scratch("k3n3.net");
  std::ofstream(path) << r.out;
  CliRun back = ebb({"topo", "--from-ibnetdiscover", path.string()});
  ASSERT_EQ(back.code, kExitOk) << back.err;
  CliRun direct = ebb({"topo", "--k", "3", "--n", "3"});
  // Same counts; only the shape line differs (a read fabric is a generic fat tree).
  auto tail = [](const std::string& s) { return s.substr(s.find("hosts:")); };
  EXPECT_EQ(tail(back.out), tail(direct.out));
  // Named roots (the level-0 switches S0_*) read the same fabric the same way.
  CliRun rooted = ebb({"topo", "--from-ibnetdiscover", path.string(), "--roots",
                       "S0_0_0,S0_0_1,S0_0_2,S0_1_0,S0_1_1,S0_1_2,S0_2_0,S0_2_1,S0_2_2"});
  ASSERT_EQ(rooted.code, kExitOk) << rooted.err;
  EXPECT_EQ(tail(rooted.out), tail(direct.out));
  CliRun unknown = ebb({"topo", "--from-ibnetdiscover", path.string(), "--roots", "S9"});
  EXPECT_EQ(unknown.code, kExitError);
  EXPECT_NE(unknown.err.find("--roots: \"S9\" names no switch of the fabric"), std::string::npos)
      << unknown.err;
  // Given twice, or in pieces, the list is the same; an empty name is a slip.
  CliRun pieces =
      ebb({"topo", "--from-ibnetdiscover", path.string(), "--roots", "S0_0_0,S0_0_1,S0_0_2,S0_1_0",
           "--roots", "S0_1_1,S0_1_2,S0_2_0,S0_2_1,S0_2_2"});
  ASSERT_EQ(pieces.code, kExitOk) << pieces.err;
  EXPECT_EQ(tail(pieces.out), tail(direct.out));
  CliRun empty = ebb({"topo", "--from-ibnetdiscover", path.string(), "--roots", "S0_0_0,,S0_0_1"});
  EXPECT_EQ(empty.code, kExitError);
  EXPECT_NE(empty.err.find("--roots: an empty switch name"), std::string::npos) << empty.err;
}

TEST(TopoCommand, ExportDotHighlightsTheMinimalTree) {
  CliRun r = ebb({"topo", "--k", "2", "--n", "2", "--export", "dot"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("graph"), std::string::npos);
  EXPECT_NE(r.out.find("S0_0"), std::string::npos);
}

TEST(TopoCommand, ConfigFile) {
  const auto path = scratch("c.textproto");
  std::ofstream(path) << "fabric { kary_n_tree { k: 2 n: 3 } }\n";
  CliRun r = ebb({"topo", "--config", path.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("2-ary 3-tree"), std::string::npos);
}

TEST(TopoCommand, BadInputGivesClearErrorsAndNonZeroExit) {
  CliRun r = ebb({"topo", "--k", "1", "--n", "3"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("k >= 2"), std::string::npos) << r.err;
  r = ebb({"topo", "--k", "1000", "--n", "1000"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("exceeds the limit"), std::string::npos);
  r = ebb({"topo", "--k", "four"});
  EXPECT_EQ(r.code, kExitUsage);
  r = ebb({"topo", "--export", "png"});
  EXPECT_EQ(r.code, kExitUsage);
  r = ebb({"topo", "--config", "x", "--k", "3"});
  EXPECT_EQ(r.code, kExitUsage);
  r = ebb({"topo", "--from-ibnetdiscover", "/nonexistent/fabric.txt"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("/nonexistent/fabric.txt"), std::string::npos);
  const auto bad = scratch("bad.textproto");
  std::ofstream(bad) << "fabric { kary_n_tree { k: 4 n: 0 } }\n";
  r = ebb({"topo", "--config", bad.string()});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("fabric.kary_n_tree"), std::string::npos) << r.err;
  const auto empty = scratch("empty.textproto");
  std::ofstream(empty) << "# nothing\n";
  r = ebb({"topo", "--config", empty.string()});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("set exactly one of"), std::string::npos) << r.err;
  r = ebb({});
  EXPECT_EQ(r.code, kExitUsage);
}

TEST(GenAndReplay, GeneratedFileReplaysWithEveryMessageAccountedFor) {
  const auto traffic = scratch("perm.txt");
  CliRun g = ebb({"gen", "--pattern", "permutation", "--k", "4", "--n", "2", "--rate", "0.1",
                  "--cycles", "20000", "--out", traffic.string()});
  ASSERT_EQ(g.code, kExitOk) << g.err;
  const auto cfg = scratch("k4n2.textproto");
  std::ofstream(cfg) << "fabric { kary_n_tree { k: 4 n: 2 } } gating { policy: DYNAMIC }\n";
  const auto out = scratch("replay-out");
  CliRun r = ebb({"replay", cfg.string(), "--traffic", traffic.string(), "--out", out.string(),
                  "--quiet", "report.skip_plots=true"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  // "wrote N messages" from gen equals what the replay generated and delivered.
  const auto n = g.out.substr(6, g.out.find(' ', 6) - 6);
  EXPECT_NE(r.out.find("delivered " + n + "/" + n), std::string::npos) << g.out << r.out;
  EXPECT_TRUE(std::filesystem::exists(out / "report.json"));

  // A file naming a host beyond the fabric is rejected before anything runs.
  const auto bad = scratch("bad-traffic.txt");
  std::ofstream(bad) << "10 0 1 64\n20 2 99 64\n";
  const auto out2 = scratch("replay-bad");
  r = ebb({"replay", cfg.string(), "--traffic", bad.string(), "--out", out2.string(), "--quiet"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("bad-traffic.txt:2: host 99 is beyond"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out2 / "report.json"));
}

TEST(GenAndReplay, AmgTraceReplaysClosedLoopWithRuntimeAndSlowdown) {
  const std::string trace = std::string(EBB_TRACES_DIR) + "/amg2013-27/amg27_events.csv";
  const auto cfg = scratch("k4n3.textproto");
  std::ofstream(cfg) << "fabric { kary_n_tree { k: 4 n: 3 } }\n";
  const auto out = scratch("amg-out");
  CliRun r = ebb({"replay", cfg.string(), "--trace", trace, "--out", out.string(), "--quiet",
                  "report.skip_plots=true"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("delivered 15524/15524"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("application runtime:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("slowdown"), std::string::npos);
  // 27 ranks do not fit on a 2-ary 2-tree's 4 hosts: rejected, nothing written.
  const auto small = scratch("k2n2.textproto");
  std::ofstream(small) << "fabric { kary_n_tree { k: 2 n: 2 } }\n";
  const auto out2 = scratch("amg-small");
  r = ebb({"replay", small.string(), "--trace", trace, "--out", out2.string(), "--quiet"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("need 27 hosts (amg27_events.csv 27) but the fabric has only 4"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(out2 / "report.json"));
}

std::string slurpFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The real binary, as a separate process; returns its exit status.
int runBinary(const std::string& args, const std::filesystem::path& log) {
  const std::string cmd =
      std::string(EBB_BINARY_DIR) + "/tools/ebb " + args + " > '" + log.string() + "' 2>&1";
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// What a user gets from `ebb replay`: two separate processes on the same
// config write byte-identical reports and time series, the plots exist as
// PNG and SVG, and a bad config exits 1 without touching an earlier report.
TEST(ReplayCommand, SeparateProcessesWriteIdenticalReportsAndPlots) {
  namespace fs = std::filesystem;
  const auto cfg = scratch("ramp-k4n3.textproto");
  std::ofstream(cfg) << "fabric { kary_n_tree { k: 4 n: 3 } }\n"
                        "workload { alonso_ramp { time_scale: 0.05 } }\n";
  const fs::path a = scratch("cli-a"), b = scratch("cli-b");
  fs::remove_all(a);
  fs::remove_all(b);
  ASSERT_EQ(runBinary("replay " + cfg.string() + " --quiet --out " + a.string(), scratch("a.log")),
            0)
      << slurpFile(scratch("a.log"));
  ASSERT_EQ(runBinary("replay " + cfg.string() + " --quiet --out " + b.string(), scratch("b.log")),
            0)
      << slurpFile(scratch("b.log"));
  const std::string report = slurpFile(a / "report.json");
  ASSERT_FALSE(report.empty());
  EXPECT_EQ(report, slurpFile(b / "report.json"));
  EXPECT_NE(report.find("\"relative_power_switch_links\""), std::string::npos);
  EXPECT_NE(report.find("\"baseline\""), std::string::npos);
  const std::string series = slurpFile(a / "timeseries.csv");
  EXPECT_EQ(series, slurpFile(b / "timeseries.csv"));
  EXPECT_EQ(
      series.substr(0, series.find('\n')),
      "time_cycles,injected_rate,rising,offered,accepted,power_switch_links,"
      "power_all_links,mean_latency_cycles,delivered,oracle_power_switch_links,span_cycles,drain,"
      "links_on_l0_l1,"
      "links_on_l1_l2");
  EXPECT_GT(std::count(series.begin(), series.end(), '\n'), 10);
  for (const char* plot : {"power_vs_rate", "latency_vs_rate", "power_over_time"}) {
    const std::string png = slurpFile(a / "plots" / (std::string(plot) + ".png"));
    const std::string svg = slurpFile(a / "plots" / (std::string(plot) + ".svg"));
    EXPECT_EQ(png.substr(0, 8), "\x89PNG\r\n\x1a\n") << plot;
    EXPECT_NE(svg.find("<svg"), std::string::npos) << plot;
    EXPECT_NE(svg.find("</svg>"), std::string::npos) << plot;
  }
  // A config breaking the threshold map: exit 1, the rule named, the earlier
  // report in the same folder left as it was.
  const auto bad = scratch("bad-static.textproto");
  std::ofstream(bad) << "fabric { kary_n_tree { k: 4 n: 3 } }\n"
                        "gating { policy: STATIC u_off: 0.1 u_on: 0.15 }\n";
  EXPECT_EQ(runBinary("replay " + bad.string() + " --quiet --out " + a.string(), scratch("c.log")),
            1);
  EXPECT_NE(slurpFile(scratch("c.log")).find("U_on > 2*U_off"), std::string::npos)
      << slurpFile(scratch("c.log"));
  EXPECT_EQ(slurpFile(a / "report.json"), report);
  const fs::path c = scratch("cli-c");
  fs::remove_all(c);
  EXPECT_EQ(runBinary("replay " + bad.string() + " --out " + c.string(), scratch("d.log")), 1);
  EXPECT_FALSE(fs::exists(c / "report.json"));
}

// Resource bombs (issue 17): a tree too big to build is refused before any
// memory is taken, naming its size, the limit and the knob that raises it;
// the knob works; a zero is a usage error that says so plainly.
TEST(ResourceLimits, TreesTooBigAreRefusedNamingSizeLimitAndKnob) {
  const auto genOut = scratch("never-written.txt");
  const auto tight = scratch("tight.textproto");
  std::ofstream(tight) << "fabric { kary_n_tree { k: 4 n: 3 max_switches: 10 } }\n";
  const auto zero = scratch("zero.textproto");
  std::ofstream(zero) << "fabric { kary_n_tree { k: 4 n: 3 max_switches: 0 } }\n";
  const auto xgftPorts = scratch("xgft-ports.textproto");
  std::ofstream(xgftPorts) << "fabric { xgft { m: [2, 2] w: [1, 1] ports: 65535 max_switches: 10 } "
                              "}\n";
  struct Case {
    std::vector<std::string> args;
    int code;
    std::vector<std::string> says;
  };
  const Case cases[] = {
      {{"topo", "--k", "2", "--n", "24"},
       kExitError,
       {"201326592 switches", "exceed the limit of 1048576 switches", "with --max-switches"}},
      {{"gen", "--k", "2", "--n", "22", "--out", genOut.string()},
       kExitError,
       {"46137344 switches", "with --max-switches"}},
      {{"topo", "--k", "4", "--n", "6", "--max-switches", "1000"},
       kExitError,
       {"6144 switches", "limit of 1000 switches"}},
      {{"topo", "--k", "4", "--n", "6", "--max-switches", "7000"}, kExitOk, {"6144"}},
      {{"topo", "--k", "4", "--n", "3", "--max-switches", "0"},
       kExitUsage,
       {"--max-switches: must be a whole number > 0 (is 0)"}},
      {{"topo", "--config", tight.string()},
       kExitError,
       {"fabric.kary_n_tree: k = 4, n = 3: 48 switches", "fabric.kary_n_tree.max_switches"}},
      {{"topo", "--config", zero.string()},
       kExitError,
       {"fabric.kary_n_tree.max_switches: must be > 0"}},
      // Ports count: a few switches of 65535 ports each are refused too.
      {{"topo", "--xgft", "3:16,16,16:1,16,16", "--ports", "65535"},
       kExitError,
       {"xgft: 768 switches of 65535 ports = 50330880 ports (about 1.2 GB to build)",
        "exceed the limit of 33554432 ports (32 per switch of the limit of 1048576 switches)",
        "with --max-switches"}},
      {{"topo", "--xgft", "2:4,4:1,4", "--ports", "65535", "--max-switches", "8"},
       kExitError,
       {"8 switches of 65535 ports", "limit of 256 ports"}},
      {{"topo", "--xgft", "2:4,4:1,4", "--ports", "65535"}, kExitOk, {"hosts:         16"}},
      {{"topo", "--xgft", "2:4,4:1,4", "--ports", "0"}, kExitError, {"--ports: must be > 0"}},
      {{"topo", "--k", "2", "--ports", "0"}, kExitError, {"--ports: applies to --xgft only"}},
      {{"topo", "--k", "4096", "--n", "2"},
       kExitError,
       {"k = 4096, n = 2: 8192 switches of 8192 ports", "with --max-switches"}},
      {{"topo", "--config", xgftPorts.string()},
       kExitError,
       {"xgft: 3 switches of 65535 ports", "fabric.xgft.max_switches"}},
      {{"faults", "--config", tight.string(), "--jobs", "0"},
       kExitUsage,
       {"--jobs: must be a whole number > 0 (is 0)"}},
  };
  for (const Case& c : cases) {
    const CliRun r = ebb(c.args);
    std::string cmd;
    for (const auto& a : c.args)
      cmd += a + " ";
    EXPECT_EQ(r.code, c.code) << cmd << "\n" << r.err;
    const std::string text = c.code == kExitOk ? r.out : r.err;
    for (const auto& s : c.says)
      EXPECT_NE(text.find(s), std::string::npos) << cmd << ": no \"" << s << "\" in\n" << text;
  }
  EXPECT_FALSE(std::filesystem::exists(genOut)) << "nothing is written for a refused tree";
}

// Each command-line value is checked on its own and named with its rule;
// a workload too big to write is refused before writing, with the knob.
TEST(OptionRules, EveryBadValueIsNamedAloneWithItsRule) {
  const auto genOut = scratch("gen-never-written.txt");
  const auto farTraffic = scratch("far-traffic.txt");
  std::ofstream(farTraffic) << "9200000000000000 0 1 64\n";
  const std::string folder = EBB_SOURCE_DIR;
  struct Case {
    std::vector<std::string> args;
    int code;
    std::vector<std::string> says;
  };
  const Case cases[] = {
      {{"gen", "--rate", "-1", "--out", genOut.string()}, kExitError, {"--rate: must be >= 0"}},
      {{"gen", "--cycles", "0", "--out", genOut.string()},
       kExitError,
       {"--cycles: must be > 0 (is 0)"}},
      // Each option alone, with the value (the default too, when it does not fit).
      {{"gen", "--flit-bytes", "0", "--out", genOut.string()},
       kExitError,
       {"--flit-bytes: must be > 0 (is 0)"}},
      {{"gen", "--pattern", "hotspot", "--hotspot-fraction", "1.5", "--out", genOut.string()},
       kExitError,
       {"--hotspot-fraction: must be in [0, 1] (is 1.5)"}},
      {{"gen", "--pattern", "incast", "--k", "5", "--n", "1", "--out", genOut.string()},
       kExitError,
       {"--incast-senders: must be in 1..4 (the other hosts; is 8)"}},
      {{"gen", "--pattern", "ramp", "--time-scale", "0", "--out", genOut.string()},
       kExitError,
       {"--time-scale: must be > 0 (is 0)"}},
      {{"gen", "--cycle-ps", "0", "--out", genOut.string()},
       kExitError,
       {"--cycle-ps: must be > 0 (is 0)"}},
      {{"gen", "--cycles", "9223372036854775807", "--out", genOut.string()},
       kExitError,
       {"--cycles: 9223372036854775807 cycles of --cycle-ps = 1000 ps is beyond the time range"}},
      {{"gen", "--pattern", "ramp", "--time-scale", "1e30", "--out", genOut.string()},
       kExitError,
       {"--time-scale: 1e+30 x 420000 cycles", "beyond the time range"}},
      {{"gen", "--cycles", "900000000", "--rate", "0.5", "--out", genOut.string()},
       kExitError,
       {"about 7.2e+09 messages, more than the limit of 100000000", "--max-messages"}},
      {{"gen", "--cycles", "20000", "--rate", "0.5", "--max-messages", "100", "--out",
        genOut.string()},
       kExitError,
       {"limit of 100"}},
      // An incast writes rounds x senders whatever --rate says.
      {{"gen", "--pattern", "incast", "--cycles", "1000000000", "--incast-period-cycles", "1",
        "--out", genOut.string()},
       kExitError,
       {"about 8e+09 messages, more than the limit of 100000000", "--incast-period-cycles"}},
      {{"gen", "--pattern", "incast", "--incast-period-cycles", "-5", "--out", genOut.string()},
       kExitError,
       {"--incast-period-cycles: must be > 0 (is -5)"}},
      // No message: no file (ebb replay refuses an empty traffic file).
      {{"gen", "--rate", "0", "--cycles", "2000", "--out", genOut.string()},
       kExitError,
       {"the uniform pattern gave no message (--rate 0, --cycles 2000): nothing written"}},
      // The ramp reads --time-scale, not --rate or --cycles: its messages name it.
      {{"gen", "--pattern", "ramp", "--time-scale", "1e-9", "--k", "2", "--n", "1", "--out",
        genOut.string()},
       kExitError,
       {"the ramp pattern gave no message (--time-scale 1e-09): nothing written"}},
      {{"gen", "--pattern", "ramp", "--time-scale", "1e9", "--k", "2", "--n", "1", "--out",
        genOut.string()},
       kExitError,
       {"more than the limit of 100000000: lower --time-scale, or raise the limit"}},
      // --out names why it cannot be created.
      {{"gen", "--out", scratch("").string()},
       kExitError,
       {"--out " + scratch("").string() + ": is a folder, expected a file name"}},
      {{"gen", "--out", ""}, kExitUsage, {"--out: must not be empty"}},
      // An option the pattern never reads is refused, not ignored.
      {{"gen", "--pattern", "incast", "--rate", "0", "--out", genOut.string()},
       kExitError,
       {"--rate: applies to --pattern uniform or permutation or hotspot only, not incast"}},
      {{"gen", "--hotspot-host", "3", "--out", genOut.string()},
       kExitError,
       {"--hotspot-host: applies to --pattern hotspot or incast only, not uniform"}},
      {{"gen", "--pattern", "motif", "--collective", "bcast", "--out", genOut.string()},
       kExitError,
       {"--collective: applies to --pattern collective only, not motif"}},
      // A word after the config: an override missing its value, said so.
      {{"replay", folder + "/configs/kary4x3.textproto", "seed", "--out",
        scratch("never-out").string()},
       kExitUsage,
       {"'seed' after the config file", "an override needs key=value (e.g. seed=...)"}},
      // A motif's sizes come from its cells: --message-bytes was ignored.
      {{"gen", "--pattern", "motif", "--message-bytes", "100", "--out", genOut.string()},
       kExitError,
       {"--message-bytes: applies to --pattern uniform or permutation or hotspot or incast or "
        "ramp or collective only, not motif"}},
      // An all-pairs collective on 262 144 ranks: refused before it is built.
      {{"gen", "--pattern", "collective", "--k", "64", "--n", "3", "--collective", "alltoall",
        "--out", genOut.string()},
       kExitError,
       {"the file would hold at least 6.87e+11 messages, more than the limit of 100000000"}},
      {{"gen", "--pattern", "collective", "--collective", "barrier", "--message-bytes", "100",
        "--out", genOut.string()},
       kExitError,
       {"--message-bytes: a barrier carries no payload (its messages are 1 byte): leave it out"}},
      // A cycle too long for the incast period is not blamed on it elsewhere.
      {{"gen", "--cycle-ps", "9223372036854775807", "--out", genOut.string()},
       kExitError,
       {"--cycles: 100000 cycles of --cycle-ps = 9223372036854775807 ps is beyond"}},
      {{"gen", "--rate", "1.5", "--out", genOut.string()},
       kExitError,
       {"--rate: 1.5 flits/cycle/node is more than a host's link carries"}},
      // The replay's own offered-load rule and its cost estimate.
      {{"replay", "workload.uniform.rate=2", "workload.uniform.duration_cycles=1000", "--out",
        scratch("never-out").string()},
       kExitError,
       {"workload.uniform.rate: 2 flits/cycle/node is more than a host's link carries"}},
      {{"replay", "fabric.kary_n_tree.k=2", "fabric.kary_n_tree.n=2", "workload.uniform.rate=0.5",
        "workload.uniform.duration_cycles=100000000000", "--out", scratch("never-out").string()},
       kExitError,
       {"about 1.25e+10 messages on 4 hosts", "workload.max_messages"}},
      {{"replay", "workload.uniform.rate=0.5", "workload.uniform.duration_cycles=20000",
        "workload.max_messages=100", "--out", scratch("never-out").string()},
       kExitError,
       {"more than the limit of 100"}},
      {{"topo", "--k", "2", "--n", "2", "--export", "dot", "--json"},
       kExitUsage,
       {"--export excludes --json"}},
      {{"topo", "--k", "2", "--roots", "S0_0"},
       kExitUsage,
       {"--roots requires --from-ibnetdiscover"}},
      // A rule over several of gen's options names those options.
      {{"gen", "--pattern", "collective", "--collective", "alltoall", "--algorithm",
        "socket-phased", "--k", "3", "--n", "2", "--out", genOut.string()},
       kExitError,
       {"--collective/--algorithm/--ranks: alltoall socket-phased: cores per node"}},
      // Past 64 bits is out of range, never clamped to the largest value.
      {{"gen", "--cycles", "9223372036854775808", "--out", genOut.string()},
       kExitUsage,
       {"--cycles: is out of range (is 9223372036854775808)"}},
      // A word that is no command is named, with the commands.
      {{"campaign"}, kExitUsage, {"'campaign' is not an ebb command; the commands: topo, replay"}},
      {{"--bogus"}, kExitUsage, {"'--bogus' is not an option of ebb"}},
      // An empty value (an unset "$VAR") is not the option left out.
      {{"replay", "", "--out", scratch("never-out").string()},
       kExitUsage,
       {"must not be empty (leave the option out for its default)"}},
      {{"topo", "--from-ibnetdiscover", ""},
       kExitUsage,
       {"--from-ibnetdiscover: must not be empty"}},
      {{"replay", "--out", ""}, kExitUsage, {"--out: must not be empty"}},
      {{"faults", "--config", folder + "/configs/kary4x3.textproto", "--out", ""},
       kExitUsage,
       {"--out: must not be empty"}},
      // Numbers are decimal: CLI11 alone reads 010 as 8, 0x10 as 16 and 0x1p-3 as 0.125.
      {{"topo", "--k", "0x10", "--n", "1"}, kExitUsage, {"--k: must be a whole number (is 0x10)"}},
      {{"gen", "--cycles", "1e3", "--out", genOut.string()},
       kExitUsage,
       {"--cycles: must be a whole number (is 1e3)"}},
      {{"gen", "--rate", "0x1p-3", "--out", genOut.string()},
       kExitUsage,
       {"--rate: must be a decimal number (is 0x1p-3)"}},
      {{"gen", "--rate", "nan", "--out", genOut.string()},
       kExitUsage,
       {"--rate: must be a decimal number (is nan)"}},
      // Beyond a double: not read as inf or 0 and then quoted so.
      {{"gen", "--rate", "1e400", "--out", genOut.string()},
       kExitUsage,
       {"--rate: is out of range: too large for a double", "(is 1e400)"}},
      {{"replay", "--size-scale", "1e-400", "--out", scratch("never-out").string()},
       kExitUsage,
       {"--size-scale: is out of range: too small for a double", "(is 1e-400)"}},
      {{"replay", "workload.uniform.rate=0x1p-3", "--out", scratch("never-out").string()},
       kExitUsage,
       {"workload.uniform.rate=0x1p-3: the value is not a decimal number"}},
      // Values CLI11 would wrap or that would be ignored.
      {{"gen", "--seed", "-1", "--out", genOut.string()},
       kExitUsage,
       {"--seed: must be a whole number >= 0 (is -1)"}},
      {{"faults", "--config", folder + "/configs/kary4x3.textproto", "--seed", "-1"},
       kExitUsage,
       {"--seed: must be a whole number >= 0 (is -1)"}},
      {{"faults", "--config", folder + "/configs/kary4x3.textproto", "--replay-scenario", "-1"},
       kExitUsage,
       {"--replay-scenario: must be a whole number > 0 (is -1)"}},
      {{"gen", "--message-bytes", "1000000000000", "--out", genOut.string()},
       kExitError,
       {"--message-bytes: 1000000000000 bytes is more than the 67108864 bytes",
        "workload.max_message_packets"}},
      // --ranks 0 is a value, checked like the config's ranks, not "all hosts"
      // (leaving --ranks out gives every host).
      {{"gen", "--pattern", "collective", "--k", "2", "--n", "2", "--ranks", "0", "--out",
        genOut.string()},
       kExitError,
       {"--ranks: must be >= 2 (is 0)"}},
      {{"gen", "--pattern", "motif", "--k", "2", "--n", "2", "--ranks", "0", "--out",
        genOut.string()},
       kExitError,
       {"--ranks: must be in [2, 1048576] (is 0)"}},
      {{"gen", "--pattern", "collective", "--message-bytes", "67108865", "--out", genOut.string()},
       kExitError,
       {"--message-bytes: 67108865 bytes is more than"}},
      {{"topo", "--config", folder + "/configs/kary4x3.textproto", "--ports", "5"},
       kExitError,
       {"--ports: does not apply with --config"}},
      {{"topo", "--config", folder + "/configs/kary4x3.textproto", "--max-switches", "10"},
       kExitError,
       {"--max-switches: does not apply with --config", "fabric.kary_n_tree.max_switches"}},
      {{"topo", "--from-ibnetdiscover", folder + "/tests/data/ibnetdiscover_small.txt", "--ports",
        "5"},
       kExitError,
       {"--ports: does not apply with --from-ibnetdiscover"}},
      // A run with agents simulates every check period: a long span, idle or
      // not, is refused before it starts.
      {{"replay", "fabric.kary_n_tree.k=2", "fabric.kary_n_tree.n=2", "workload.uniform.rate=0",
        "workload.uniform.duration_cycles=1000000000000", "--out", scratch("never-out").string()},
       kExitError,
       {"gating: about 5e+08 check periods of 2000 cycles", "more than the limit of 100000000",
        "raise gating.max_check_periods deliberately"}},
      {{"replay", "fabric.kary_n_tree.k=2", "fabric.kary_n_tree.n=2", "--traffic",
        farTraffic.string(), "--out", scratch("never-out").string()},
       kExitError,
       {"gating: about 4.6e+12 check periods"}},
      // An error in a field the command line set names where it was given.
      {{"replay", "gating.u_on=2", "--out", scratch("never-out").string()},
       kExitError,
       {"gating.u_on: 2 breaks the rule", "(given as gating.u_on=2 on the command line)"}},
      {{"replay", "--trace", std::string(EBB_TRACES_DIR) + "/amg2013-27/amg27_events.csv",
        "--ranks", "0", "--out", scratch("never-out").string()},
       kExitError,
       {"workload.trace.ranks: must be > 0", "(given as --ranks 0)"}},
      {{"replay", "seed=3", "seed=4", "--out", scratch("never-out").string()},
       kExitUsage,
       {"override seed=4: seed is given twice on the command line"}},
      // An override of the pattern --traffic replaces would be dropped.
      {{"replay", "workload.uniform.rate=0.5", "--traffic", farTraffic.string(), "--out",
        scratch("never-out").string()},
       kExitUsage,
       {"override workload.uniform.rate=0.5: --traffic replaces the workload's pattern"}},
      {{"replay", "workload.arrivals=POISSON", "--traffic", farTraffic.string(), "--out",
        scratch("never-out").string()},
       kExitUsage,
       {"override workload.arrivals=POISSON: --traffic replaces the workload's pattern, sizes "
        "and arrivals"}},
      {{"replay", "fabric.kary_n_tree.k=2", "fabric.kary_n_tree.n=2", "workload.uniform.rate=0.1",
        "workload.uniform.duration_cycles=1000000", "gating.max_check_periods=100", "--out",
        scratch("never-out").string()},
       kExitError,
       {"about 500 check periods", "more than the limit of 100"}},
      {{"replay", "gating.max_check_periods=0", "--out", scratch("never-out").string()},
       kExitError,
       {"gating.max_check_periods: must be > 0 (is 0)"}},
      // A folder where a file belongs.
      {{"replay", folder, "--out", scratch("never-out").string()},
       kExitError,
       {folder + ": is a folder, expected a file"}},
      {{"topo", "--from-ibnetdiscover", folder}, kExitError, {"is a folder, expected a file"}},
      {{"replay", "fabric.topology_file.path=" + folder, "--out", scratch("never-out").string()},
       kExitError,
       {"is a folder, expected a file"}},
  };
  for (const Case& c : cases) {
    const CliRun r = ebb(c.args);
    std::string cmd;
    for (const auto& a : c.args)
      cmd += a + " ";
    EXPECT_EQ(r.code, c.code) << cmd << "\n" << r.err;
    for (const auto& s : c.says)
      EXPECT_NE(r.err.find(s), std::string::npos) << cmd << ": no \"" << s << "\" in\n" << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(genOut)) << "nothing is written for a refused file";
  EXPECT_FALSE(std::filesystem::exists(scratch("never-out") / "report.json"));
  // A leading zero is decimal still, not octal.
  const CliRun leadingZero = ebb({"topo", "--k", "010", "--n", "1"});
  EXPECT_EQ(leadingZero.code, kExitOk) << leadingZero.err;
  EXPECT_NE(leadingZero.out.find("hosts:         10\n"), std::string::npos) << leadingZero.out;
}

// An incast file holds its rounds: a long, sparse one is written (not refused
// for what --rate would make), with every time in range and in order.
TEST(OptionRules, IncastRoundsAreCountedAndNeverWrap) {
  const auto out = scratch("sparse-incast.txt");
  const CliRun r = ebb({"gen", "--pattern", "incast", "--cycles", "9000000000000000",
                        "--incast-period-cycles", "5000000000000000", "--out", out.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("wrote 16 messages"), std::string::npos) << r.out;
  auto reader = workload::TrafficReader::open(out.string());
  ASSERT_TRUE(reader) << reader.status().toString();
  std::vector<TimePs> times;
  while (true) {
    auto m = (*reader)->next();
    ASSERT_TRUE(m) << m.status().toString();
    if (!m->has_value()) break;
    times.push_back((*m)->time);
  }
  ASSERT_EQ(times.size(), 16u);
  EXPECT_EQ(times.front(), 0);
  EXPECT_EQ(times.back(), 5'000'000'000'000'000'000);
}

// The check-period limit binds runs with agents only: a run without them
// fast-forwards through a long idle span, and the limit can be raised.
TEST(OptionRules, LongIdleSpansRunWithoutAgentsAndUnderARaisedLimit) {
  const auto farTraffic = scratch("far-traffic-all-on.txt");
  std::ofstream(farTraffic) << "9200000000000000 0 1 64\n";
  // A run that sampled every check period would take days (a hang, caught by
  // the test's timeout); one that fast-forwards keeps a bounded timeseries.
  const auto rows = [](const std::filesystem::path& dir) {
    std::ifstream in(dir / "timeseries.csv");
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);)
      ++n;
    return n;
  };
  CliRun r = ebb({"replay", "fabric.kary_n_tree.k=2", "fabric.kary_n_tree.n=2",
                  "gating.policy=ALL_ON", "--traffic", farTraffic.string(),
                  "report.skip_plots=true", "--out", scratch("far-all-on").string(), "--quiet"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_GT(rows(scratch("far-all-on")), 1u);
  EXPECT_LE(rows(scratch("far-all-on")), 2001u);
  // Nothing to simulate at all (a rate of 0): on to the end at once.
  r = ebb({"replay", "fabric.kary_n_tree.k=2", "fabric.kary_n_tree.n=2", "gating.policy=ALL_ON",
           "workload.uniform.rate=0", "workload.uniform.duration_cycles=1000000000000",
           "report.skip_plots=true", "--out", scratch("idle-all-on").string(), "--quiet"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_GT(rows(scratch("idle-all-on")), 1u);
  EXPECT_LE(rows(scratch("idle-all-on")), 2001u);
  r = ebb({"replay", "fabric.kary_n_tree.k=2", "fabric.kary_n_tree.n=2",
           "workload.uniform.rate=0.1", "workload.uniform.duration_cycles=1000000",
           "gating.max_check_periods=1000", "report.skip_plots=true", "--out",
           scratch("raised-limit").string(), "--quiet"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
}

// A run without a single message has no latency to compare: said so, and
// report.json leaves the increases out instead of claiming -100%.
// A run that delivers nothing still draws every figure (gnuplot refuses a
// plot whose every point is undefined): the latency figure says why.
TEST(OptionRules, NoMessageStillDrawsEveryFigure) {
  const auto out = scratch("no-messages-plots");
  const CliRun r = ebb({"replay", "fabric.kary_n_tree.k=2", "fabric.kary_n_tree.n=2",
                        "workload.uniform.rate=0", "workload.uniform.duration_cycles=4000",
                        "report.skip_baseline=true", "--out", out.string(), "--quiet"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.err.find("plots"), std::string::npos) << r.err;
  for (const char* plot : {"power_vs_rate", "latency_vs_rate", "power_over_time"})
    EXPECT_GT(std::filesystem::file_size(out / "plots" / (std::string(plot) + ".png")), 1000u);
  EXPECT_NE(slurpFile(out / "plots.gp").find("no message delivered"), std::string::npos);
}

TEST(OptionRules, NoMessageMeansNothingToCompare) {
  const auto out = scratch("no-messages");
  const CliRun r = ebb({"replay", "fabric.kary_n_tree.k=2", "fabric.kary_n_tree.n=2",
                        "workload.uniform.rate=0", "workload.uniform.duration_cycles=10000",
                        "report.skip_plots=true", "--out", out.string(), "--quiet"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  // The built-in default's alonso-ramp is replaced, and the user is told.
  EXPECT_NE(r.err.find("note: override workload.uniform.rate=0 replaces workload 'alonso_ramp' "
                       "of the config with 'uniform'"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("latency: nothing to compare (no message measured in one of the runs"),
            std::string::npos)
      << r.out;
  // The increase as printed (-100.0%), not any "-100" (the scratch path
  // holds the test's PID, e.g. ebb-tools-test-10007).
  EXPECT_EQ(r.out.find("-100.0%"), std::string::npos) << r.out;
  std::ifstream in(out / "report.json");
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"power_saving_switch_links\""), std::string::npos);
  EXPECT_EQ(json.find("latency_increase"), std::string::npos) << json;
  // Nor after a closed loop whose every message came before the warm-up.
  const std::string src = EBB_SOURCE_DIR;
  const auto late = scratch("warmup-past-the-end");
  const CliRun w =
      ebb({"replay", "fabric.kary_n_tree.k=3", "fabric.kary_n_tree.n=3", "--trace",
           src + "/traces/amg2013-27/amg27_events.csv", "report.latency_warmup_cycles=900000000000",
           "report.skip_plots=true", "--out", late.string(), "--quiet"});
  ASSERT_EQ(w.code, kExitOk) << w.err;
  EXPECT_NE(w.out.find("latency over the 0 messages created from cycle 900000000000 on"),
            std::string::npos)
      << w.out;
  EXPECT_NE(w.out.find("latency: nothing to compare"), std::string::npos) << w.out;
  EXPECT_EQ(w.out.find("-100.0%"), std::string::npos) << w.out;
}

// Outputs (issue 17): a folder that cannot hold the results is an error
// before any run, naming the option, the path and why; nothing is written.
// A folder where a result file goes (or a file where its folder goes) would
// fail the set's move halfway and leave two runs mixed: refused before the
// run, the folder left as it was.
// A period with no message delivered has no latency: the field is empty,
// never 0 (which would read as a measurement).
TEST(OutputFolder, APeriodWithoutDeliveryHasNoLatencyInTheTimeseries) {
  const auto dir = scratch("quiet-periods");
  const CliRun r = ebb({"replay", "fabric.kary_n_tree.k=2", "fabric.kary_n_tree.n=2",
                        "workload.uniform.rate=0.001", "workload.uniform.duration_cycles=100000",
                        "report.skip_plots=true", "--out", dir.string(), "--quiet"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::ifstream in(dir / "timeseries.csv");
  std::string line;
  std::getline(in, line);  // header
  int empty = 0, measured = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');)
      f.push_back(x);
    ASSERT_GE(f.size(), 9u) << line;
    if (f[8] == "0") {
      EXPECT_EQ(f[7], "") << line;
      ++empty;
    } else {
      EXPECT_GT(std::stod(f[7]), 0.0) << line;
      ++measured;
    }
  }
  EXPECT_GT(empty, 0);
  EXPECT_GT(measured, 0);
}

TEST(OutputFolder, SomethingInTheWayOfAResultIsRefusedBeforeTheRunChangingNothing) {
  const std::string src = EBB_SOURCE_DIR;
  const auto dir = scratch("in-the-way");
  std::filesystem::create_directories(dir / "timeseries.csv");
  std::ofstream(dir / "report.json") << "earlier\n";
  CliRun r = ebb({"replay", "--quiet", "--out", dir.string()});
  EXPECT_EQ(r.code, kExitError) << r.err;
  EXPECT_NE(r.err.find("timeseries.csv: is a folder, where the run writes timeseries.csv"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  std::string kept;
  std::getline(std::ifstream(dir / "report.json"), kept);
  EXPECT_EQ(kept, "earlier");
  const auto tuneDir = scratch("in-the-way-tune");
  std::filesystem::create_directories(tuneDir);
  std::ofstream(tuneDir / "plots") << "a file\n";
  r = ebb({"tune", src + "/configs/tune_alonso_ramp.textproto", "--out", tuneDir.string()});
  EXPECT_EQ(r.code, kExitError) << r.err;
  EXPECT_NE(r.err.find("plots: is not a folder, where the run writes plots/"), std::string::npos)
      << r.err;
}

TEST(OutputFolder, ABadOutFolderIsRefusedBeforeTheRun) {
  const std::string src = EBB_SOURCE_DIR;
  const auto file = scratch("a-file");
  std::ofstream(file) << "not a folder\n";
  const auto blocked = scratch("blocked-out");
  std::filesystem::create_directories(blocked / "summary.json");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const Case cases[] = {
      {{"replay", "--quiet", "--out", file.string()}, "exists and is not a folder"},
      {{"replay", "--quiet", "--out", "/proc/ebb-cannot-be/here"}, "cannot create the folder"},
      {{"tune", src + "/configs/tune_alonso_ramp.textproto", "--out", file.string()},
       "exists and is not a folder"},
      // gen checks its file before the closed-loop run it would lose.
      {{"gen", "--pattern", "motif", "--k", "2", "--n", "2", "--out", "/nonexistent-ebb/m.txt"},
       "--out /nonexistent-ebb/m.txt: its folder /nonexistent-ebb does not exist"},
      {{"gen", "--pattern", "uniform", "--k", "2", "--n", "2", "--out", (file / "m.txt").string()},
       "its folder " + file.string() + " is not a folder"},
      // A folder where a campaign's result goes: refused before the campaign.
      {{"faults", "--config", src + "/configs/kary4x3.textproto", "--scenarios", "1", "--quiet",
        "--out", blocked.string()},
       "faults: --out: E_IO: " + (blocked / "summary.json").string() + ": is a folder"},
  };
  for (const Case& c : cases) {
    const CliRun r = ebb(c.args);
    EXPECT_EQ(r.code, kExitError) << c.args.front() << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args.front() << ": " << r.err;
    // Refused at once: no run started, so nothing (no progress, no summary) on stdout.
    EXPECT_EQ(r.out, "") << c.args.front();
  }
  std::string kept;
  std::getline(std::ifstream(file), kept);
  EXPECT_EQ(kept, "not a folder");
}

// Names read plainly: a one-level fabric is "1 level"; a config without a
// name is named by its file when the command line changes it.
TEST(TopoCommand, NamesOfNamelessAndOneLevelFabrics) {
  CliRun r = ebb({"topo", "--k", "4", "--n", "1", "--export", "ibsim"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto net = scratch("one-level.net");
  std::ofstream(net) << r.out;
  r = ebb({"topo", "--from-ibnetdiscover", net.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("fat tree (1 level)\n"), std::string::npos) << r.out;
  const auto cfg = scratch("nameless.textproto");
  std::ofstream(cfg) << "fabric { kary_n_tree { k: 2 n: 2 } }\n"
                        "workload { uniform { rate: 0.1 duration_cycles: 4000 } }\n";
  r = ebb({"replay", cfg.string(), "seed=2", "report.skip_plots=true", "--out",
           scratch("nameless-out").string(), "--quiet"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out.rfind("ebb replay: nameless.textproto with seed=2 report.skip_plots=true\n", 0),
            0u)
      << r.out;
}

TEST(TopoCommand, HelpOnEveryCommand) {
  CliRun r = ebb({"--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_NE(r.out.find("topo"), std::string::npos);
  r = ebb({"topo", "--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_NE(r.out.find("--export"), std::string::npos);
  // A usage error: the rule, then one hint naming both kinds of help.
  r = ebb({"topo", "--bogus"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_EQ(r.err,
            "The following argument was not expected: --bogus\n"
            "Run 'ebb --help' or 'ebb <command> --help'.\n");
}

}  // namespace
}  // namespace ebb::tools
