// `ebb agent` settings: every bad field is refused, by name, before the
// fabric is touched; defaults and read-only mode as documented.
#include <fmt/format.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "configs/config_loader.h"
#include "daemon/daemon_settings.h"
#include "fabric/kary_tree.h"

namespace ebb::daemon {
namespace {

const fabric::Topology& tree() {
  static const fabric::Topology t = fabric::KAryNTree::make(4, 3).value().build();
  return t;
}

Result<DaemonSettings> settings(const std::string& text) {
  config::Config cfg;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &cfg)) << text;
  return buildDaemonSettings(cfg, "/tmp", tree());  // a folder that exists
}

std::string guid(std::size_t sw) {
  return fmt::format("0x{:016x}", tree().sw(fabric::SwitchId(static_cast<std::uint32_t>(sw))).guid);
}

// GUIDs are hexadecimal as InfiniBand tools print them, with or without 0x:
// "0000000000000010" is 0x10 (ibnetdiscover's ids), never octal 8.
TEST(AgentSettings, GuidsAreHexWithOrWithoutTheirPrefix) {
  const std::string bare = guid(5).substr(2);
  ASSERT_EQ(bare.size(), 16u);
  for (const std::string& g : {guid(5), bare, "0X" + bare}) {
    auto s =
        settings(fmt::format("agent {{ allow_switches: \"{}\" m_key: \"0000000000000010\" }}", g));
    ASSERT_TRUE(s) << g << ": " << s.status().toString();
    ASSERT_EQ(s->managed.size(), 1u) << g;
    EXPECT_EQ(s->managed[0].value(), 5u) << g;
    EXPECT_EQ(s->backend.mKey, 0x10u);
  }
}

TEST(AgentSettings, DefaultsAndAllowList) {
  auto s = settings(
      fmt::format("agent {{ allow_switches: \"{}\" allow_switches: \"{}\" allow_switches: \"{}\" "
                  "decision_log: \"d.jsonl\" }}",
                  guid(5), guid(2), guid(5)));
  ASSERT_TRUE(s) << s.status().toString();
  EXPECT_FALSE(s->readOnly);
  EXPECT_FALSE(s->backend.dryRun);
  ASSERT_EQ(s->managed.size(), 2u);  // the duplicate counts once, sorted
  EXPECT_EQ(s->managed[0].value(), 2u);
  EXPECT_EQ(s->managed[1].value(), 5u);
  EXPECT_EQ(s->agent.checkPeriodPs, 1'000'000'000'000);
  EXPECT_EQ(s->transport.maxOutstanding, 16);
  EXPECT_EQ(s->transport.retries, 2);
  EXPECT_EQ(s->transport.timeoutPs, 200'000'000'000);
  EXPECT_EQ(s->metricsListen, "127.0.0.1:9464");
  EXPECT_EQ(s->decisionLog, "/tmp/d.jsonl");
  EXPECT_EQ(s->backend.lostContactPs, 5'000'000'000'000);
  EXPECT_EQ(s->backend.restoreTimeoutPs, 30'000'000'000'000);
  EXPECT_EQ(s->agent.resumeAfterFailSafePs, 0);       // a failed-safe agent stays so
  EXPECT_EQ(s->agent.rateLimits.maxOffPerWindow, 0);  // left out: no rate limit
}

// Anti-flap: on by default (3 turn-offs in 10 minutes, held 10 minutes), off
// with an explicit 0, and bad values named.
TEST(AgentSettings, FlapDampingDefaultsOverridesAndErrors) {
  auto d = settings("agent { }");
  ASSERT_TRUE(d) << d.status().toString();
  EXPECT_EQ(d->agent.rateLimits.flap.limit, 3);
  EXPECT_EQ(d->agent.rateLimits.flap.windowPs, milliseconds(600'000));
  EXPECT_EQ(d->agent.rateLimits.flap.holdPs, milliseconds(600'000));
  auto off = settings("agent { flap_limit: 0 }");
  ASSERT_TRUE(off) << off.status().toString();
  EXPECT_EQ(off->agent.rateLimits.flap.limit, 0);
  auto set = settings("agent { flap_limit: 5 flap_window_ms: 2000 flap_hold_ms: 500 }");
  ASSERT_TRUE(set) << set.status().toString();
  EXPECT_EQ(set->agent.rateLimits.flap.limit, 5);
  EXPECT_EQ(set->agent.rateLimits.flap.windowPs, milliseconds(2000));
  EXPECT_EQ(set->agent.rateLimits.flap.holdPs, milliseconds(500));
  EXPECT_NE(settings("agent { flap_limit: -1 }").status().message().find("agent.flap_limit"),
            std::string::npos);
  EXPECT_NE(settings("agent { flap_window_ms: 0 }").status().message().find("agent.flap_window_ms"),
            std::string::npos);
  EXPECT_NE(settings("agent { flap_hold_ms: -4 }").status().message().find("agent.flap_hold_ms"),
            std::string::npos);
}

TEST(AgentSettings, NothingAllowListedIsReadOnlyOverEverySwitch) {
  auto s = settings("agent { metrics_listen: \"off\" }");
  ASSERT_TRUE(s) << s.status().toString();
  EXPECT_TRUE(s->readOnly);
  EXPECT_TRUE(s->backend.dryRun);
  EXPECT_EQ(s->managed.size(), tree().numSwitches());
  EXPECT_TRUE(s->backend.allowGuids.empty());
  EXPECT_TRUE(s->metricsListen.empty());
}

TEST(AgentSettings, AnExplicitZeroRetryCountIsKept) {
  auto none = settings("agent { mad_retries: 0 }");
  ASSERT_TRUE(none) << none.status().toString();
  EXPECT_EQ(none->transport.retries, 0);
  auto unset = settings("");
  ASSERT_TRUE(unset) << unset.status().toString();
  EXPECT_EQ(unset->transport.retries, 2);
}

// The congestion trigger makes the backend read PortXmitWait; its tick is
// the IBA's unless given, and a bad tick is named.
TEST(AgentSettings, WaitTriggerReadsPortXmitWait) {
  auto off = settings("agent { }");
  ASSERT_TRUE(off) << off.status().toString();
  EXPECT_FALSE(off->backend.readXmitWait);
  EXPECT_EQ(off->backend.xmitWaitTickPs, 0);
  auto on = settings("agent { xmit_wait_tick_ns: 2.5 } gating { policy: DYNAMIC wait_on: 0.1 }");
  ASSERT_TRUE(on) << on.status().toString();
  EXPECT_TRUE(on->backend.readXmitWait);
  EXPECT_EQ(on->backend.xmitWaitTickPs, 2500);
  auto allOn = settings("gating { policy: ALL_ON wait_on: 0.1 }");
  ASSERT_TRUE(allOn) << allOn.status().toString();
  EXPECT_FALSE(allOn->backend.readXmitWait) << "nothing gated: nothing to read it for";
  for (const char* bad : {"agent { xmit_wait_tick_ns: 0 }", "agent { xmit_wait_tick_ns: nan }",
                          "agent { xmit_wait_tick_ns: 1e-300 }"}) {
    auto r = settings(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.status().message().find("agent.xmit_wait_tick_ns"), std::string::npos)
        << r.status().message();
  }
}

TEST(AgentSettings, OverridesTakeEffect) {
  auto s = settings(
      "agent { check_period_ms: 250 max_off_per_window: 3 rate_window_ms: 2000 min_dwell_ms: 900 "
      "mad_timeout_ms: 50 mad_retries: 4 max_outstanding: 8 m_key: \"0x10\" lost_contact_ms: 700 "
      "restore_timeout_ms: 1200 dry_run: true keep_state_on_exit: true run_for_ms: 3000 "
      "resume_after_fail_safe_ms: 60000 } "
      "gating { policy: STATIC u_off: 0.03 u_on: 0.15 }");
  ASSERT_TRUE(s) << s.status().toString();
  EXPECT_EQ(s->agent.checkPeriodPs, 250'000'000'000);
  EXPECT_EQ(s->agent.rateLimits.maxOffPerWindow, 3);
  EXPECT_EQ(s->agent.rateLimits.windowPs, 2'000'000'000'000);
  EXPECT_EQ(s->agent.rateLimits.minDwellPs, 900'000'000'000);
  EXPECT_EQ(s->transport.timeoutPs, 50'000'000'000);
  EXPECT_EQ(s->transport.retries, 4);
  EXPECT_EQ(s->transport.maxOutstanding, 8);
  EXPECT_EQ(s->backend.mKey, 0x10u);
  EXPECT_EQ(s->backend.lostContactPs, 700'000'000'000);
  EXPECT_EQ(s->backend.restoreTimeoutPs, 1'200'000'000'000);
  EXPECT_TRUE(s->backend.dryRun);
  EXPECT_TRUE(s->keepStateOnExit);
  EXPECT_EQ(s->runForPs, 3'000'000'000'000);
  EXPECT_EQ(s->agent.resumeAfterFailSafePs, 60'000'000'000'000);
  EXPECT_NE(s->policyName.find("static"), std::string::npos);
}

// The folders the ebb-agent service has systemd make at each start may be
// missing before it (a check at install time); any other missing folder is
// refused (AgentSettingsBad).
TEST(AgentSettings, TheServicesFoldersMayNotExistYet) {
  auto s = settings(
      "agent { decision_log: \"/var/log/ebb/decisions.jsonl\" osm_events: "
      "\"/run/ebb/osm-events.sock\" lock_file: \"/run/ebb/agent.lock\" state_file: "
      "\"/var/lib/ebb/agent.gates\" }");
  ASSERT_TRUE(s) << s.status().toString();
  EXPECT_EQ(s->decisionLog, "/var/log/ebb/decisions.jsonl");
  EXPECT_EQ(s->stateFile, "/var/lib/ebb/agent.gates");
}

TEST(AgentSettings, ShippedExampleIsValidAndReadOnly) {
  auto cfg =
      config::loadConfigFile(std::string(EBB_SOURCE_DIR) + "/configs/agent_ibsim_4x3.textproto");
  ASSERT_TRUE(cfg) << cfg.status().toString();
  auto s = buildDaemonSettings(*cfg, EBB_SOURCE_DIR, tree());
  ASSERT_TRUE(s) << s.status().toString();
  EXPECT_TRUE(s->readOnly);
  EXPECT_EQ(s->agent.checkPeriodPs, 200'000'000'000);
}

struct Bad {
  std::string text;
  std::string mustSay;
};

class AgentSettingsBad : public ::testing::TestWithParam<Bad> {};

TEST_P(AgentSettingsBad, IsRefusedNamingTheFieldAndRule) {
  auto s = settings(GetParam().text);
  ASSERT_FALSE(s) << GetParam().text;
  EXPECT_NE(s.status().message().find(GetParam().mustSay), std::string::npos)
      << s.status().toString();
}

// The agent's files are told apart as files, not as spellings: a relative
// path (a config given by a relative path) and the absolute one, or a
// symbolic link to a file not made yet, are the same file.
TEST(AgentSettings, TheSameFileByAnotherSpellingIsRefused) {
  namespace fs = std::filesystem;
  config::Config cfg;
  const std::string abs = (fs::current_path() / "ebb-settings-same.jsonl").string();
  cfg.mutable_agent()->set_decision_log(abs);
  cfg.mutable_agent()->set_state_file("ebb-settings-same.jsonl");
  Result<DaemonSettings> r = buildDaemonSettings(cfg, "", tree());
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("agent.state_file: ebb-settings-same.jsonl is also "
                                      "agent.decision_log"),
            std::string::npos)
      << r.status().toString();
  const fs::path dir = fs::temp_directory_path() / "ebb-settings-link";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::create_symlink("target.log", dir / "link.log");  // dangling: target.log not made yet
  cfg.mutable_agent()->set_decision_log((dir / "target.log").string());
  cfg.mutable_agent()->set_state_file((dir / "link.log").string());
  r = buildDaemonSettings(cfg, "", tree());
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("is also agent.decision_log"), std::string::npos)
      << r.status().toString();
  cfg.mutable_agent()->set_state_file((dir / "other.gates").string());
  EXPECT_TRUE(buildDaemonSettings(cfg, "", tree())) << "distinct files are fine";
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    All, AgentSettingsBad,
    ::testing::Values(
        Bad{"agent { allow_switches: \"0x00000000deadbeef\" }",
            "agent.allow_switches[0]: 0x00000000deadbeef is not a switch of the topology"},
        Bad{"agent { allow_switches: \"banana\" }", "agent.allow_switches[0]"},
        Bad{"agent { check_period_ms: -5 }", "check_period_ms"},
        Bad{"agent { min_dwell_ms: -1 }", "min_dwell_ms"},
        Bad{"agent { mad_timeout_ms: -1 }", "mad_timeout_ms"},
        Bad{"agent { max_outstanding: -2 }", "max_outstanding"},
        Bad{"agent { lost_contact_ms: -2 }", "lost_contact_ms"},
        Bad{"agent { restore_timeout_ms: -2 }", "restore_timeout_ms"},
        Bad{"agent { resume_after_fail_safe_ms: -1 }",
            "agent.resume_after_fail_safe_ms: must be >= 0 (is -1)"},
        Bad{"agent { resume_after_fail_safe_ms: 86400001 }",
            "agent.resume_after_fail_safe_ms: must be <= 86400000"},
        Bad{"agent { m_key: \"0xZZ\" }", "agent.m_key"},
        // A GUID is hex, never signed, spaced or longer than 64 bits.
        Bad{"agent { m_key: \"-1\" }", "agent.m_key: '-1' is not a GUID"},
        Bad{"agent { m_key: \"+0x10\" }", "agent.m_key: '+0x10' is not a GUID"},
        Bad{"agent { m_key: \" 0x10\" }", "agent.m_key: ' 0x10' is not a GUID"},
        Bad{"agent { m_key: \"0x00000000000000010\" }", "is not a GUID: 1 to 16 hexadecimal"},
        Bad{"agent { allow_switches: \"0x\" }", "agent.allow_switches[0]: '0x' is not a GUID"},
        Bad{"lpi { mode: DEEP_SLEEP }", "lpi.mode: InfiniBand has no low-power idle"},
        Bad{"gating { policy: STATIC u_off: 0.1 u_on: 0.15 }", "U_on > 2"},
        // An explicit zero is a value: refused where the rule is > 0.
        Bad{"agent { check_period_ms: 0 }", "agent.check_period_ms: must be > 0 (is 0)"},
        Bad{"agent { mad_timeout_ms: 0 }", "agent.mad_timeout_ms: must be > 0 (is 0)"},
        Bad{"agent { max_outstanding: 0 }", "agent.max_outstanding: must be > 0 (is 0)"},
        Bad{"agent { link_poll_ms: 0 }", "agent.link_poll_ms: must be > 0 (is 0)"},
        Bad{"agent { rate_window_ms: 0 }", "agent.rate_window_ms: must be > 0 (is 0)"},
        Bad{"agent { lost_contact_ms: 0 }", "agent.lost_contact_ms: must be > 0 (is 0)"},
        Bad{"agent { restore_timeout_ms: 0 }", "agent.restore_timeout_ms: must be > 0 (is 0)"},
        // Unset is "no limit"; 0 is not a spelling of it.
        Bad{"agent { max_off_per_window: 0 }",
            "agent.max_off_per_window: must be > 0 (is 0); leave it out for no limit"},
        Bad{"agent { max_off_per_window: -3 }",
            "agent.max_off_per_window: must be > 0 (is -3); leave it out for no limit"},
        // Milliseconds past the time range never wrap.
        Bad{"agent { check_period_ms: 9223372036854775 }",
            "agent.check_period_ms: 9223372036854775 ms is beyond the time range"},
        Bad{"agent { run_for_ms: 9223372036854775807 }", "agent.run_for_ms"},
        Bad{"agent { flap_hold_ms: 9223372036854775807 }", "agent.flap_hold_ms"},
        Bad{"gating { policy: DYNAMIC u_off: 0.05 }", "gating.u_off: applies to the STATIC"},
        // The emulator's gating timing: refused, never silently dropped.
        Bad{"gating { check_period_cycles: 0 }",
            "gating.check_period_cycles: applies to the emulator only (ebb replay, tune and "
            "faults); the agent's period is agent.check_period_ms"},
        Bad{"gating { turn_on_cycles: -5 }", "gating.turn_on_cycles: applies to the emulator"},
        Bad{"gating { turn_off_cycles: 10 }", "gating.turn_off_cycles: applies to the emulator"},
        Bad{"gating { control_latency_cycles: 100 }", "gating.control_latency_cycles: applies"},
        Bad{"gating { in_band { enabled: true management_switch: \"NOPE\" } }",
            "gating.in_band: applies to the emulator only"},
        Bad{"gating { start: FROM_ALL_ON }", "gating.start: applies to the emulator only"},
        Bad{"gating { max_check_periods: 3 }", "gating.max_check_periods: applies"},
        // What the agent would refuse only once started: refused up front.
        Bad{"agent { metrics_listen: \"nonsense\" }",
            "agent.metrics_listen: 'nonsense': expected host:port, e.g. 127.0.0.1:9464"},
        Bad{"agent { metrics_listen: \"1.2.3.4:99999\" }",
            "agent.metrics_listen: '1.2.3.4:99999': the port must be 0..65535"},
        Bad{"agent { metrics_listen: \"host:80\" }", "'host' is not an IP address"},
        Bad{"agent { decision_log: \"/tmp\" }",
            "agent.decision_log: /tmp is a folder, expected a file in a folder"},
        Bad{"agent { lock_file: \"/tmp\" }", "agent.lock_file: /tmp is a folder"},
        Bad{"agent { decision_log: \"/etc/hostname/d.jsonl\" }",
            "agent.decision_log: /etc/hostname is not a folder"},
        // ebb creates the file, never its folder: a missing folder would
        // stop it only after it read the fabric.
        Bad{"agent { decision_log: \"/nonexistent-ebb-folder/d.jsonl\" }",
            "agent.decision_log: the folder /nonexistent-ebb-folder does not exist, so "
            "/nonexistent-ebb-folder/d.jsonl cannot be made in it"},
        Bad{"agent { osm_events: \"/nonexistent-ebb-folder/osm.sock\" }",
            "agent.osm_events: the folder /nonexistent-ebb-folder does not exist"},
        Bad{"agent { state_file: \"/nonexistent-ebb-folder/agent.gates\" }",
            "agent.state_file: the folder /nonexistent-ebb-folder does not exist"},
        // Two files on one path would overwrite each other.
        Bad{"agent { lock_file: \"/tmp/x.gates\" state_file: \"/tmp/./x.gates\" }",
            "agent.state_file: /tmp/./x.gates is also agent.lock_file; each needs a file of its "
            "own"},
        Bad{"agent { decision_log: \"/tmp/d\" osm_events: \"/tmp/d\" }",
            "agent.osm_events: /tmp/d is also agent.decision_log"},
        Bad{"agent { ca_port: 300 }", "agent.ca_port: must be in 0..254 (is 300)"}),
    [](const ::testing::TestParamInfo<Bad>& tpi) { return std::to_string(tpi.index); });

}  // namespace
}  // namespace ebb::daemon
