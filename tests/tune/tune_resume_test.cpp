// `ebb tune` as a user runs it, the real binary in its own process: killed
// mid-sweep and run again on the same --out, it computes only what the cache
// lacks and writes the same files as an uninterrupted sweep.
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/child_process.h"
#include "tests/tune/tune_test_util.h"

namespace ebb::tune {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::scratch;
using testing::slurp;
using testing::writeSpec;

const std::string kEbb = std::string(EBB_BINARY_DIR) + "/tools/ebb";

// The finished entries of a cache folder: `<hash>.json` (a `.tmp` file is a
// run being written).
std::vector<fs::path> cacheEntries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Waits, woken by inotify on `dir` (the cache renames each finished run into
// it), until `dir` holds `n` finished entries; false when `child` exits first
// or on timeout.
bool waitForEntries(const fs::path& dir, std::size_t n, ChildProcess& child,
                    std::chrono::milliseconds timeout) {
  const int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0) return false;
  if (::inotify_add_watch(fd, dir.c_str(), IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE) < 0) {
    ::close(fd);
    return false;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool found = false;
  while (!(found = cacheEntries(dir).size() >= n) && child.running() &&
         std::chrono::steady_clock::now() < deadline) {
    // The bound only rechecks that the child still runs.
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      char buf[4096];
      while (::read(fd, buf, sizeof buf) > 0) {
      }
    }
  }
  ::close(fd);
  return found;
}

// What would show that a cache entry was written again: a new file renamed
// over it (another inode), a later modification time, other contents.
struct EntryState {
  std::uint64_t inode = 0;
  std::int64_t mtimeNs = 0;
  std::string content;
};

EntryState stateOf(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  EntryState s;
  s.inode = static_cast<std::uint64_t>(st.st_ino);
  s.mtimeNs = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 +
              static_cast<std::int64_t>(st.st_mtim.tv_nsec);
  s.content = slurp(p);
  return s;
}

ChildProcess::Spec tuneSpec(const fs::path& spec, const fs::path& out, const fs::path& cwd) {
  ChildProcess::Spec s;
  s.argv = {kEbb, "tune", spec.string(), "--out", out.string(), "--jobs", "1"};
  s.cwd = cwd.string();
  return s;
}

// "... C computed now, H from the cache" of tune's summary.
struct RunCounts {
  long computed = -1;
  long cached = -1;
};

RunCounts countsOf(const std::string& out) {
  static const std::regex re(R"((\d+) computed now, (\d+) from the cache)");
  std::smatch m;
  RunCounts c;
  if (std::regex_search(out, m, re)) {
    c.computed = std::stol(m[1].str());
    c.cached = std::stol(m[2].str());
  }
  return c;
}

std::string recommendedLine(const std::string& out) {
  const auto at = out.find("=> recommended:");
  if (at == std::string::npos) return "";
  return out.substr(at, out.find('\n', at) - at);
}

// A 4-ary 2-tree on half the alonso-ramp: 11 gated settings and one all-on
// reference, about 0.1 s a run.
fs::path writeTwelveRunSpec(const fs::path& dir) {
  return writeSpec(
      dir,
      "base { fabric { kary_n_tree { k: 4 n: 2 } } workload { alonso_ramp { time_scale: "
      "0.5 } } } skip_plots: true budget { latency_increase_pct: 3 } search_space { policy: "
      "[STATIC, DYNAMIC] u_off { values: [0.04, 0.1] } u_on { values: [0.1, 0.3, 0.45, "
      "0.6] } }");
}

TEST(TuneResume, KilledMidSweepResumesWithTheCachedRunsAndTheSameResults) {
  const auto dir = scratch("resume");
  const auto spec = writeTwelveRunSpec(dir);
  const std::size_t total = 12;
  const fs::path out = dir / "out";
  const fs::path cache = out / "cache";
  fs::create_directories(cache);  // to watch it from the start

  std::map<fs::path, EntryState> before;
  {
    ChildProcess::Spec s = tuneSpec(spec, out, dir);
    s.stdoutPath = (dir / "killed.out").string();
    s.stderrPath = (dir / "killed.err").string();
    ChildProcess child(s);
    const bool two = waitForEntries(cache, 2, child, 120s);
    child.signal(SIGKILL);
    const std::optional<int> status = child.wait(10s);
    ASSERT_TRUE(two) << "no 2 cached runs; stderr: " << slurp(dir / "killed.err");
    ASSERT_TRUE(status.has_value());
    ASSERT_EQ(*status, 128 + SIGKILL)
        << "the sweep ended before the kill: " << slurp(dir / "killed.out");
    for (const fs::path& p : cacheEntries(cache))
      before[p] = stateOf(p);
  }
  ASSERT_GE(before.size(), 2u);
  ASSERT_LT(before.size(), total) << "every run was cached before the kill";
  EXPECT_FALSE(fs::exists(out / "runs.csv"));

  const CommandResult resumed = runCommand(tuneSpec(spec, out, dir), 300s);
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  const CommandResult fresh = runCommand(tuneSpec(spec, dir / "fresh", dir), 300s);
  ASSERT_EQ(fresh.exitCode, 0) << fresh.err;

  const RunCounts f = countsOf(fresh.out);
  EXPECT_EQ(f.computed, static_cast<long>(total)) << fresh.out;
  EXPECT_EQ(f.cached, 0) << fresh.out;
  const RunCounts r = countsOf(resumed.out);
  EXPECT_EQ(r.cached, static_cast<long>(before.size())) << resumed.out;
  EXPECT_EQ(r.computed, static_cast<long>(total - before.size())) << resumed.out;

  // No entry written before the kill was written again.
  for (const auto& [path, was] : before) {
    ASSERT_TRUE(fs::exists(path)) << path;
    const EntryState now = stateOf(path);
    EXPECT_EQ(now.inode, was.inode) << path;
    EXPECT_EQ(now.mtimeNs, was.mtimeNs) << path;
    EXPECT_EQ(now.content, was.content) << path;
  }
  // The same runs cached, the same files written, the same recommendation.
  std::vector<std::string> names, freshNames;
  for (const fs::path& p : cacheEntries(cache))
    names.push_back(p.filename().string());
  for (const fs::path& p : cacheEntries(dir / "fresh" / "cache"))
    freshNames.push_back(p.filename().string());
  EXPECT_EQ(names.size(), total);
  EXPECT_EQ(names, freshNames);
  for (const char* file :
       {"runs.csv", "runs.json", "settings.csv", "pareto.csv", "recommended.textproto"}) {
    const std::string a = slurp(out / file);
    EXPECT_FALSE(a.empty()) << file;
    EXPECT_EQ(a, slurp(dir / "fresh" / file)) << file;
  }
  EXPECT_FALSE(recommendedLine(resumed.out).empty()) << resumed.out;
  EXPECT_EQ(recommendedLine(resumed.out), recommendedLine(fresh.out));
}

// Ctrl-C mid-sweep: one line says how many runs are safe and how to resume,
// and the process still dies of the signal (the shell's 130).
TEST(TuneResume, InterruptedSweepSaysWhatIsSafeAndHowToResume) {
  const auto dir = scratch("interrupt");
  const auto spec = writeTwelveRunSpec(dir);
  const fs::path out = dir / "out";
  const fs::path cache = out / "cache";
  fs::create_directories(cache);
  ChildProcess::Spec s = tuneSpec(spec, out, dir);
  s.stdoutPath = (dir / "int.out").string();
  s.stderrPath = (dir / "int.err").string();
  ChildProcess child(s);
  const bool two = waitForEntries(cache, 2, child, 120s);
  child.signal(SIGINT);
  const std::optional<int> status = child.wait(10s);
  ASSERT_TRUE(two) << "no 2 cached runs; stderr: " << slurp(dir / "int.err");
  ASSERT_TRUE(status.has_value());
  ASSERT_EQ(*status, 128 + SIGINT)
      << "the sweep ended before the signal: " << slurp(dir / "int.out");
  const std::string err = slurp(dir / "int.err");
  static const std::regex re(
      R"(ebb tune: interrupted: (\d+) runs computed now are safe in (\S+) with those cached )"
      R"(before; the same command resumes the sweep)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(err, m, re)) << err;
  // The count read in the handler: a run a worker renamed into place in the
  // instant before the process died may be one more on disk (the signal came
  // as the second entry appeared, so its count may not have been taken yet).
  const auto said = static_cast<std::size_t>(std::stoul(m[1].str()));
  const std::size_t onDisk = cacheEntries(cache).size();
  ASSERT_GE(onDisk, 2u);
  EXPECT_GE(said, 1u);
  EXPECT_LE(said, onDisk);
  EXPECT_GE(said + 1, onDisk);
  EXPECT_EQ(fs::path(m[2].str()), fs::absolute(cache).lexically_normal()) << m[2].str();
}

}  // namespace
}  // namespace ebb::tune
