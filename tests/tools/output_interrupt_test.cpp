// An `ebb replay` stopped at a random point of its output phase, by SIGTERM or
// SIGKILL, leaves its --out folder holding either the complete earlier run or
// the complete new one (common/output_set.h), never a mix.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/child_process.h"
#include "common/output_set.h"

namespace ebb {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const fs::path kEbb = fs::path(EBB_BINARY_DIR) / "tools" / "ebb";

// Every visible file under `dir` (recursive) with its bytes; hidden entries
// (the manifest, staging folders) are ebb's own bookkeeping.
std::map<std::string, std::string> visibleFiles(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && name.front() == '.') {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    files[fs::relative(it->path(), dir).string()] = bytes.str();
  }
  return files;
}

// The text outputs compared byte for byte; figures by name only (a PNG
// encoder need not be byte-stable).
bool sameRun(const std::map<std::string, std::string>& a,
             const std::map<std::string, std::string>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, bytes] : a) {
    auto it = b.find(name);
    if (it == b.end()) return false;
    if (name.rfind("plots/", 0) == 0 && name.find(".csv") == std::string::npos) continue;
    if (it->second != bytes) return false;
  }
  return true;
}

struct ReplayProcess {
  fs::path out;
  std::unique_ptr<ChildProcess> child;
  fs::path stdoutPath;
};

ReplayProcess start(const fs::path& config, const fs::path& out, int seed, const fs::path& logs,
                    int id, std::vector<std::string> extra = {},
                    std::map<std::string, std::string> env = {}) {
  ReplayProcess r;
  r.out = out;
  r.stdoutPath = logs / ("stdout-" + std::to_string(id) + ".txt");
  ChildProcess::Spec spec;
  spec.argv = {kEbb.string(), "replay",     config.string(), "seed=" + std::to_string(seed),
               "--out",       out.string(), "--quiet"};
  spec.argv.insert(spec.argv.end(), extra.begin(), extra.end());
  spec.env = std::move(env);
  spec.stdoutPath = r.stdoutPath.string();
  spec.stderrPath = (logs / ("stderr-" + std::to_string(id) + ".txt")).string();
  r.child = std::make_unique<ChildProcess>(spec);
  return r;
}

class OutputInterrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test: ctest runs them in parallel.
    root_ = fs::path(EBB_BINARY_DIR) / "test_scratch" / "output_interrupt" /
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(root_);
    fs::create_directories(root_ / "logs");
    config_ = root_ / "run.textproto";
    std::ofstream(config_) << "fabric { kary_n_tree { k: 4 n: 2 } }\n"
                              "workload { uniform { rate: 0.3 duration_cycles: 40000 } }\n";
    // The two complete runs every interrupted folder must equal.
    for (auto [seed, dir] : {std::pair{1, "ref-a"}, std::pair{2, "ref-b"}}) {
      ReplayProcess r = start(config_, root_ / dir, seed, root_ / "logs", seed);
      ASSERT_EQ(r.child->wait(120s), 0) << dir;
    }
    a_ = visibleFiles(root_ / "ref-a");
    b_ = visibleFiles(root_ / "ref-b");
    ASSERT_TRUE(a_.count("report.json") && a_.count("plots/power_vs_rate.svg"));
    ASSERT_FALSE(sameRun(a_, b_)) << "the two seeds must give different outputs";
  }

  // Starts run B over a copy of run A and stops it `delay` after its summary
  // (printed just before the outputs are written) with `sig`; the folder is
  // then run A or run B, whole.
  void interrupt(int sig, std::chrono::microseconds delay, int trial) {
    const fs::path out = root_ / ("trial-" + std::to_string(trial));
    fs::remove_all(out);
    fs::copy(root_ / "ref-a", out, fs::copy_options::recursive);
    ReplayProcess r = start(config_, out, 2, root_ / "logs", 100 + trial);
    ASSERT_TRUE(waitForText(r.stdoutPath.string(), "=> link power saved", 120s));
    std::this_thread::sleep_for(delay);  // a point of the output phase, not a wait
    r.child->signal(sig);
    ASSERT_TRUE(r.child->wait(60s).has_value());
    // A SIGKILL within the final renames leaves .ebb-commit: the next run on
    // the folder finishes it first, as this does.
    ASSERT_TRUE(finishInterruptedCommit(out).isOk());
    const auto now = visibleFiles(out);
    EXPECT_TRUE(sameRun(now, a_) || sameRun(now, b_))
        << "signal " << sig << " after " << delay.count() << " us left a mix in " << out;
    if (sameRun(now, b_)) ++newRuns_;
  }

  fs::path root_;
  fs::path config_;
  std::map<std::string, std::string> a_, b_;
  int newRuns_ = 0;
};

TEST_F(OutputInterrupt, SigtermOrSigkillLeaveTheEarlierRunOrTheNewOneWhole) {
  // How long the output phase lasts here: from the summary to the exit.
  ReplayProcess timed = start(config_, root_ / "timed", 2, root_ / "logs", 3);
  ASSERT_TRUE(waitForText(timed.stdoutPath.string(), "=> link power saved", 120s));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(timed.child->wait(120s), 0);
  const auto phase =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int64_t> at(0, phase.count() * 5 / 4);
  int trial = 0;
  for (int sig : {SIGTERM, SIGKILL}) {
    for (int i = 0; i < 8; ++i)
      interrupt(sig, std::chrono::microseconds(at(rng)), trial++);
  }
  // Not a claim that a kill never comes late; the trials span the phase.
  RecordProperty("new_runs", newRuns_);
  std::printf("output phase %lld us; %d of 16 trials left the new run\n",
              static_cast<long long>(phase.count()), newRuns_);
}

// Ctrl-C or a kill during the run, before any result is written: the
// folders the run created for --out go again (as after a failed run), and
// the process still dies of the signal.
TEST_F(OutputInterrupt, AnInterruptedRunLeavesNoFolderItCreated) {
  for (int sig : {SIGINT, SIGTERM}) {
    const fs::path made = root_ / ("made-" + std::to_string(sig));
    ReplayProcess r = start(config_, made / "deeper", 1, root_ / "logs", 200 + sig,
                            {"workload.uniform.duration_cycles=100000000"});
    // The folder is made before the run starts (a child process's progress,
    // not the emulator's time).
    for (int i = 0; i < 600 && !fs::exists(made / "deeper"); ++i)
      std::this_thread::sleep_for(50ms);
    ASSERT_TRUE(fs::exists(made / "deeper"));
    r.child->signal(sig);
    EXPECT_EQ(r.child->wait(60s), 128 + sig);
    EXPECT_FALSE(fs::exists(made)) << sig;
  }
}

std::string readText(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(OutputInterrupt, ARunRemovesTheFilesOfTheEarlierRunItDoesNotWrite) {
  const fs::path out = root_ / "stale";
  fs::copy(root_ / "ref-a", out, fs::copy_options::recursive);
  ASSERT_TRUE(fs::exists(out / "baseline_timeseries.csv"));
  ReplayProcess r = start(config_, out, 2, root_ / "logs", 4,
                          {"report.skip_baseline=true", "report.skip_plots=true"});
  ASSERT_EQ(r.child->wait(120s), 0) << readText(root_ / "logs" / "stderr-4.txt");
  EXPECT_FALSE(fs::exists(out / "baseline_timeseries.csv"));
  EXPECT_FALSE(fs::exists(out / "plots" / "power_vs_rate.svg"));
  EXPECT_TRUE(fs::exists(out / "report.json"));
  EXPECT_EQ(readText(out / ".ebb-run"), "decisions.jsonl\nreport.json\ntimeseries.csv\n");
}

TEST_F(OutputInterrupt, WithoutGnuplotTheRunWarnsAndExitsZeroWithItsResults) {
  const fs::path out = root_ / "no-gnuplot";
  ReplayProcess r =
      start(config_, out, 1, root_ / "logs", 5, {}, {{"PATH", (root_ / "empty-path").string()}});
  ASSERT_EQ(r.child->wait(120s), 0);
  const std::string err = readText(root_ / "logs" / "stderr-5.txt");
  EXPECT_NE(err.find("ebb replay: warning: plots:"), std::string::npos) << err;
  EXPECT_NE(err.find("(the results are written; exit status 0)"), std::string::npos) << err;
  // Everything but the figures, exactly as with gnuplot.
  auto written = visibleFiles(out);
  EXPECT_EQ(written.count("plots/power_vs_rate.png"), 0u);
  for (const char* f :
       {"report.json", "timeseries.csv", "baseline_timeseries.csv", "decisions.jsonl"}) {
    EXPECT_EQ(written[f], a_.at(f)) << f;
  }
  EXPECT_EQ(readText(r.stdoutPath).find("plots/*.png"), std::string::npos);
}

// `ebb gen` cut off midway by a file-size limit (RLIMIT_FSIZE): killed by
// SIGXFSZ, or failing to write when the signal is ignored. Either way --out
// keeps the earlier file whole; a failed run removes its temporary file.
// The last window of a commit: the manifest is in place, the emptied commit
// folder not yet removed (a SIGKILL there, about one trial in 16 above). The
// next run finishing the commit must keep the new run's files, not read the
// missing manifest as an empty run and remove them.
TEST(OutputCommit, AKillAfterTheManifestMovedKeepsTheNewRun) {
  const fs::path dir = fs::path(EBB_BINARY_DIR) / "test_scratch" / "output_commit";
  fs::remove_all(dir);
  fs::create_directories(dir / "plots");
  fs::create_directories(dir / ".ebb-commit" / "plots");  // emptied, not removed
  std::ofstream(dir / "report.json") << "{}";
  std::ofstream(dir / "plots" / "a.svg") << "<svg/>";
  std::ofstream(dir / ".ebb-run") << "plots/a.svg\nreport.json\n";
  ASSERT_TRUE(finishInterruptedCommit(dir).isOk());
  EXPECT_TRUE(fs::exists(dir / "report.json"));
  EXPECT_TRUE(fs::exists(dir / "plots" / "a.svg"));
  EXPECT_TRUE(fs::exists(dir / ".ebb-run"));
  EXPECT_FALSE(fs::exists(dir / ".ebb-commit"));
}

// A folder holding another command's run (a campaign's summary.json) is
// refused by a replay, before its run and at OutputSet::begin: replacing the
// run would remove the campaign's files. The campaign's own next run, and a
// folder without a manifest, go ahead.
TEST(OutputCommit, AnotherCommandsRunIsRefusedNotRemoved) {
  const fs::path dir = fs::path(EBB_BINARY_DIR) / "test_scratch" / "output_foreign";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "summary.json") << "{}";
  std::ofstream(dir / "scenarios.csv") << "seed\n";
  std::ofstream(dir / ".ebb-run") << "scenarios.csv\nsummary.json\n";
  const std::set<std::string> replay = {"report.json", "timeseries.csv"};
  const Status s = checkHoldsOwnRun(dir, replay);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("holds the results of another ebb command (scenarios.csv, "
                             "summary.json; listed in"),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(OutputSet::begin(dir, replay));
  EXPECT_TRUE(checkHoldsOwnRun(dir, {"summary.json", "scenarios.csv", "x"}).isOk());
  EXPECT_TRUE(checkHoldsOwnRun(dir / "nothing-here", replay).isOk());
  // The command line says it before any work, and nothing is touched.
  ChildProcess::Spec spec;
  spec.argv = {kEbb.string(),
               "replay",
               "fabric.kary_n_tree.n=2",
               "workload.uniform.duration_cycles=2000",
               "--out",
               dir.string(),
               "--quiet"};
  const fs::path log = dir.parent_path() / "output_foreign.stderr";
  spec.stderrPath = log.string();
  ChildProcess child(spec);
  EXPECT_EQ(child.wait(120s), 1);
  EXPECT_NE(readText(log).find("ebb replay: --out: E_INVALID"), std::string::npos) << readText(log);
  EXPECT_EQ(readText(dir / "summary.json"), "{}");
  EXPECT_FALSE(fs::exists(dir / "report.json"));
}

TEST(GenInterrupt, AGenCutOffMidwayLeavesTheEarlierFileWhole) {
  const fs::path dir = fs::path(EBB_BINARY_DIR) / "test_scratch" / "gen_interrupt";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "traffic.txt";
  const std::string earlier = "# the earlier file\n0 0 1 64\n";
  const auto entries = [&] {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir))
      names.push_back(e.path().filename().string());
    return names;
  };
  for (const char* trap : {"trap '' XFSZ; ", ""}) {
    std::ofstream(out) << earlier;
    ChildProcess::Spec spec;
    // About 4 MB of messages against a limit of 100 KiB or so.
    spec.argv = {
        "/bin/sh", "-c",
        std::string(trap) + "ulimit -f 200; exec " + kEbb.string() + " gen --out " + out.string()};
    const CommandResult r = runCommand(spec, 60s);
    ASSERT_FALSE(r.timedOut);
    EXPECT_NE(r.exitCode, 0) << trap << r.out << r.err;
    EXPECT_EQ(readText(out), earlier) << trap << r.err;
    // The failed write took its temporary file with it; the killed run's is
    // left behind (nothing runs after SIGKILL or SIGXFSZ) until the next run.
    if (*trap) {
      EXPECT_NE(r.err.find("cannot write " + out.string()), std::string::npos) << r.err;
      EXPECT_EQ(entries(), std::vector<std::string>{"traffic.txt"}) << r.err;
    }
  }
  ASSERT_EQ(entries().size(), 2u) << "the killed run's temporary file is there";
  // A complete run replaces the file and removes the killed run's leftover
  // (its process is gone), not a live run's or another file's.
  const fs::path other = dir / "traffic.txt.ebb-notes.tmp";
  std::ofstream(other) << "not ours\n";
  const fs::path live = dir / fmt::format("traffic.txt.ebb-{}-0.tmp", ::getpid());
  std::ofstream(live) << "a live run's\n";
  ChildProcess::Spec complete;
  complete.argv = {kEbb.string(), "gen", "--cycles", "1000", "--out", out.string()};
  const CommandResult r = runCommand(complete, 60s);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(readText(out), earlier);
  EXPECT_EQ(readText(out).rfind("# ebb traffic file", 0), 0u);
  std::vector<std::string> left = entries();
  std::sort(left.begin(), left.end());
  std::vector<std::string> kept = {"traffic.txt", other.filename().string(),
                                   live.filename().string()};
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(left, kept);
}

}  // namespace
}  // namespace ebb
