// `ebb faults` as a user runs it: outputs, determinism across --jobs, one
// scenario replayed alone, and bad command lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "campaign/campaign.h"
#include "campaign/scenario.h"
#include "campaign/summary.h"
#include "campaign_test_util.h"
#include "configs/config_loader.h"
#include "replay/fabric_from_config.h"
#include "replay/run_spec.h"

namespace ebb::campaign {
namespace {

using testing::ebb;
using testing::scratch;
using testing::slurp;

std::string writeBase(const std::filesystem::path& dir, const std::string& text) {
  const auto path = dir / "base.textproto";
  std::ofstream(path) << text;
  return path.string();
}

const char* kBase = "fabric { kary_n_tree { k: 4 n: 2 } } gating { policy: DYNAMIC u_on: 0.15 }\n";

TEST(FaultsCommand, WritesTheSummaryTheCsvAndTheWorstScenario) {
  const auto dir = scratch("outputs");
  const std::string base = writeBase(dir, kBase);
  const std::string out1 = (dir / "j1").string(), out2 = (dir / "j2").string();
  const auto r1 = ebb({"faults", "--config", base, "--scenarios", "6", "--seed", "3", "--jobs", "1",
                       "--periods", "10", "--out", out1});
  EXPECT_NE(r1.out.find("ebb faults: 6 scenarios of 10 check periods on 4-ary 2-tree"),
            std::string::npos)
      << r1.out;
  EXPECT_NE(r1.err.find("6/6 scenarios (100%)"), std::string::npos) << r1.err;
  const std::string json = slurp(std::filesystem::path(out1) / "summary.json");
  for (const char* key :
       {"\"scenarios\":6", "\"violations\":", "\"physically_cut_pairs\":", "\"max_recovery_ps\":",
        "\"lost_messages\":", "\"retransmitted_messages\":", "\"packets_rerouted\":",
        "\"packets_dropped\":", "\"packets_stranded\":", "\"agent_restarts\":6",
        "\"faults_injected\":", "\"worst_scenario\":{\"index\":", "\"first_violation\":"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json;
  }
  // Exit 1 exactly when a violation was counted (Campaign.SmallCampaignHasNoViolation
  // and the CI campaign check that there is none).
  const bool clean = json.find("\"violations\":0,") != std::string::npos;
  EXPECT_EQ(r1.code, clean ? tools::kExitOk : tools::kExitError) << r1.out << r1.err;
  EXPECT_EQ(clean, json.find("\"first_violation\":null") != std::string::npos) << json;
  EXPECT_EQ(clean, r1.out.find("violations: 0 host-pair periods") != std::string::npos) << r1.out;
  const std::string csv = slurp(std::filesystem::path(out1) / "scenarios.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7);
  EXPECT_EQ(csv.rfind("index,seed,", 0), 0u);
  // The worst scenario replays alone.
  Result<config::Config> worst =
      config::loadConfigFile((std::filesystem::path(out1) / "worst_scenario.textproto").string());
  ASSERT_TRUE(worst) << worst.status().toString();
  EXPECT_TRUE(replay::buildRunSpec(*worst));
  EXPECT_GT(worst->faults().event_size(), 0);
  EXPECT_NE(json.find(fmt::format("\"seed\":{},\"why\"", worst->seed())), std::string::npos);
  // Two jobs: the same bytes.
  const auto r2 = ebb({"faults", "--config", base, "--scenarios", "6", "--seed", "3", "--jobs", "2",
                       "--periods", "10", "--out", out2, "--quiet"});
  EXPECT_EQ(r2.code, r1.code) << r2.err;
  EXPECT_TRUE(r2.err.empty()) << r2.err;
  EXPECT_EQ(json, slurp(std::filesystem::path(out2) / "summary.json"));
  EXPECT_EQ(csv, slurp(std::filesystem::path(out2) / "scenarios.csv"));
  EXPECT_EQ(slurp(std::filesystem::path(out1) / "worst_scenario.textproto"),
            slurp(std::filesystem::path(out2) / "worst_scenario.textproto"));
}

TEST(FaultsCommand, ReplaysOneScenarioAndEmitsItsConfig) {
  const auto dir = scratch("replay");
  const std::string base = writeBase(dir, kBase);
  const std::string out = (dir / "campaign").string();
  const auto campaign = ebb({"faults", "--config", base, "--scenarios", "3", "--seed", "5",
                             "--periods", "10", "--out", out, "--quiet"});
  ASSERT_NE(campaign.code, tools::kExitUsage) << campaign.err;
  const std::string csv = slurp(std::filesystem::path(out) / "scenarios.csv");
  // Row of scenario 2.
  std::istringstream lines(csv);
  std::string line, row;
  for (int i = 0; i < 4 && std::getline(lines, line); ++i)
    row = line;
  const std::uint64_t seed = scenarioSeed(5, 2);
  ASSERT_EQ(row.rfind(fmt::format("2,{},", seed), 0), 0u) << row;
  const std::string emitted = (dir / "one.textproto").string();
  const std::string alone = (dir / "alone").string();
  const auto r = ebb({"faults", "--config", base, "--replay-scenario", std::to_string(seed),
                      "--periods", "10", "--emit-config", emitted, "--out", alone});
  ASSERT_NE(r.code, tools::kExitUsage) << r.out << r.err;
  EXPECT_NE(r.out.find(fmt::format("scenario seed {} alone", seed)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("restart-agent agent of "), std::string::npos) << r.out;  // its events
  // The emitted config is the scenario's, and the replay measures the same.
  const config::Config baseCfg = config::loadConfigFile(base).value();
  ScenarioShape shape;
  shape.periods = 10;
  EXPECT_EQ(slurp(emitted), configText(makeScenario(baseCfg, testing::topologyOf(baseCfg), seed,
                                                    shape, dir.string())));
  const std::string aloneCsv = slurp(std::filesystem::path(alone) / "scenarios.csv");
  EXPECT_NE(aloneCsv.find("\n0" + row.substr(1) + "\n"), std::string::npos)
      << aloneCsv << " vs " << row;
}

// Replaying one scenario without --out writes no folder: the default one is
// where the campaign's results usually are (a probe lost them so).
TEST(FaultsCommand, AReplayedScenarioWithoutOutLeavesTheDefaultFolderAlone) {
  const auto dir = scratch("replay-no-out");
  std::filesystem::create_directories(dir / "faults_out");
  std::ofstream(dir / "faults_out" / "summary.json") << "{\"scenarios\":6}\n";
  const std::string base = std::string(EBB_SOURCE_DIR) + "/configs/kary4x3.textproto";
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  const auto r = ebb({"faults", "--config", base, "--replay-scenario", "7", "--periods", "10"});
  std::filesystem::current_path(cwd);
  ASSERT_NE(r.code, tools::kExitUsage) << r.err;
  EXPECT_NE(r.out.find("scenario seed 7 alone"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("wrote faults_out"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(dir / "faults_out" / "summary.json"), "{\"scenarios\":6}\n");
}

// The agents' re-homing and the pairs' reconnection after an event are
// independent; each event's line lists them in time order, none before the
// event. Seeds 1..12 of the 4-ary 3-tree include reconnections that come
// before the re-homing (an on-demand turn-on), so the order is tested.
TEST(FaultsCommand, AReplayedScenarioListsWhatFollowedEachEventInTimeOrder) {
  const auto dir = scratch("order");
  const std::string base = std::string(EBB_SOURCE_DIR) + "/configs/kary4x3.textproto";
  int reconnectedFirst = 0, lines = 0;
  for (int seed = 1; seed <= 12; ++seed) {
    const auto r = ebb({"faults", "--config", base, "--replay-scenario", std::to_string(seed),
                        "--out", (dir / std::to_string(seed)).string(), "--quiet"});
    ASSERT_NE(r.code, tools::kExitUsage) << r.err;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      const auto ps = line.find(" ps  ");
      if (line.rfind("    ", 0) != 0 || ps == std::string::npos) continue;
      ++lines;
      long long last = std::stoll(line.substr(0, ps));
      std::string first;
      for (auto at = line.find("; "); at != std::string::npos; at = line.find("; ", at + 1)) {
        const auto num = line.find(" at ", at) + 4;
        const long long t = std::stoll(line.substr(num));
        EXPECT_GE(t, last) << line;
        last = t;
        if (first.empty()) first = line.substr(at + 2, num - at - 6);
      }
      if (first == "every pair reconnected" && line.find("agents re-homed") != std::string::npos)
        ++reconnectedFirst;
    }
  }
  EXPECT_GT(lines, 12);
  EXPECT_GT(reconnectedFirst, 0);
}

TEST(FaultsCommand, BadArgumentsNameTheFlag) {
  const auto dir = scratch("bad");
  const std::string base = writeBase(dir, kBase);
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"faults", "--scenarios", "3"}, tools::kExitUsage, "--config"},
      {{"faults", "--config", (dir / "missing.textproto").string()}, tools::kExitUsage, "--config"},
      {{"faults", "--config", base, "--scenarios", "0"}, tools::kExitUsage, "--scenarios"},
      {{"faults", "--config", base, "--jobs", "0"}, tools::kExitUsage, "--jobs"},
      {{"faults", "--config", base, "--periods", "2"}, tools::kExitUsage, "--periods"},
      {{"faults", "--config", base, "--emit-config", "x.textproto"},
       tools::kExitUsage,
       "--replay-scenario"},
      {{"faults", "--config", base, "--replay-scenario", "0"},
       tools::kExitUsage,
       "--replay-scenario"},
      {{"faults", "--config", base, "--seed", "abc"}, tools::kExitUsage, "--seed"},
      // One scenario by its seed: a campaign's count, seed or jobs would be ignored.
      {{"faults", "--config", base, "--replay-scenario", "5", "--scenarios", "3"},
       tools::kExitUsage,
       "--scenarios excludes --replay-scenario"},
      {{"faults", "--config", base, "--replay-scenario", "5", "--seed", "3"},
       tools::kExitUsage,
       "--seed excludes --replay-scenario"},
      {{"faults", "--config", base, "--replay-scenario", "5", "--jobs", "2"},
       tools::kExitUsage,
       "--jobs excludes --replay-scenario"},
  };
  for (const Case& c : cases) {
    const auto r = ebb(c.args);
    EXPECT_EQ(r.code, c.code) << c.args.back() << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  // --emit-config onto the base config itself (by another name too), into a
  // folder that does not exist, or onto a folder: refused before the run and
  // before --out is touched; the base config is intact.
  const std::string baseText = slurp(base);
  const std::string sameByAnotherName = (dir / "." / "base.textproto").string();
  for (const auto& [emit, says] : std::vector<std::pair<std::string, std::string>>{
           {base, "is the input"},
           {sameByAnotherName, "is the input"},
           {(dir / "nowhere" / "x.textproto").string(), "its folder"},
           {dir.string(), "is a folder"}}) {
    const std::filesystem::path out = dir / "emit_out";
    const auto r = ebb({"faults", "--config", base, "--replay-scenario", "5", "--emit-config", emit,
                        "--out", out.string(), "--quiet"});
    EXPECT_EQ(r.code, tools::kExitUsage) << emit << ": " << r.err;
    EXPECT_NE(r.err.find("--emit-config " + emit + ": " + says), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << emit;
    EXPECT_EQ(slurp(base), baseText);
  }
  // A base config that does not validate: exit 1, naming the field.
  const std::string bad =
      writeBase(dir, "fabric { kary_n_tree { k: 4 n: 2 } } gating { turn_on_cycles: 9000 }");
  const auto r = ebb(
      {"faults", "--config", bad, "--scenarios", "2", "--out", (dir / "out").string(), "--quiet"});
  EXPECT_EQ(r.code, tools::kExitError);
  EXPECT_NE(r.err.find("gating.turn_on_cycles"), std::string::npos) << r.err;
  // Refused before --out is touched: what a previous run wrote there stays,
  // for a bad base and for a fabric with no host pair to keep connected.
  const std::filesystem::path kept = dir / "kept";
  std::filesystem::create_directories(kept);
  std::ofstream(kept / "summary.json") << "{}";
  const std::string oneHost = (dir / "one_host.textproto").string();
  std::ofstream(oneHost) << "fabric { topology_file { path: \"one_host.topo\" } }\n";
  std::ofstream(dir / "one_host.topo")
      << "Switch\t8 \"S-0002c90300000200\"\t# \"leaf-1\" enhanced port 0 lid 6 lmc 0\n"
         "[1]\t\"H-0002c90300001001\"[1](2c90300001002)\t# \"node01 HCA-1\" lid 1 4xHDR\n\n"
         "Ca\t1 \"H-0002c90300001001\"\t# \"node01 HCA-1\"\n"
         "[1](2c90300001002)\t\"S-0002c90300000200\"[1]\t# lid 1 lmc 0 \"leaf-1\" lid 6\n";
  for (const std::string& config : {bad, oneHost}) {
    for (const char* replay : {"", "5"}) {
      std::vector<std::string> args = {"faults", "--config",    config,
                                       "--out",  kept.string(), "--quiet"};
      if (*replay != 0) args.insert(args.end(), {"--replay-scenario", replay});
      const auto refused = ebb(args);
      EXPECT_EQ(refused.code, tools::kExitError) << config << refused.out;
      EXPECT_EQ(slurp(kept / "summary.json"), "{}") << config;
      if (config == oneHost) {
        EXPECT_NE(refused.err.find("fabric: 1 host: a fault campaign needs at least 2"),
                  std::string::npos)
            << refused.err;
      }
    }
  }
  // A base whose scenarios would run for hours (a huge check period sets
  // their length), or with a random fault process the campaign would drop:
  // refused before anything runs, naming the field; a deliberate
  // workload.max_messages raises the budget.
  for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
           {"fabric { kary_n_tree { k: 2 n: 2 } } gating { check_period_cycles: 1000000000 }",
            "more than the limit of 10000000 per scenario"},
           {"fabric { kary_n_tree { k: 2 n: 2 } } faults { random { mtbf_us: 0.5 } }",
            "faults.random: a fault campaign draws each scenario's failures itself"},
           // Events too (even one naming no switch would pass unseen).
           {"fabric { kary_n_tree { k: 2 n: 2 } } faults { event { at_cycles: 100 switch_name: "
            "\"NOPE\" port: 1 } detection_cycles: 500 }",
            "faults.event: a fault campaign draws each scenario's events itself; leave the base "
            "config's 1 event out"}}) {
    const auto refused = ebb({"faults", "--config", writeBase(dir, text), "--scenarios", "2",
                              "--out", (dir / "never").string(), "--quiet"});
    EXPECT_EQ(refused.code, tools::kExitError) << text;
    EXPECT_NE(refused.err.find(says), std::string::npos) << refused.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "never")) << text;
  }
  const std::string raised = writeBase(dir,
                                       "fabric { kary_n_tree { k: 2 n: 2 } } gating { "
                                       "check_period_cycles: 1000000000 } workload { "
                                       "max_messages: 100000000000 }");
  const config::Config rawBase = config::loadConfigFile(raised).value();
  const fabric::Topology small = replay::topologyFromConfig(rawBase.fabric(), "").value();
  EXPECT_TRUE(checkCampaignBase(rawBase, small, 1, {}, "").isOk());
  EXPECT_EQ(makeScenario(rawBase, small, 1).workload().max_messages(), 100'000'000'000u);
  const auto help = ebb({"faults", "--help"});
  EXPECT_EQ(help.code, tools::kExitOk);
  EXPECT_NE(help.out.find("--replay-scenario"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace ebb::campaign
