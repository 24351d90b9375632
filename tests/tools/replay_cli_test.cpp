// `ebb replay` and `ebb gen` on closed-loop workloads as a user runs them:
// traces of every format from the command line, generated collective loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tools/command.h"
#include "workload/traffic_file.h"

namespace ebb::tools {
namespace {

const std::string kTraces = EBB_TRACES_DIR;

int ebb(std::vector<const char*> args, std::string* outText, std::string* errText) {
  args.insert(args.begin(), "ebb");
  std::ostringstream out, err;
  const int code = runEbb(static_cast<int>(args.size()), args.data(), out, err);
  *outText = out.str();
  *errText = err.str();
  return code;
}

TEST(ReplayCli, CommandLineTracesOfEveryFormatReportPerJob) {
  const std::string dir =
      (std::filesystem::path(EBB_BINARY_DIR) / "test_scratch" / "replay_jobs").string();
  std::filesystem::create_directories(dir);
  const std::string cfg = std::string(EBB_SOURCE_DIR) + "/configs/kary4x3.textproto";
  const std::string otf2 = kTraces + "/stencil4d-otf2/traces-32/traces.otf2";
  std::string out, err;
  // OTF2 with a named collective algorithm and a random placement.
  ASSERT_EQ(ebb({"replay", cfg.c_str(), "--trace", otf2.c_str(), "--trace-format", "otf2",
                 "--placement", "random", "--collectives", "allreduce=ring", "--ranks", "40",
                 "--out", dir.c_str(), "--quiet", "report.skip_plots=true"},
                &out, &err),
            kExitOk)
      << err;
  EXPECT_NE(out.find("(otf2, random placement)"), std::string::npos) << out;
  EXPECT_NE(out.find("application runtime:"), std::string::npos) << out;
  std::ifstream report(dir + "/report.json");
  const std::string json((std::istreambuf_iterator<char>(report)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"jobs\""), std::string::npos);
  EXPECT_NE(json.find("\"baseline_runtime_us\""), std::string::npos);
  EXPECT_NE(json.find("\"app_slowdown\""), std::string::npos) << json;
  // Ranks beyond the placement: exit 1 with the file named.
  EXPECT_EQ(ebb({"replay", cfg.c_str(), "--trace", otf2.c_str(), "--trace-format", "otf2",
                 "--ranks", "8", "--out", dir.c_str(), "--quiet"},
                &out, &err),
            kExitError);
  EXPECT_NE(err.find("has 32 ranks, beyond the 8 placed"), std::string::npos) << err;
  // More hosts asked for than the fabric has: the option is named.
  EXPECT_EQ(ebb({"replay", cfg.c_str(), "--trace", otf2.c_str(), "--trace-format", "otf2",
                 "--ranks", "70", "--out", dir.c_str(), "--quiet"},
                &out, &err),
            kExitError);
  EXPECT_NE(err.find("but the fabric has only 64 (given as --ranks 70)"), std::string::npos) << err;
  // Trace options without a trace: a command-line error.
  EXPECT_EQ(ebb({"replay", "--ranks", "8", "--quiet"}, &out, &err), kExitUsage);
  EXPECT_NE(err.find("--trace"), std::string::npos) << err;
}

// A one-level fabric has no switch link: nothing to save there, said so,
// rather than "100% saved" (report.json leaves the field out).
TEST(ReplayCli, AFabricWithoutSwitchLinksHasNoSwitchLinkSaving) {
  const std::filesystem::path dir =
      std::filesystem::path(EBB_BINARY_DIR) / "test_scratch" / "replay_one_level";
  std::filesystem::create_directories(dir);
  const std::string cfg = (dir / "one.textproto").string();
  std::ofstream(cfg) << "fabric { kary_n_tree { k: 4 n: 1 } } gating { policy: DYNAMIC }\n"
                        "workload { uniform { rate: 0.05 duration_cycles: 5000 } }\n";
  std::string out, err;
  ASSERT_EQ(
      ebb({"replay", cfg.c_str(), "--out", (dir / "out").string().c_str(), "--quiet"}, &out, &err),
      kExitOk)
      << err;
  EXPECT_NE(out.find("link power saved: no switch links to save on"), std::string::npos) << out;
  std::ifstream report(dir / "out" / "report.json");
  const std::string json((std::istreambuf_iterator<char>(report)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"power_saving_all_links\""), std::string::npos) << json;
  EXPECT_EQ(json.find("\"power_saving_switch_links\""), std::string::npos) << json;
  // Nor a share of switch-link power (0.0% read as "all off"), nor an
  // oracle efficiency (0/0): each run's line says n/a.
  EXPECT_EQ(json.find("\"relative_power_switch_links\""), std::string::npos) << json;
  EXPECT_EQ(json.find("\"efficiency\""), std::string::npos) << json;
  // Open loop: no application runtime, so no slowdown (0 would read as measured).
  EXPECT_EQ(json.find("\"app_slowdown\""), std::string::npos) << json;
  EXPECT_NE(out.find("all links on                 power     n/a (switch links)"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("0.0% (switch links)"), std::string::npos) << out;
  EXPECT_NE(out.find("oracle bound: no switch links to gate"), std::string::npos) << out;
  // timeseries.csv leaves the switch-link columns empty (not 0, "all off"),
  // and the figures, drawn without a warning, show all links instead.
  std::ifstream rows(dir / "out" / "timeseries.csv");
  std::string header, row;
  ASSERT_TRUE(std::getline(rows, header) && std::getline(rows, row));
  std::vector<std::string> fields;
  for (std::size_t at = 0, comma = 0; comma != std::string::npos; at = comma + 1) {
    comma = row.find(',', at);
    fields.push_back(row.substr(at, comma == std::string::npos ? comma : comma - at));
  }
  ASSERT_GE(fields.size(), 10u) << row;
  EXPECT_EQ(fields[5], "") << row;  // power_switch_links
  EXPECT_EQ(fields[9], "") << row;  // oracle_power_switch_links
  EXPECT_NE(fields[6], "") << row;  // power_all_links
  EXPECT_EQ(err.find("warning"), std::string::npos) << err;
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "plots" / "power_over_time.svg"));
}

// A synthetic workload that creates no message (messages larger than the
// duration fills at the rate) runs, but says its figures are an idle fabric's.
TEST(ReplayCli, AWorkloadWithoutMessagesSaysSo) {
  const std::filesystem::path dir =
      std::filesystem::path(EBB_BINARY_DIR) / "test_scratch" / "replay_no_message";
  std::filesystem::create_directories(dir);
  std::string out, err;
  ASSERT_EQ(ebb({"replay", "fabric.kary_n_tree.n=2", "workload.uniform.rate=0.2",
                 "workload.uniform.duration_cycles=4000", "workload.message_bytes=100000",
                 "report.skip_plots=true", "--out", (dir / "out").string().c_str(), "--quiet"},
                &out, &err),
            kExitOk)
      << err;
  EXPECT_NE(out.find("delivered 0/0"), std::string::npos) << out;
  EXPECT_NE(out.find("! the workload created no message"), std::string::npos) << out;
  // No latency was measured: none in report.json (0 would read as measured).
  {
    std::ifstream report(dir / "out" / "report.json");
    const std::string json((std::istreambuf_iterator<char>(report)),
                           std::istreambuf_iterator<char>());
    EXPECT_NE(json.find("\"latency_messages\""), std::string::npos) << json;
    EXPECT_EQ(json.find("latency_cycles\""), std::string::npos) << json;
  }
  // A rate too small to draw over a span past the sources' "never" (about
  // 27 days) and to the end of time: the "never" was sent as messages, and a
  // run to the end of time sampled for ever (the next sample wrapped).
  const std::string tiny = (dir / "tiny").string();
  for (std::vector<const char*> extra :
       {std::vector<const char*>{"workload.uniform.duration_cycles=9000000000000000"},
        {"workload.uniform.duration_cycles=9223372036854775807", "emulator.cycle_ps=1"}}) {
    std::vector<const char*> args = {"replay",
                                     "fabric.kary_n_tree.k=2",
                                     "fabric.kary_n_tree.n=1",
                                     "gating.policy=ALL_ON",
                                     "workload.uniform.rate=1e-30",
                                     "report.skip_plots=true",
                                     "report.skip_baseline=true",
                                     "--out",
                                     tiny.c_str(),
                                     "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::filesystem::remove_all(tiny);
    out.clear();
    err.clear();
    ASSERT_EQ(ebb(args, &out, &err), kExitOk) << err;
    EXPECT_NE(out.find("delivered 0/0"), std::string::npos) << out;
  }
}

// Every row of an all-links-on run reads 100% power, even late in a long
// run: a row's energy was a difference of energies summed from time 0,
// which lost a 2 000-cycle row against 10^18 ps (101.8%, 87%).
TEST(ReplayCli, AnAllOnRunReadsFullPowerInEveryRowOfALongRun) {
  const std::filesystem::path dir =
      std::filesystem::path(EBB_BINARY_DIR) / "test_scratch" / "replay_far_end";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "far.txt") << "0 0 1 64\n1e15 1 0 64\n";
  const std::string traffic = (dir / "far.txt").string(), outDir = (dir / "out").string();
  std::string out, err;
  ASSERT_EQ(ebb({"replay", "fabric.kary_n_tree.k=2", "fabric.kary_n_tree.n=2",
                 "gating.policy=ALL_ON", "report.skip_baseline=true", "report.skip_plots=true",
                 "--traffic", traffic.c_str(), "--out", outDir.c_str(), "--quiet"},
                &out, &err),
            kExitOk)
      << err;
  std::ifstream rows(dir / "out" / "timeseries.csv");
  std::string line;
  ASSERT_TRUE(std::getline(rows, line));  // the header
  int n = 0;
  while (std::getline(rows, line)) {
    std::vector<std::string> fields;
    for (std::size_t at = 0, comma = 0; comma != std::string::npos; at = comma + 1) {
      comma = line.find(',', at);
      fields.push_back(line.substr(at, comma == std::string::npos ? comma : comma - at));
    }
    ASSERT_GE(fields.size(), 7u) << line;
    EXPECT_EQ(fields[5], "1.000000") << line;  // power_switch_links
    EXPECT_EQ(fields[6], "1.000000") << line;  // power_all_links
    ++n;
  }
  EXPECT_GE(n, 3) << "the last rows: the far message's, and the drain";
}

// An override that cannot be applied is a bad command line (exit 2), and
// says nothing of a oneof switch it never made; one that applies and breaks
// a rule is bad input (exit 1).
TEST(ReplayCli, OverrideErrorsAreCommandLineErrorsAndSwitchNothing) {
  std::string out, err;
  for (std::vector<const char*> bad : {std::vector<const char*>{"gating.bogus=1"},
                                       {"gating.policy=dynamic"},
                                       {"fabric.xgft.m=2"},
                                       {"seed=3", "seed=4"},
                                       {"lpi.link_speed="}}) {
    std::vector<const char*> args = {"replay", "--quiet"};
    args.insert(args.end(), bad.begin(), bad.end());
    EXPECT_EQ(ebb(args, &out, &err), kExitUsage) << bad.front() << ": " << err;
    EXPECT_EQ(err.find("note:"), std::string::npos) << err;
  }
  EXPECT_EQ(ebb({"replay", "--quiet", "gating.u_on=2"}, &out, &err), kExitError) << err;
  EXPECT_NE(err.find("given as gating.u_on=2 on the command line"), std::string::npos) << err;
}

// A traffic file whose last message falls on a check-period boundary ends
// 1 ps later: that remainder is no period of its own (a zero-span row with a
// power value), the first drain row spans it.
TEST(ReplayCli, NoTimeseriesRowIsShorterThanACycle) {
  const std::filesystem::path dir =
      std::filesystem::path(EBB_BINARY_DIR) / "test_scratch" / "replay_boundary";
  std::filesystem::create_directories(dir);
  const std::string traffic = (dir / "one.txt").string();
  std::ofstream(traffic) << "10000 0 3 64\n";
  // Also with the network empty at the end (no drain rows to span the
  // remainder): the message's host cable failed, so it is lost at once.
  const std::string cut = (dir / "cut.textproto").string();
  std::ofstream(cut) << "fabric { kary_n_tree { k: 2 n: 2 } }\n"
                        "faults { event { at_cycles: 0 switch_name: \"S1_0\" port: 1 } }\n";
  for (const bool hostCut : {false, true}) {
    SCOPED_TRACE(hostCut ? "source cut off" : "delivered");
    std::vector<const char*> args = {"replay", "--quiet", "--traffic", traffic.c_str()};
    if (hostCut) args.insert(args.begin() + 1, cut.c_str());
    const std::string outDir = (dir / (hostCut ? "out_cut" : "out")).string();
    for (const char* a : {"fabric.kary_n_tree.k=2", "fabric.kary_n_tree.n=2",
                          "report.skip_plots=true", "report.skip_baseline=true", "--out"})
      args.push_back(a);
    args.push_back(outDir.c_str());
    std::string out, err;
    ASSERT_EQ(ebb(args, &out, &err), kExitOk) << err;
    std::ifstream rows(outDir + "/timeseries.csv");
    std::string header, row;
    ASSERT_TRUE(std::getline(rows, header));
    const std::size_t spanColumn = [&] {
      std::size_t column = 0;
      for (std::size_t at = 0, comma = 0; comma != std::string::npos; at = comma + 1, ++column) {
        comma = header.find(',', at);
        if (header.substr(at, comma == std::string::npos ? comma : comma - at) == "span_cycles")
          return column;
      }
      return std::string::npos;
    }();
    ASSERT_NE(spanColumn, std::string::npos) << header;
    int n = 0;
    while (std::getline(rows, row)) {
      std::size_t at = 0;
      for (std::size_t c = 0; c < spanColumn; ++c)
        at = row.find(',', at) + 1;
      EXPECT_GE(std::stod(row.substr(at)), 1.0) << row;
      ++n;
    }
    EXPECT_GE(n, 3);
  }
}

// lpi.mode=OFF on the command line turns low-power idle off for a config
// that sets its link speed and hold (they apply with an idle mode only):
// dropped with a note, unless the command line sets them too. A bad link
// speed names its field.
TEST(ReplayCli, LowPowerIdleTurnsOffFromTheCommandLine) {
  const std::filesystem::path dir =
      std::filesystem::path(EBB_BINARY_DIR) / "test_scratch" / "replay_lpi_off";
  std::filesystem::remove_all(dir);
  const std::string cfg = std::string(EBB_SOURCE_DIR) + "/configs/lpi_table6_hybrid.textproto";
  std::string out, err;
  ASSERT_EQ(ebb({"replay", cfg.c_str(), "--quiet", "lpi.mode=OFF",
                 "workload.uniform.duration_cycles=3000", "report.skip_plots=true",
                 "report.skip_baseline=true", "--out", dir.string().c_str()},
                &out, &err),
            kExitOk)
      << err;
  EXPECT_NE(err.find("note: override lpi.mode=OFF drops lpi.hold_ts, lpi.link_speed"),
            std::string::npos)
      << err;
  EXPECT_EQ(out.find("idle power"), std::string::npos) << out;
  EXPECT_EQ(ebb({"replay", cfg.c_str(), "--quiet", "lpi.mode=OFF", "lpi.hold_ts=2"}, &out, &err),
            kExitError);
  EXPECT_NE(err.find("lpi.hold_ts: applies with a low-power idle mode only"), std::string::npos)
      << err;
  EXPECT_EQ(ebb({"replay", cfg.c_str(), "--quiet", "lpi.link_speed=10GBASE-T"}, &out, &err),
            kExitError);
  EXPECT_NE(err.find("lpi.link_speed: '10GBASE-T' is no link speed"), std::string::npos) << err;
  EXPECT_NE(err.find("given as lpi.link_speed=10GBASE-T on the command line"), std::string::npos)
      << err;
}

// Deep-sleep or hybrid low-power idle on buffers under 4 packets congests
// at light load: said before the run, not after hours; the paper's setup
// (4-packet buffers) and fast-wake run without the note. So is a HYBRID
// that is DEEP_SLEEP for want of a hold.
TEST(ReplayCli, DeepSleepOnSmallBuffersIsNotedBeforeTheRun) {
  const std::string out =
      (std::filesystem::path(EBB_BINARY_DIR) / "test_scratch" / "replay_lpi_note" / "out").string();
  // A short run with these settings; what it said on stderr.
  const auto notes = [&](std::vector<const char*> settings) {
    std::vector<const char*> args = {"replay",
                                     "fabric.kary_n_tree.n=2",
                                     "workload.uniform.rate=0.01",
                                     "workload.uniform.duration_cycles=2000",
                                     "report.skip_plots=true",
                                     "report.skip_baseline=true",
                                     "--out",
                                     out.c_str(),
                                     "--quiet"};
    args.insert(args.begin() + 1, settings.begin(), settings.end());
    std::string stdoutText, err;
    EXPECT_EQ(ebb(args, &stdoutText, &err), kExitOk) << err;
    return err;
  };
  for (const char* mode : {"lpi.mode=HYBRID", "lpi.mode=DEEP_SLEEP", "lpi.mode=FAST_WAKE"}) {
    const std::string err = notes({mode, "lpi.hold_ts=1"});
    const bool noted = err.find("note: low-power idle") != std::string::npos &&
                       err.find("on VC buffers of 1 packet(s)") != std::string::npos;
    EXPECT_EQ(noted, std::string(mode) != "lpi.mode=FAST_WAKE") << mode << ": " << err;
  }
  std::string err = notes({"lpi.mode=HYBRID", "emulator.vc_buffer_bytes=256"});
  EXPECT_EQ(err.find("note: low-power idle"), std::string::npos) << err;
  // HYBRID's fast-wake stage lasts the hold: with none it is DEEP_SLEEP.
  EXPECT_NE(err.find("note: lpi.mode HYBRID with lpi.hold_ts 0"), std::string::npos) << err;
  err = notes({"lpi.mode=HYBRID", "lpi.hold_ts=1", "emulator.vc_buffer_bytes=256"});
  EXPECT_EQ(err.find("note: lpi.mode HYBRID"), std::string::npos) << err;
  // An adaptive hold moves the hold, not hybrid's fast-wake stage: still noted.
  err = notes(
      {"lpi.mode=HYBRID", "lpi.adaptive_hold.delay_budget_ns=20", "emulator.vc_buffer_bytes=256"});
  EXPECT_NE(err.find("note: lpi.mode HYBRID with lpi.hold_ts 0"), std::string::npos) << err;
}

// A run that fails midway (a closed loop whose host a failure cuts off)
// leaves no empty --out folder behind, nor the parents it created for it.
TEST(ReplayCli, AFailedRunLeavesNoFolderItCreated) {
  const std::filesystem::path dir =
      std::filesystem::path(EBB_BINARY_DIR) / "test_scratch" / "replay_failed_run";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path config = dir / "cut_off.textproto";
  std::ofstream(config)
      << "fabric { kary_n_tree { k: 2 n: 2 } } "
         "workload { collective { op: \"allreduce\" bytes: 4096 ranks: 4 iterations: 5 "
         "compute_us: 5 } } "
         "faults { event { at_cycles: 3000 action: FAIL switch_name: \"S1_0\" port: 1 } }";
  std::string out, err;
  EXPECT_EQ(ebb({"replay", config.string().c_str(), "--out", (dir / "new" / "out").string().c_str(),
                 "--quiet"},
                &out, &err),
            kExitError);
  EXPECT_NE(err.find("faults cut off H0 for good"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(dir / "new"));
  EXPECT_TRUE(std::filesystem::exists(config));
}

// `ebb gen --pattern collective`: the pairwise alltoall of 16 ranks, 3 times
// with 50 us of compute before each: every ordered pair exactly 3 times with
// the given size, in time order, the iterations at least the gap apart.
TEST(ReplayCli, GenCollectiveWritesTheLoopAtClosedLoopTimes) {
  const std::string dir =
      (std::filesystem::path(EBB_BINARY_DIR) / "test_scratch" / "gen_collective").string();
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/a2a.txt";
  std::string out, err;
  ASSERT_EQ(ebb({"gen", "--pattern", "collective", "--k", "4", "--n", "2", "--collective",
                 "alltoall", "--algorithm", "pairwise", "--message-bytes", "1000", "--iterations",
                 "3", "--compute-us", "50", "--out", file.c_str()},
                &out, &err),
            kExitOk)
      << err;
  auto reader = workload::TrafficReader::open(file);
  ASSERT_TRUE(reader) << reader.status().toString();
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> pairs;
  std::vector<TimePs> times;
  for (;;) {
    auto m = (*reader)->next();
    ASSERT_TRUE(m) << m.status().toString();
    if (!*m) break;
    EXPECT_EQ((*m)->bytes, 1000);
    EXPECT_NE((*m)->src, (*m)->dst);
    ++pairs[{(*m)->src, (*m)->dst}];
    times.push_back((*m)->time);
  }
  EXPECT_EQ(times.size(), 3u * 16u * 15u);
  EXPECT_EQ(pairs.size(), 16u * 15u);
  for (const auto& [pair, n] : pairs) {
    EXPECT_EQ(n, 3) << pair.first << "->" << pair.second;
  }
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
  // The first message after 50 us of compute; the last after 3 gaps.
  EXPECT_GE(times.front(), 50'000'000);
  EXPECT_GE(times.back(), 150'000'000);
  EXPECT_NE(out.find("wrote 720 messages"), std::string::npos) << out;
  // A bad collective is a clear error.
  EXPECT_EQ(ebb({"gen", "--pattern", "collective", "--collective", "scan", "--out", file.c_str()},
                &out, &err),
            kExitError);
  EXPECT_NE(err.find("--collective: unknown collective 'scan'"), std::string::npos) << err;
  // Iterations beyond the bound: refused by name, nothing allocated or written.
  std::filesystem::remove(dir + "/many.txt");
  for (const char* pattern : {"collective", "motif"}) {
    EXPECT_EQ(ebb({"gen", "--pattern", pattern, "--k", "2", "--n", "2", "--iterations",
                   "4000000000", "--out", (dir + "/many.txt").c_str()},
                  &out, &err),
              kExitError);
    EXPECT_NE(err.find("--iterations: must be in [1, 1000000] (is 4000000000)"), std::string::npos)
        << err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/many.txt"));
  // Compute past the end of virtual time (3 x 5e12 us), or past a traffic
  // file's range (2 x 4.6e12 us, within 2^63 ps): refused, nothing written.
  // The first ran with the later iterations' compute dropped; the second
  // wrote a time `ebb replay` refuses.
  std::filesystem::remove(dir + "/long.txt");
  for (const char* compute : {"5e12", "4.6e12"}) {
    SCOPED_TRACE(compute);
    const std::string iterations = compute[0] == '5' ? "3" : "2";
    EXPECT_EQ(
        ebb({"gen", "--pattern", "collective", "--k", "2", "--n", "1", "--compute-us", compute,
             "--iterations", iterations.c_str(), "--out", (dir + "/long.txt").c_str()},
            &out, &err),
        kExitError);
    EXPECT_NE(err.find(compute[0] == '5' ? "runs past the end of virtual time"
                                         : "outside a traffic file's time range"),
              std::string::npos)
        << err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/long.txt"));
  }
  // --max-messages holds for the closed-loop patterns too: counted exactly,
  // refused before anything is written; the count itself is allowed.
  for (const char* pattern : {"collective", "motif"}) {
    EXPECT_EQ(ebb({"gen", "--pattern", pattern, "--k", "2", "--n", "2", "--iterations", "5",
                   "--max-messages", "3", "--out", (dir + "/many.txt").c_str()},
                  &out, &err),
              kExitError)
        << pattern;
    EXPECT_NE(err.find("more than the limit of 3"), std::string::npos) << err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/many.txt")) << pattern;
  }
  EXPECT_NE(err.find("--max-messages"), std::string::npos) << err;
  ASSERT_EQ(ebb({"gen", "--pattern", "collective", "--k", "2", "--n", "2", "--iterations", "5",
                 "--max-messages", "60", "--out", (dir + "/many.txt").c_str()},
                &out, &err),
            kExitOk)
      << err;
  EXPECT_NE(out.find("wrote 60 messages"), std::string::npos) << out;
}

// `ebb gen --pattern motif`: the FFT motif on 8 ranks (4 x 2 pencils) writes
// the messages of its generated program, pair by pair, at closed-loop times.
TEST(ReplayCli, GenMotifWritesTheGeneratedProgram) {
  const std::string dir =
      (std::filesystem::path(EBB_BINARY_DIR) / "test_scratch" / "gen_motif").string();
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/fft.txt";
  std::string out, err;
  ASSERT_EQ(
      ebb({"gen", "--pattern", "motif", "--motif", "fft3d", "--k", "4", "--n", "2", "--ranks", "8",
           "--cells", "4", "--iterations", "2", "--compute-us", "10", "--out", file.c_str()},
          &out, &err),
      kExitOk)
      << err;
  auto reader = workload::TrafficReader::open(file);
  ASSERT_TRUE(reader) << reader.status().toString();
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::int64_t>> pairs;
  for (;;) {
    auto m = (*reader)->next();
    ASSERT_TRUE(m) << m.status().toString();
    if (!*m) break;
    pairs[{(*m)->src, (*m)->dst}].push_back((*m)->bytes);
  }
  // Per iteration two row transposes (256 bytes to each of 3 row peers) and
  // two column transposes (512 bytes to the column peer): 8 messages per rank.
  EXPECT_EQ((pairs[{0, 1}]), (std::vector<std::int64_t>{256, 256, 256, 256}));
  EXPECT_EQ((pairs[{0, 4}]), (std::vector<std::int64_t>{512, 512, 512, 512}));
  EXPECT_EQ(pairs.count({0, 5}), 0u);
  EXPECT_NE(out.find("wrote 128 messages (2 x motif fft3d, 8 ranks"), std::string::npos) << out;
  EXPECT_EQ(
      ebb({"gen", "--pattern", "motif", "--motif", "lulesh", "--out", file.c_str()}, &out, &err),
      kExitError);
  EXPECT_NE(err.find("--motif: unknown motif 'lulesh'"), std::string::npos) << err;
}

// The fault configs of configs/ as a user runs them: every message of the
// minimal-tree cable failure arrives, report.json has the faults section, and
// neither config breaks the guarantee (docs/faults.md).
TEST(ReplayCli, FaultConfigsRunWithoutViolations) {
  const std::string dir =
      (std::filesystem::path(EBB_BINARY_DIR) / "test_scratch" / "replay_faults").string();
  std::filesystem::create_directories(dir);
  for (const char* name : {"faults_mt_link", "faults_random"}) {
    SCOPED_TRACE(name);
    const std::string cfg = std::string(EBB_SOURCE_DIR) + "/configs/" + name + ".textproto";
    std::string out, err;
    ASSERT_EQ(ebb({"replay", cfg.c_str(), "--out", dir.c_str(), "--quiet", "report.skip_plots=true",
                   "report.skip_baseline=true"},
                  &out, &err),
              kExitOk)
        << err;
    EXPECT_NE(out.find(", violations 0;"), std::string::npos) << out;
    std::ifstream report(dir + "/report.json");
    const std::string json((std::istreambuf_iterator<char>(report)),
                           std::istreambuf_iterator<char>());
    EXPECT_NE(json.find("\"faults\": {"), std::string::npos);
    EXPECT_NE(json.find("\"recovery_ps\""), std::string::npos);
    // Failed links are off for free: no efficiency against the bound, said why.
    EXPECT_EQ(json.find("\"efficiency\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"no_efficiency\": \"faults took links"), std::string::npos) << json;
    EXPECT_NE(out.find("no efficiency (faults took links"), std::string::npos) << out;
    if (std::string(name) == "faults_mt_link") {
      // Every message delivered: "delivered N/N".
      const auto at = out.find("delivered ");
      ASSERT_NE(at, std::string::npos) << out;
      std::istringstream nums(out.substr(at + 10));
      std::uint64_t delivered = 0, generated = 0;
      char slash = 0;
      nums >> delivered >> slash >> generated;
      EXPECT_GT(generated, 0u);
      EXPECT_EQ(delivered, generated);
      EXPECT_NE(out.find("faults: 2 events (1 left a pair without a path)"), std::string::npos)
          << out;
    }
  }
}

// Faults that take every link all run leave all links on no power either:
// 0 against 0 saves nothing, said as n/a (not "100% saved", not "no switch
// links to save on", which is a one-level fabric's).
TEST(ReplayCli, AFabricWhoseEveryLinkFailedSavesNothing) {
  const std::filesystem::path dir =
      std::filesystem::path(EBB_BINARY_DIR) / "test_scratch" / "replay_all_failed";
  std::filesystem::create_directories(dir);
  const std::string cfg = (dir / "dead.textproto").string();
  std::ofstream(cfg) << "fabric { kary_n_tree { k: 3 n: 2 } } gating { policy: DYNAMIC }\n"
                        "workload { uniform { rate: 0.1 duration_cycles: 3000 } }\n"
                        "faults { event { at_cycles: 0 scope: SWITCH switch_name: \"S1_0\" }\n"
                        "event { at_cycles: 0 scope: SWITCH switch_name: \"S1_1\" }\n"
                        "event { at_cycles: 0 scope: SWITCH switch_name: \"S1_2\" } }\n"
                        "report { skip_plots: true }\n";
  std::string out, err;
  ASSERT_EQ(
      ebb({"replay", cfg.c_str(), "--out", (dir / "out").string().c_str(), "--quiet"}, &out, &err),
      kExitOk)
      << err;
  EXPECT_NE(out.find("link power saved: n/a of switch links (no power to save"), std::string::npos)
      << out;
  EXPECT_NE(out.find("n/a of all links"), std::string::npos) << out;
  EXPECT_EQ(out.find("100.0% of all links"), std::string::npos) << out;
  std::ifstream report(dir / "out" / "report.json");
  const std::string json((std::istreambuf_iterator<char>(report)),
                         std::istreambuf_iterator<char>());
  EXPECT_EQ(json.find("\"power_saving_all_links\""), std::string::npos) << json;
  EXPECT_EQ(json.find("\"power_saving_switch_links\""), std::string::npos) << json;
}

}  // namespace
}  // namespace ebb::tools
