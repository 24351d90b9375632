// `ebb tune` as a user runs it: the recommended config replayed on its own
// meets the budget; shards merged give the same files as one sweep; the
// plots and the data files behind them.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "configs/proto/replay.pb.h"  // generated
#include "tests/tune/tune_test_util.h"

namespace ebb::tune {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::ebb;
using testing::scratch;
using testing::slurp;
using testing::writeSpec;
using tools::kExitError;
using tools::kExitOk;
using tools::kExitUsage;

results::Report replayReport(const fs::path& dir, const fs::path& recommended) {
  const CliRun r = ebb({"replay", recommended.string(), "--out", (dir / "replay").string(),
                        "--quiet", "report.skip_plots=true"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  results::Report report;
  EXPECT_TRUE(
      google::protobuf::util::JsonStringToMessage(slurp(dir / "replay" / "report.json"), &report)
          .ok());
  return report;
}

TEST(TuneRecommended, MeetsItsLatencyBudgetReplayedAloneOnAShortRamp) {
  const auto dir = scratch("recommended-ramp");
  const auto spec = writeSpec(
      dir, testing::tinyRampBase(0.5) +
               "budget { latency_increase_pct: 3 } search_space { policy: [STATIC, DYNAMIC] "
               "u_off { values: [0.04] } u_on { values: [0.1, 0.3, 0.45, 0.6] } }");
  const CliRun t = ebb({"tune", spec.string(), "--out", (dir / "out").string(), "--quiet"});
  ASSERT_EQ(t.code, kExitOk) << t.err;
  ASSERT_TRUE(fs::exists(dir / "out" / "recommended.textproto")) << t.out;
  const results::Report report = replayReport(dir, dir / "out" / "recommended.textproto");
  EXPECT_LE(100 * report.mean_latency_increase(), 3.0 + 1e-9);
  EXPECT_LE(100 * report.p99_latency_increase(), 3.0 + 1e-9);
  EXPECT_GT(report.power_saving_switch_links(), 0.0);
  // The replay is the very run the sweep measured (runs are deterministic).
  EXPECT_NE(t.out.find(fmt::format("saved {:.1f}%", 100 * report.power_saving_switch_links())),
            std::string::npos)
      << t.out;
}

TEST(TuneRecommended, MeetsItsBudgetReplayedAloneOnTheAmgTrace) {
  const std::string trace = std::string(EBB_TRACES_DIR) + "/amg2013-27/amg27_events.csv";
  ASSERT_TRUE(fs::exists(trace)) << "no AMG trace at " << trace;
  const auto dir = scratch("recommended-amg");
  // A 3-ary 3-tree has exactly the trace's 27 hosts. U_on = 0.6 adds about 8%
  // to the mean latency, so the budget rules it out.
  const auto spec = writeSpec(dir,
                              "base { fabric { kary_n_tree { k: 3 n: 3 } } } "
                              "workload { name: \"amg\" spec { trace { path: \"" +
                                  trace +
                                  "\" } } } budget { app_slowdown_pct: 1 "
                                  "latency_increase_pct: 5 } search_space { u_on { values: "
                                  "[0.15, 0.6] } } skip_plots: true");
  const CliRun t = ebb({"tune", spec.string(), "--out", (dir / "out").string(), "--quiet"});
  ASSERT_EQ(t.code, kExitOk) << t.err;
  const std::string settings = slurp(dir / "out" / "settings.csv");
  EXPECT_NE(settings.find("over-budget"), std::string::npos) << settings;
  const results::Report report = replayReport(dir, dir / "out" / "recommended.textproto");
  ASSERT_GT(report.run().ranks(), 0u);
  EXPECT_LE(100 * report.app_slowdown(), 1.0 + 1e-9);
  EXPECT_LE(100 * report.mean_latency_increase(), 5.0 + 1e-9);
  EXPECT_LE(100 * report.p99_latency_increase(), 5.0 + 1e-9);
}

TEST(TuneShards, MergedShardsGiveTheSameFilesAsOneSweep) {
  const auto dir = scratch("shards");
  const auto spec = writeSpec(
      dir, testing::tinyRampBase(0.1) +
               "budget { latency_increase_pct: 10 } search_space { policy: [STATIC, DYNAMIC] "
               "u_off { values: [0.04, 0.1] } u_on { values: [0.1, 0.3, 0.45] } }");
  std::vector<std::string> merge = {"tune", spec.string(), "--quiet", "--merge"};
  for (int i = 0; i < 3; ++i) {
    const std::string out = (dir / fmt::format("shard{}", i)).string();
    const CliRun s = ebb({"tune", spec.string(), "--shard", fmt::format("{}/3", i), "--out", out,
                          "--quiet", "--jobs", "1"});
    ASSERT_EQ(s.code, kExitOk) << s.err;
    EXPECT_NE(s.out.find("left to the other shards"), std::string::npos) << s.out;
    EXPECT_FALSE(fs::exists(fs::path(out) / "runs.csv"));
    merge.push_back(out);
  }
  // Two shards of three are not enough: the merge names a missing run.
  const CliRun partial =
      ebb({"tune", spec.string(), "--quiet", "--merge", (dir / "shard0").string(),
           (dir / "shard1").string(), "--out", (dir / "partial").string()});
  EXPECT_EQ(partial.code, kExitError);
  EXPECT_NE(partial.err.find("is in none of the merged folders"), std::string::npos) << partial.err;
  merge.insert(merge.end(), {"--out", (dir / "merged").string()});
  const CliRun merged = ebb(merge);
  ASSERT_EQ(merged.code, kExitOk) << merged.err;
  EXPECT_NE(merged.out.find(" 0 computed now"), std::string::npos) << merged.out;
  const CliRun one =
      ebb({"tune", spec.string(), "--out", (dir / "one").string(), "--quiet", "--jobs", "2"});
  ASSERT_EQ(one.code, kExitOk) << one.err;
  for (const char* f :
       {"runs.csv", "runs.json", "settings.csv", "pareto.csv", "recommended.textproto"}) {
    const std::string a = slurp(dir / "merged" / f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_EQ(a, slurp(dir / "one" / f)) << f;
  }
  // runs.json has every column of runs.csv (the dimensions as "overrides").
  const std::string csv = slurp(dir / "one" / "runs.csv");
  const std::string json = slurp(dir / "one" / "runs.json");
  std::istringstream header(csv.substr(0, csv.find('\n')));
  bool dimensions = false;
  for (std::string column; std::getline(header, column, ',');) {
    if (column == "label") dimensions = true;
    if (column == "workload") dimensions = false;
    if (dimensions && column != "label") continue;
    EXPECT_NE(json.find("\"" + column + "\": "), std::string::npos) << column;
  }
}

// "status" of the rows of a gnuplot data file, by the given columns joined
// with spaces ("setting" or "u_off u_on dynamic").
std::map<std::string, std::string> statusByKey(const std::string& data,
                                               const std::vector<std::size_t>& keyColumns,
                                               std::size_t statusColumn) {
  std::map<std::string, std::string> out;
  std::istringstream lines(data);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string x; fields >> x;)
      f.push_back(x);
    std::string key;
    for (std::size_t c : keyColumns)
      key += (key.empty() ? "" : " ") + (c < f.size() ? f[c] : "?");
    out[key] = statusColumn < f.size() ? f[statusColumn] : "?";
  }
  return out;
}

TEST(TunePlots, ParetoAndHeatMapAsPngAndSvgWithInfeasiblePointsMarkedInTheData) {
  const auto dir = scratch("plots");
  // Setting ids in grid order: 0 static [0.1, 0.1] and 1 static [0.1, 0.15]
  // break U_on > 2*U_off; 2 static [0.1, 0.3]; 3 static [0.1, 0.6]; 4..7
  // dynamic U_on 0.1, 0.15, 0.3, 0.6. Dynamic U_on 0.6 adds about 3.5% to the
  // mean latency on this ramp, dynamic U_on 0.1 nothing: the 1% budget rules
  // out the first and keeps the second.
  const auto spec =
      writeSpec(dir,
                "base { fabric { kary_n_tree { k: 4 n: 2 } } workload { alonso_ramp { time_scale: "
                "0.5 } } } budget { latency_increase_pct: 1 } search_space { policy: [STATIC, "
                "DYNAMIC] u_off { values: [0.1] } u_on { values: [0.1, 0.15, 0.3, 0.6] } }");
  const fs::path out = dir / "out";
  const CliRun t = ebb({"tune", spec.string(), "--out", out.string(), "--quiet", "--jobs", "2"});
  ASSERT_EQ(t.code, kExitOk) << t.err;
  EXPECT_NE(t.out.find("plots/*.png|svg"), std::string::npos) << t.out;
  for (const char* plot : {"pareto", "thresholds"}) {
    const std::string png = slurp(out / "plots" / (std::string(plot) + ".png"));
    const std::string svg = slurp(out / "plots" / (std::string(plot) + ".svg"));
    EXPECT_EQ(png.substr(0, 8), "\x89PNG\r\n\x1a\n") << plot;
    EXPECT_NE(svg.find("<svg"), std::string::npos) << plot;
    EXPECT_NE(svg.find("</svg>"), std::string::npos) << plot;
  }
  EXPECT_NE(slurp(out / "tune.gp").find("plots/heatmap.dat"), std::string::npos);

  // points.dat: saving, penalty, status (0 within budget, 1 over), setting.
  const std::string points = slurp(out / "plots" / "points.dat");
  const auto pointStatus = statusByKey(points, {3}, 2);
  EXPECT_EQ(pointStatus.size(), 6u) << points;  // the 6 settings run
  EXPECT_EQ(pointStatus.count("0"), 0u) << points;
  EXPECT_EQ(pointStatus.count("1"), 0u) << points;
  if (pointStatus.count("7")) {
    EXPECT_EQ(pointStatus.at("7"), "1") << points;
  } else {
    ADD_FAILURE() << "dynamic U_on 0.6 missing from points.dat:\n" << points;
  }
  if (pointStatus.count("4")) {
    EXPECT_EQ(pointStatus.at("4"), "0") << points;
  } else {
    ADD_FAILURE() << "dynamic U_on 0.1 missing from points.dat:\n" << points;
  }
  // The same status as settings.csv, for every point.
  const std::string settings = slurp(out / "settings.csv");
  for (const auto& [id, status] : pointStatus) {
    const std::string row = "\n" + id + ",";
    const auto at = settings.find(row);
    ASSERT_NE(at, std::string::npos) << id;
    const std::string line = settings.substr(at + 1, settings.find('\n', at + 1) - at - 1);
    EXPECT_NE(line.find(status == "0" ? ",within-budget," : ",over-budget,"), std::string::npos)
        << line;
  }

  // heatmap.dat: U_off, U_on, saving, status (2: outside the map), dynamic.
  const std::string heat = slurp(out / "plots" / "heatmap.dat");
  const auto cell = statusByKey(heat, {0, 1, 4}, 3);
  EXPECT_EQ(cell.size(), 8u) << heat;
  const std::vector<std::pair<std::string, std::string>> expected = {{"0.1 0.1 0", "2"},
                                                                     {"0.1 0.15 0", "2"},
                                                                     {"0.1 0.3 0", "0"},
                                                                     {"0 0.6 1", "1"},
                                                                     {"0 0.1 1", "0"}};
  for (const auto& [key, status] : expected) {
    if (cell.count(key)) {
      EXPECT_EQ(cell.at(key), status) << key << "\n" << heat;
    } else {
      ADD_FAILURE() << "no cell " << key << " in heatmap.dat:\n" << heat;
    }
  }
}

TEST(TuneCommand, BadCommandLinesAndSpecsExitWithTheirCodes) {
  const auto dir = scratch("cli");
  const auto spec = writeSpec(dir, testing::tinyRampBase(0.1) +
                                       "budget { latency_increase_pct: 5 } search_space { u_on { "
                                       "values: [0.2] } } search { strategy: HALVING }");
  EXPECT_EQ(ebb({"tune", spec.string(), "--shard", "3/3"}).code, kExitUsage);
  EXPECT_EQ(ebb({"tune", spec.string(), "--shard", "x"}).code, kExitUsage);
  EXPECT_EQ(ebb({"tune", spec.string(), "--shard", ""}).code, kExitUsage);  // an unset variable
  const CliRun halving =
      ebb({"tune", spec.string(), "--shard", "0/2", "--out", (dir / "out").string(), "--quiet"});
  EXPECT_EQ(halving.code, kExitError);
  EXPECT_NE(halving.err.find("--shard: only a grid search"), std::string::npos) << halving.err;
  const auto bad = writeSpec(dir, testing::tinyRampBase(0.1) +
                                      "budget { latency_increase_pct: -5 } search_space { u_on { "
                                      "values: [0.2] } }");
  const CliRun r = ebb({"tune", bad.string(), "--out", (dir / "out").string()});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("budget.latency_increase_pct: must be >= 0"), std::string::npos) << r.err;
}

// Only the all-links-on setting within budget: the recommendation saves
// nothing, and the summary says so rather than "saved 0.0%" alone.
TEST(TuneCommand, ARecommendationThatSavesNothingSaysSo) {
  const auto dir = scratch("saves-nothing");
  const auto spec = writeSpec(dir, testing::tinyRampBase(0.02) +
                                       "budget { latency_increase_pct: 5 } "
                                       "search_space { policy: [ALL_ON] }");
  const CliRun r = ebb({"tune", spec.string(), "--out", (dir / "out").string(), "--quiet"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("link power saved 0.0%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("! no setting saves link power within the budget"), std::string::npos)
      << r.out;
}

// --merge of something that is no readable folder: a name too long for the
// file system, a symlink to itself, a file. Refused before anything is
// copied, never an uncaught std::filesystem exception.
TEST(TuneCommand, AMergeFolderThatIsNotOneIsRefused) {
  const auto dir = scratch("merge-bad");
  const auto spec = writeSpec(dir, testing::tinyRampBase(0.1) +
                                       "budget { latency_increase_pct: 5 } search_space { u_on { "
                                       "values: [0.2] } }");
  std::filesystem::create_symlink("self", dir / "self");
  std::ofstream(dir / "file") << "x";
  for (const std::string& bad :
       {std::string(300, 'a'), (dir / "self").string(), (dir / "file").string()}) {
    const CliRun r =
        ebb({"tune", spec.string(), "--out", (dir / "out").string(), "--merge", bad, "--quiet"});
    EXPECT_EQ(r.code, kExitError) << bad << "\n" << r.err;
    EXPECT_NE(r.err.find("--merge: " + bad + ": not a folder of cached runs"), std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "out")) << bad;
  }
  // A folder with no runs merges none; the failed sweep leaves no empty
  // --out (nor cache/) behind.
  std::filesystem::create_directory(dir / "empty");
  const CliRun r = ebb({"tune", spec.string(), "--out", (dir / "out" / "deeper").string(),
                        "--merge", (dir / "empty").string(), "--quiet"});
  EXPECT_EQ(r.code, kExitError) << r.err;
  EXPECT_NE(r.err.find("is in none of the merged folders"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

}  // namespace
}  // namespace ebb::tune
