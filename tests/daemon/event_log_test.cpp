// The daemon's JSON-lines event log: the exact line of each record (the
// format docs/ib_agent.md documents and tests/ib/agent_daemon_test parses),
// string escaping, and one object per line.
#include "daemon/event_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/json.h"

namespace ebb::daemon {
namespace {

agent::DecisionRecord offDecision() {
  agent::DecisionRecord d;
  d.time = 1'500'000'000'000;
  d.port = {fabric::SwitchId(3), 7};
  d.up = true;
  d.turnOn = false;
  d.rule = policies::Rule::kBelowOff;
  d.source = "gating";
  d.measured = 0.01;
  d.threshold = 0.03;
  d.effectiveThreshold = 0.03;
  d.linksOn = 3;
  return d;
}

TEST(EventLog, DecisionLine) {
  EXPECT_EQ(EventLog::decisionLine(offDecision(), "S1_0_3", "disable_port"),
            R"({"time_ps":1500000000000,"switch":3,"switch_name":"S1_0_3","port":8,)"
            R"("direction":"up","action":"off","source":"gating","rule":"u_up<U_off",)"
            R"("measured":0.010000,"threshold":0.030000,"effective_threshold":0.030000,)"
            R"("links_on":3,"refused":"","gating_action":"disable_port"})");
}

TEST(EventLog, PortSetLines) {
  ib::PortSetEvent disable;
  disable.port = {fabric::SwitchId(3), 7};
  disable.phys = ib::PhysState::kDisabled;
  EXPECT_EQ(EventLog::portSetLine(2000, disable, "S1_0_3"),
            R"({"time_ps":2000,"event":"port_set","switch":3,"switch_name":"S1_0_3","port":8,)"
            R"("action":"disable_port","phys_state":"Disabled"})");
  ib::PortSetEvent enable = disable;
  enable.phys = ib::PhysState::kPolling;
  EXPECT_EQ(EventLog::portSetLine(2000, enable, "S1_0_3"),
            R"({"time_ps":2000,"event":"port_set","switch":3,"switch_name":"S1_0_3","port":8,)"
            R"("action":"enable_port","phys_state":"Polling"})");
  ib::PortSetEvent reduce;
  reduce.port = {fabric::SwitchId(0), 0};
  reduce.widthEnabled = 1;
  reduce.widthBefore = 3;
  EXPECT_EQ(EventLog::portSetLine(9, reduce, "S0"),
            R"({"time_ps":9,"event":"port_set","switch":0,"switch_name":"S0","port":1,)"
            R"("action":"reduce_width","link_width_enabled":1,"link_width_enabled_before":3,)"
            R"("width":"1x","width_before":"1x|4x"})");
  std::swap(reduce.widthEnabled, reduce.widthBefore);
  EXPECT_NE(EventLog::portSetLine(9, reduce, "S0").find(R"("action":"restore_width")"),
            std::string::npos);
}

TEST(EventLog, OsmEventAndRereadLines) {
  OsmEvent ev;
  ev.event = "trap";
  ev.trap = 128;
  ev.lid = 64;
  ev.seq = 5;
  EXPECT_EQ(EventLog::osmEventLine(11, ev, {"S2_0_0", "S2_0_1"}),
            R"({"time_ps":11,"event":"osm_event","osm_event":"trap","trap":128,"lid":64,)"
            R"("seq":5,"reread":["S2_0_0","S2_0_1"]})");
  ev = OsmEvent{};
  ev.event = "heavy_sweep_done";
  ev.seq = 6;
  EXPECT_EQ(EventLog::osmEventLine(12, ev, {}),
            R"({"time_ps":12,"event":"osm_event","osm_event":"heavy_sweep_done","trap":-1,)"
            R"("lid":0,"seq":6,"reread":[]})");

  const std::vector<ib::PortChange> changes = {{{fabric::SwitchId(4), 7}, "Polling"},
                                               {{fabric::SwitchId(4), 8}, "LinkUp"}};
  EXPECT_EQ(
      EventLog::portRereadLine(13, fabric::SwitchId(4), "S2_0_0", "trap 128", 3.7444, changes),
      R"({"time_ps":13,"event":"port_reread","switch":4,"switch_name":"S2_0_0",)"
      R"("cause":"trap 128","since_reported_ms":3.744,"changes":[{"port":8,)"
      R"("state":"Polling"},{"port":9,"state":"LinkUp"}]})");
  EXPECT_EQ(
      EventLog::portRereadLine(13, fabric::SwitchId(4), "S2_0_0", "heavy_sweep_done", -1.0, {}),
      R"({"time_ps":13,"event":"port_reread","switch":4,"switch_name":"S2_0_0",)"
      R"("cause":"heavy_sweep_done","since_reported_ms":-1.000,"changes":[]})");
}

// Names and texts come from files and the network: quotes, backslashes and
// control bytes are escaped in every string field.
TEST(EventLog, EscapesEveryString) {
  const std::string nasty = "a\"b\\c\x01\n\td";
  const std::string escaped = R"(a\"b\\c\u0001\u000a\u0009d)";
  EXPECT_EQ(jsonEscape(nasty), escaped);
  EXPECT_EQ(jsonQuote(nasty), '"' + escaped + '"');
  EXPECT_EQ(jsonEscape("plain S1_0_3 [8] µs"), "plain S1_0_3 [8] µs");

  agent::DecisionRecord d = offDecision();
  d.refused = nasty;
  EXPECT_NE(EventLog::decisionLine(d, nasty, "disable_port")
                .find(R"("switch_name":")" + escaped + R"(","port":8)"),
            std::string::npos);
  EXPECT_NE(EventLog::decisionLine(d, nasty, "disable_port").find(R"("refused":")" + escaped),
            std::string::npos);
  ib::PortSetEvent set;
  set.phys = ib::PhysState::kDisabled;
  EXPECT_NE(EventLog::portSetLine(1, set, nasty).find(R"("switch_name":")" + escaped + '"'),
            std::string::npos);
  OsmEvent ev;
  ev.event = nasty;
  EXPECT_NE(EventLog::osmEventLine(1, ev, {nasty}).find(R"("osm_event":")" + escaped + '"'),
            std::string::npos);
  EXPECT_NE(EventLog::osmEventLine(1, ev, {nasty}).find(R"("reread":[")" + escaped + R"("])"),
            std::string::npos);
  const std::string reread = EventLog::portRereadLine(1, fabric::SwitchId(0), nasty, nasty, 0,
                                                      {{{fabric::SwitchId(0), 0}, nasty}});
  EXPECT_NE(reread.find(R"("switch_name":")" + escaped + '"'), std::string::npos);
  EXPECT_NE(reread.find(R"("cause":")" + escaped + '"'), std::string::npos);
  EXPECT_NE(reread.find(R"("state":")" + escaped + '"'), std::string::npos);
}

TEST(EventLog, WritesOneObjectPerLine) {
  std::ostringstream out;
  EventLog log(out);
  ASSERT_TRUE(log.enabled());
  const std::string nasty = "x\ny\"z";
  agent::DecisionRecord d = offDecision();
  d.refused = nasty;
  log.decision(d, nasty, "reduce_width");
  ib::PortSetEvent set;
  set.phys = ib::PhysState::kPolling;
  log.portSet(2, set, nasty);
  OsmEvent ev;
  ev.event = nasty;
  log.osmEvent(3, ev, {nasty});
  log.portReread(4, fabric::SwitchId(1), nasty, nasty, 1.5, {{{fabric::SwitchId(1), 2}, nasty}});

  std::istringstream in(out.str());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u) << out.str();
  EXPECT_EQ(out.str().back(), '\n');
  const char* events[] = {nullptr, "port_set", "osm_event", "port_reread"};
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].front(), '{') << lines[i];
    EXPECT_EQ(lines[i].back(), '}') << lines[i];
    for (char c : lines[i])
      EXPECT_GE(static_cast<unsigned char>(c), 0x20) << "a raw control byte in " << lines[i];
    if (events[i] != nullptr) {
      EXPECT_NE(lines[i].find(std::string(R"("event":")") + events[i] + '"'), std::string::npos)
          << lines[i];
    }
  }
  EXPECT_EQ(lines[0], EventLog::decisionLine(d, nasty, "reduce_width"));
}

TEST(EventLog, OffWritesNothingAndAnUnwritableFileIsAnError) {
  EventLog off;
  EXPECT_FALSE(off.enabled());
  off.decision(offDecision(), "S", "disable_port");  // no stream: nothing happens

  EventLog log;
  const std::string path = "/nonexistent-ebb-dir/decisions.jsonl";
  const Status st = log.open(path);
  EXPECT_EQ(st.code(), ErrorCode::kIo);
  EXPECT_NE(st.message().find(path), std::string::npos) << st.toString();
  EXPECT_FALSE(log.enabled());
}

TEST(EventLog, AppendsToAFile) {
  const std::filesystem::path path =
      std::filesystem::path(EBB_BINARY_DIR) / "tests" / "daemon" / "event_log_test.jsonl";
  std::filesystem::remove(path);
  for (int run = 0; run < 2; ++run) {
    EventLog log;
    ASSERT_TRUE(log.open(path.string()).isOk());
    log.decision(offDecision(), "S1_0_3", "disable_port");
  }
  std::ifstream in(path);
  std::string a, b, c;
  ASSERT_TRUE(std::getline(in, a));
  ASSERT_TRUE(std::getline(in, b));
  EXPECT_FALSE(std::getline(in, c));
  EXPECT_EQ(a, EventLog::decisionLine(offDecision(), "S1_0_3", "disable_port"));
  EXPECT_EQ(a, b);
  std::filesystem::remove(path);
}

// A recovery ends complete, timed out or superseded (turned off again, or a
// later re-homing took over): three events, the links up or not up.
TEST(EventLog, RecoveryOutcomes) {
  const std::filesystem::path path =
      std::filesystem::path(EBB_BINARY_DIR) / "tests" / "daemon" / "event_log_recovery.jsonl";
  std::filesystem::remove(path);
  {
    EventLog log;
    ASSERT_TRUE(log.open(path.string()).isOk());
    log.recovery(1, "A down", RecoveryOutcome::kComplete, 2.5, {"L1"});
    log.recovery(2, "B down", RecoveryOutcome::kTimedOut, 3000, {"L2"});
    log.recovery(3, "C down", RecoveryOutcome::kSuperseded, 3000, {"L3"});
  }
  std::ifstream in(path);
  std::string a, b, c;
  ASSERT_TRUE(std::getline(in, a) && std::getline(in, b) && std::getline(in, c));
  EXPECT_EQ(a, R"({"time_ps":1,"event":"recovered","cause":"A down","after_ms":2.500,)"
               R"("links":["L1"]})");
  EXPECT_EQ(b, R"({"time_ps":2,"event":"recovery_incomplete","cause":"B down",)"
               R"("after_ms":3000.000,"not_up":["L2"]})");
  EXPECT_EQ(c, R"({"time_ps":3,"event":"recovery_superseded","cause":"C down",)"
               R"("after_ms":3000.000,"not_up":["L3"]})");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace ebb::daemon
