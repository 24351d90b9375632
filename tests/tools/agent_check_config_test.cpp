// `ebb agent --check-config`: every check the agent makes before it opens
// the umad port, and what it would run with, without touching a fabric (no
// umad port here: the test would fail if the command opened one).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "fabric/kary_tree.h"
#include "tests/tools/cli_run.h"

namespace ebb::tools {
namespace {

std::string writeAgentConfig(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ebb-check-config-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

std::string firstSwitchGuid() {
  const fabric::Topology t = fabric::KAryNTree::make(4, 3).value().build();
  return fmt::format("0x{:016x}", t.switches().front().guid);
}

TEST(AgentCheckConfig, NothingAllowListedIsReadOnly) {
  const std::string cfg = writeAgentConfig(
      "ro.textproto", "fabric { kary_n_tree { k: 4 n: 3 } } agent { check_period_ms: 500 }");
  const testing::CliRun r = testing::ebb({"agent", "--check-config", "--config", cfg});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("config OK"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fabric:        48 switches"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("allow-listed:  0 switches"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mode:          read-only"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("check period 500 ms"), std::string::npos) << r.out;
}

TEST(AgentCheckConfig, AllowListedIsActiveAndDryRunSaysSo) {
  const std::string cfg =
      writeAgentConfig("active.textproto", fmt::format("fabric {{ kary_n_tree {{ k: 4 n: 3 }} }} "
                                                       "agent {{ allow_switches: \"{}\" }}",
                                                       firstSwitchGuid()));
  testing::CliRun r = testing::ebb({"agent", "--check-config", "--config", cfg});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  // Named, with its GUID: a mistyped GUID that names another switch shows.
  EXPECT_NE(r.out.find(fmt::format("allow-listed:  1 switch: S0_0_0 ({})", firstSwitchGuid())),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("mode:          active"), std::string::npos) << r.out;
  r = testing::ebb(
      {"agent", "--check-config", "--config", cfg, "--dry-run", "agent.metrics_listen=off"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("mode:          dry run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("metrics:       off"), std::string::npos) << r.out;
}

// Sections only the emulator reads are refused, not passed as "config OK".
TEST(AgentCheckConfig, EmulatorOnlySectionsAreRefused) {
  for (const char* section : {"emulator { vcs: 0 }", "workload { uniform { rate: 5 } }",
                              "faults { random { mtbf_us: 1 } }", "report { skip_plots: true }"}) {
    const std::string cfg = writeAgentConfig(
        "emu_only.textproto", std::string("fabric { kary_n_tree { k: 4 n: 3 } } ") + section);
    const testing::CliRun r = testing::ebb({"agent", "--check-config", "--config", cfg});
    EXPECT_EQ(r.code, kExitError) << section << ": " << r.out;
    EXPECT_NE(r.err.find("does not apply to `ebb agent`"), std::string::npos) << r.err;
  }
}

// A negative duration is refused with the rule, not a range of 300 digits.
TEST(AgentCheckConfig, ANegativeRunForIsRefusedPlainly) {
  const testing::CliRun r = testing::ebb({"agent", "--run-for-ms", "-1"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--run-for-ms: must be a whole number >= 0 (is -1)"), std::string::npos)
      << r.err;
  EXPECT_LT(r.err.size(), 300u) << r.err;
}

TEST(AgentCheckConfig, ASwitchNotInTheTopologyIsAnErrorNamingTheField) {
  const std::string cfg = writeAgentConfig("bad.textproto",
                                           "fabric { kary_n_tree { k: 4 n: 3 } } "
                                           "agent { allow_switches: \"0x00000000deadbeef\" }");
  const testing::CliRun r = testing::ebb({"agent", "--check-config", "--config", cfg});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("agent.allow_switches[0]"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("config OK"), std::string::npos) << r.out;
}

// What the agent refused only after it started (the metrics address, a
// folder as the decision log, a CA port --port refuses) fails the check.
TEST(AgentCheckConfig, WhatStartupWouldRefuseIsRefusedByTheCheck) {
  const std::pair<const char*, const char*> cases[] = {
      {"metrics_listen: \"nonsense\"", "agent.metrics_listen: 'nonsense': expected host:port"},
      {"metrics_listen: \"1.2.3.4:99999\"", "the port must be 0..65535"},
      {"decision_log: \"/tmp\"", "agent.decision_log: /tmp is a folder"},
      {"ca_port: 300", "agent.ca_port: must be in 0..254 (is 300)"},
  };
  for (const auto& [field, expect] : cases) {
    const std::string cfg = writeAgentConfig(
        "late.textproto",
        fmt::format("fabric {{ kary_n_tree {{ k: 4 n: 3 }} }} agent {{ {} }}", field));
    const testing::CliRun r = testing::ebb({"agent", "--check-config", "--config", cfg});
    EXPECT_EQ(r.code, kExitError) << field;
    EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("config OK"), std::string::npos) << r.out;
  }
}

TEST(AgentCheckConfig, AMissingTopologyFileIsNamed) {
  const std::string cfg = writeAgentConfig(
      "nofile.textproto", "fabric { topology_file { path: \"no-such-fabric.txt\" } }");
  const testing::CliRun r = testing::ebb({"agent", "--check-config", "--config", cfg});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("no-such-fabric.txt"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ebb::tools
