// The metrics the Grafana dashboard (contrib/grafana/ebb-agent.json) shows,
// scraped every 250 ms from a real `ebb agent` on ibsim + OpenSM (with ebb's
// event plugin) through a run that moves every panel: the idle 4-ary 3-tree
// gated down to its minimal tree, a load on one leaf that brings its links
// back, the load gone, a minimal-tree cable that fails and the recovery, and
// SIGTERM. The test plays the physical layer (tests/ib/daemon_rig.h) and
// checks that the scraped metrics tell what the decision log tells. It writes
// every sample to test_scratch/dashboard_ibsim.tsv (seconds, series, value),
// which contrib/grafana/render_ibsim.sh draws into
// docs/figures/dashboard_ibsim.png (docs/operations.md, *Watch*).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "common/child_process.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "tests/harness/ibsim_fabric.h"
#include "tests/ib/daemon_rig.h"

namespace ebb::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const fabric::Topology& tree() {
  return fourAryThreeTree();
}

const fabric::MinimalTree& minimalTree() {
  static const fabric::MinimalTree mt = fabric::MinimalTree::build(tree()).value();
  return mt;
}

// GET /metrics on 127.0.0.1:port; "" when the endpoint does not answer.
std::string scrape(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string text;
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) {
    const std::string req = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      char buf[8192];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
        text.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  const std::size_t body = text.find("\r\n\r\n");
  return body == std::string::npos ? "" : text.substr(body + 4);
}

// One scrape: series ("ebb_links{level=\"1\",state=\"on\"}") to value.
using Sample = std::map<std::string, double>;

Sample parseMetrics(const std::string& text) {
  Sample s;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t sp = line.rfind(' ');
    if (sp == std::string::npos) continue;
    s[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
  }
  return s;
}

// Scrapes every 250 ms on its own thread until stopped; keeps (seconds since
// start, sample) for every scrape that answered.
class Scraper {
 public:
  explicit Scraper(int port) : port_(port), t0_(Clock::now()), thread_([this] { loop(); }) {}
  ~Scraper() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::vector<std::pair<double, Sample>> samples() {
    std::lock_guard<std::mutex> g(m_);
    return samples_;
  }
  // The last value of a series so far (0 when never seen).
  double last(const std::string& series) {
    std::lock_guard<std::mutex> g(m_);
    for (auto it = samples_.rbegin(); it != samples_.rend(); ++it) {
      if (auto f = it->second.find(series); f != it->second.end()) return f->second;
    }
    return 0;
  }

 private:
  void loop() {
    while (!stop_) {
      const auto due = Clock::now() + 250ms;
      const std::string text = scrape(port_);
      if (!text.empty()) {
        const double t = std::chrono::duration<double>(Clock::now() - t0_).count();
        std::lock_guard<std::mutex> g(m_);
        samples_.emplace_back(t, parseMetrics(text));
      }
      std::this_thread::sleep_until(due);
    }
  }
  int port_;
  Clock::time_point t0_;
  std::atomic<bool> stop_{false};
  std::mutex m_;
  std::vector<std::pair<double, Sample>> samples_;
  std::thread thread_;
};

void playFor(Daemon& d, PhysicalLayer& phys, std::chrono::milliseconds span) {
  const auto until = Clock::now() + span;
  while (Clock::now() < until && d.proc().running())
    phys.play(d.next(100ms));
}

fabric::SwitchId leafOf(const std::string& host) {
  for (const fabric::Host& h : tree().hosts()) {
    if (h.name == host) return tree().link(h.link).upper.sw;
  }
  throw std::runtime_error("no host " + host);
}

// The leaves: the switches hosts hang off (level 0 is the roots').
bool isLeaf(std::size_t i) {
  for (const fabric::Host& h : tree().hosts()) {
    if (tree().link(h.link).upper.sw == fabric::SwitchId(static_cast<std::uint32_t>(i)))
      return true;
  }
  return false;
}

// A leaf other than the daemon's own that hangs on its minimal-tree cable
// alone (every other up link of it disabled), and that cable's leaf end.
std::optional<PortName> hangingLeafTreePort(const PhysicalLayer& phys) {
  for (std::size_t i = 0; i < tree().numSwitches(); ++i) {
    const fabric::Switch& sw = tree().switches()[i];
    if (!isLeaf(i) || fabric::SwitchId(static_cast<std::uint32_t>(i)) == leafOf("H1")) continue;
    std::optional<PortName> treePort;
    bool hangs = true;
    for (std::uint16_t p : sw.upPorts) {
      const fabric::LinkId l = sw.ports[p].link;
      if (minimalTree().containsLink(l)) {
        treePort = PortName{sw.name, p + 1};
      } else if (phys.down().count(l) == 0) {
        hangs = false;
      }
    }
    if (hangs && treePort) return treePort;
  }
  return std::nullopt;
}

// The leaf, other than the daemon's own, with the most up links disabled.
const fabric::Switch& mostGatedLeaf(const PhysicalLayer& phys) {
  std::size_t best = 0, bestOff = 0;
  for (std::size_t i = 0; i < tree().numSwitches(); ++i) {
    if (!isLeaf(i) || fabric::SwitchId(static_cast<std::uint32_t>(i)) == leafOf("H1")) continue;
    const fabric::Switch& sw = tree().switches()[i];
    const auto off = static_cast<std::size_t>(
        std::count_if(sw.upPorts.begin(), sw.upPorts.end(),
                      [&](std::uint16_t p) { return phys.down().count(sw.ports[p].link) > 0; }));
    if (off > bestOff) {
      best = i;
      bestOff = off;
    }
  }
  return tree().switches()[best];
}

double maxOf(const std::vector<std::pair<double, Sample>>& samples, const std::string& series) {
  double m = 0;
  for (const auto& [t, s] : samples) {
    if (auto f = s.find(series); f != s.end()) m = std::max(m, f->second);
  }
  return m;
}

double minOf(const std::vector<std::pair<double, Sample>>& samples, const std::string& series) {
  double m = 1e300;
  for (const auto& [t, s] : samples) {
    if (auto f = s.find(series); f != s.end()) m = std::min(m, f->second);
  }
  return m;
}

TEST(DashboardRun, MetricsOfARealRunMoveEveryPanelAndAgreeWithTheDecisionLog) {
  IbsimFabric fab(tree(), withOsmEventPlugin());
  Daemon d(fab, {.topo = &tree(),
                 .fabric = "kary_n_tree { k: 4 n: 3 }",
                 .agentFields = "osm_events: \"osm-events.sock\" min_dwell_ms: 1500 "
                                "restore_timeout_ms: 20000 lock_file: \"dashboard.lock\"",
                 .name = "dashboard"});
  ASSERT_TRUE(waitForText(d.outPath(), "OpenSM events on", 30s)) << d.out() << d.err();
  std::smatch m;
  const std::string out = d.out();
  // The URL has the port bound, not the 0 asked for.
  ASSERT_TRUE(std::regex_search(
      out, m, std::regex(R"(metrics on http://127\.0\.0\.1:(\d+)/metrics \(port (\d+)\))")))
      << out;
  ASSERT_EQ(m[1], m[2]) << out;
  ASSERT_NE(m[1], "0") << out;
  Scraper scraper(std::stoi(m[1]));
  PhysicalLayer phys(fab, d, {.tree = &minimalTree()});

  // 1. Idle: gated down towards the minimal tree.
  playUntilQuiet(d, phys, 30s);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_FALSE(phys.down().empty()) << d.out() << d.err();
  playFor(d, phys, 1s);

  // 2. A load on the up links of the leaf with the most of them off (about ten times what they
  // carry) for 4 s: its links come back on; then nothing: off again after the dwell.
  const fabric::Switch& loaded = mostGatedLeaf(phys);
  std::map<std::uint16_t, std::uint64_t> sent;
  for (const auto until = Clock::now() + 4s; Clock::now() < until;) {
    for (std::uint16_t p : loaded.upPorts) {
      sent[p] += 250'000'000;  // 4-byte words per 200 ms
      fab.setCounter(loaded.name, p + 1, "PortCountersExtended.PortXmitData", sent[p]);
    }
    playFor(d, phys, 200ms);
    ASSERT_TRUE(d.proc().running()) << d.err();
  }
  const double onAfterLoad =
      scraper.last(R"(ebb_decisions_total{source="gating",action="on",refused="no",)"
                   R"(gating_action="disable_port"})");
  EXPECT_GT(onAfterLoad, 0) << "the load on " << loaded.name << " turned no link on\n"
                            << readWholeFile(d.logPath());
  playUntilQuiet(d, phys, 30s);
  ASSERT_FALSE(HasFatalFailure());
  playFor(d, phys, 1s);

  // 3. A leaf's minimal-tree cable fails (the test Unlinks it): ebb re-homes
  // the tree and re-enables what it needs, and says when all is up again.
  const auto treePort = hangingLeafTreePort(phys);
  ASSERT_TRUE(treePort) << "no leaf hangs on its tree cable alone";
  phys.forgetTree();
  phys.fail(*treePort);
  const auto deadline = Clock::now() + 25s;
  bool recovered = false;
  while (!recovered && Clock::now() < deadline && d.proc().running()) {
    phys.play(d.next(200ms));
    recovered = readWholeFile(d.logPath()).find("\"event\":\"recovered\"") != std::string::npos;
  }
  ASSERT_TRUE(recovered) << readWholeFile(d.logPath()) << d.out() << d.err();
  playFor(d, phys, 3s);

  // 4. SIGTERM: every link it disabled back on.
  d.proc().signal(SIGTERM);
  const auto t0 = Clock::now();
  while (d.proc().running() && Clock::now() - t0 < 30s)
    phys.play(d.next(100ms));
  scraper.stop();
  EXPECT_EQ(d.proc().wait(0ms), std::optional<int>(0)) << d.err();

  // The samples, for contrib/grafana/render_ibsim.sh.
  const auto samples = scraper.samples();
  const std::string dir = std::string(EBB_BINARY_DIR) + "/test_scratch";
  std::filesystem::create_directories(dir);
  {
    std::ofstream tsv(dir + "/dashboard_ibsim.tsv");
    tsv << "# seconds\tseries\tvalue (ebb agent's /metrics every 250 ms; "
           "tests/ib/dashboard_run_test.cpp)\n";
    for (const auto& [t, s] : samples) {
      for (const auto& [series, v] : s)
        tsv << fmt::format("{:.3f}\t{}\t{}\n", t, series, v);
    }
  }
  ASSERT_GE(samples.size(), 40u) << "too few scrapes answered";

  // What the panels show agrees with the run.
  EXPECT_EQ(maxOf(samples, "ebb_link_power_relative"), 1.0) << "all links on at start";
  EXPECT_LT(minOf(samples, "ebb_link_power_relative"), 0.7) << "gated towards the tree";
  // Levels of the links' upper switches: 0 (the roots) and 1.
  EXPECT_GT(maxOf(samples, R"(ebb_links{level="0",state="off"})"), 0);
  EXPECT_GT(maxOf(samples, R"(ebb_links{level="1",state="off"})"), 0);
  const std::string offGating =
      R"(ebb_decisions_total{source="gating",action="off",refused="no",gating_action="disable_port"})";
  EXPECT_GE(maxOf(samples, offGating), static_cast<double>(phys.everDisabled().size()) / 2);
  EXPECT_GE(maxOf(samples, "ebb_port_sets_total"), static_cast<double>(phys.everDisabled().size()));
  EXPECT_GE(maxOf(samples, "ebb_rehomings_total"), 1);
  EXPECT_GE(maxOf(samples, "ebb_links_restored_total"), 1);
  EXPECT_GE(maxOf(samples, R"(ebb_recoveries_total{outcome="complete"})"), 1);
  EXPECT_GT(maxOf(samples, "ebb_last_recovery_seconds"), 0);
  EXPECT_GT(maxOf(samples, "ebb_period_seconds"), 0);
  EXPECT_GT(maxOf(samples, "ebb_mads_sent_total"), 100);
  EXPECT_EQ(maxOf(samples, "ebb_agents_failed_safe"), 0) << d.err();
  EXPECT_GT(maxOf(samples, R"(ebb_osm_events_total{event="trap",trap="128"})"), 0);
  // Counters never go back.
  std::map<std::string, double> prev;
  for (const auto& [t, s] : samples) {
    for (const auto& [series, v] : s) {
      if (series.find("_total") == std::string::npos) continue;
      EXPECT_GE(v, prev[series]) << series << " went back at " << t << " s";
      prev[series] = v;
    }
  }
}

}  // namespace
}  // namespace ebb::testing
