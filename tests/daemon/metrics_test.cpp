// The Prometheus text of `ebb agent`: fixed numbers in, the exact exposition
// text out (names, HELP/TYPE lines, label order and escaping, number formats).
#include "daemon/metrics.h"

#include <gtest/gtest.h>

namespace ebb::daemon {
namespace {

DaemonMetrics fixedMetrics() {
  DaemonMetrics m;
  m.linksByLevel[1] = {6, 2};
  m.linksByLevel[2] = {8, 0};
  m.linkPowerRelative = 0.875;
  m.gatingAction = "reduce_width";
  m.linksReducedWidth = 2;
  m.decisions[{"gating", false, false, "reduce_width"}] = 4;
  m.decisions[{"gating", true, false, "reduce_width"}] = 1;
  m.decisions[{"down-link-rule", false, true, "reduce_width"}] = 3;
  m.madsSent = 1200;
  m.madsFailed = 3;
  m.madsTimeouts = 5;
  m.madsMalformed = 0;
  m.madsOutstanding = 2;
  m.madsQueued = 1;
  m.portSets = 6;
  m.portSetsSuppressed = 0;
  m.periodSeconds = 0.0125;
  m.agents = 12;
  m.agentsFailedSafe = 3;  // fail-safes so far, of which 2 resumed: 1 failed safe now
  m.agentsResumed = 2;
  m.smpReroutes = 7;
  m.countersHeld = 0;
  m.widthSetsReduce = 4;
  m.widthSetsRestore = 2;
  m.rehomings = 2;
  m.linksRestored = 5;
  m.recoveries = 2;
  m.recoveriesIncomplete = 1;
  m.recoveriesSuperseded = 4;
  m.lastRecoverySeconds = 0.25;
  m.flapHolds = 1;
  m.subnetManagerMaster = true;
  m.reenablesPending = 2;
  m.reenablesDelivered = 3;
  m.switchesOutOfReach = 1;
  m.reprobes = 4;
  m.reprobeRepairs = 1;
  m.linksHeldOn = 1;
  return m;
}

const char* const kFixedText =
    "# HELP ebb_links Switch-to-switch links by the level of their upper switch and state.\n"
    "# TYPE ebb_links gauge\n"
    "ebb_links{level=\"1\",state=\"on\"} 6\n"
    "ebb_links{level=\"1\",state=\"off\"} 2\n"
    "ebb_links{level=\"2\",state=\"on\"} 8\n"
    "ebb_links{level=\"2\",state=\"off\"} 0\n"
    "# HELP ebb_link_power_relative Estimated switch-link power relative to all links on.\n"
    "# TYPE ebb_link_power_relative gauge\n"
    "ebb_link_power_relative 0.875000\n"
    "# HELP ebb_gating_action How links are gated (disable_port or reduce_width).\n"
    "# TYPE ebb_gating_action gauge\n"
    "ebb_gating_action{action=\"reduce_width\"} 1\n"
    "# HELP ebb_links_reduced_width Switch links at reduced width (LinkWidthEnabled).\n"
    "# TYPE ebb_links_reduced_width gauge\n"
    "ebb_links_reduced_width 2\n"
    "# HELP ebb_decisions_total Gating decisions by source, action and outcome.\n"
    "# TYPE ebb_decisions_total counter\n"
    "ebb_decisions_total{source=\"down-link-rule\",action=\"off\",refused=\"yes\","
    "gating_action=\"reduce_width\"} 3\n"
    "ebb_decisions_total{source=\"gating\",action=\"off\",refused=\"no\","
    "gating_action=\"reduce_width\"} 4\n"
    "ebb_decisions_total{source=\"gating\",action=\"on\",refused=\"no\","
    "gating_action=\"reduce_width\"} 1\n"
    "# TYPE ebb_mads_sent_total counter\n"
    "ebb_mads_sent_total 1200\n"
    "# TYPE ebb_mads_failed_total counter\n"
    "ebb_mads_failed_total 3\n"
    "# TYPE ebb_mads_timeouts_total counter\n"
    "ebb_mads_timeouts_total 5\n"
    "# TYPE ebb_mads_malformed_total counter\n"
    "ebb_mads_malformed_total 0\n"
    "# TYPE ebb_mads_outstanding gauge\n"
    "ebb_mads_outstanding 2\n"
    "# TYPE ebb_mads_queued gauge\n"
    "ebb_mads_queued 1\n"
    "# TYPE ebb_port_sets_total counter\n"
    "ebb_port_sets_total 6\n"
    "# HELP ebb_port_sets_suppressed_total Sets a dry run decided but did not send.\n"
    "# TYPE ebb_port_sets_suppressed_total counter\n"
    "ebb_port_sets_suppressed_total 0\n"
    "# HELP ebb_period_seconds Time of the last counter read of one switch.\n"
    "# TYPE ebb_period_seconds gauge\n"
    "ebb_period_seconds 0.012500\n"
    "# TYPE ebb_agents gauge\n"
    "ebb_agents 12\n"
    "# HELP ebb_agents_failed_safe Agents failed safe now (not resumed).\n"
    "# TYPE ebb_agents_failed_safe gauge\n"
    "ebb_agents_failed_safe 1\n"
    "# HELP ebb_agents_resumed_total Failed-safe agents started again "
    "(agent.resume_after_fail_safe_ms).\n"
    "# TYPE ebb_agents_resumed_total counter\n"
    "ebb_agents_resumed_total 2\n"
    "# HELP ebb_smp_reroutes_total SMPs sent again on a new directed route after a timeout.\n"
    "# TYPE ebb_smp_reroutes_total counter\n"
    "ebb_smp_reroutes_total 7\n"
    "# HELP ebb_counters_held_total Counter reads with no LID route while the switch answered by "
    "directed route (its agent holds).\n"
    "# TYPE ebb_counters_held_total counter\n"
    "ebb_counters_held_total 0\n"
    "# HELP ebb_width_sets_total LinkWidthEnabled Sets by what they did.\n"
    "# TYPE ebb_width_sets_total counter\n"
    "ebb_width_sets_total{action=\"reduce\"} 4\n"
    "ebb_width_sets_total{action=\"restore\"} 2\n"
    "# HELP ebb_rehomings_total Minimal-tree re-homings after ports went down or up.\n"
    "# TYPE ebb_rehomings_total counter\n"
    "ebb_rehomings_total 2\n"
    "# HELP ebb_links_restored_total Links those re-homings turned on at once.\n"
    "# TYPE ebb_links_restored_total counter\n"
    "ebb_links_restored_total 5\n"
    "# HELP ebb_recoveries_total Re-homings whose links all came up again, by outcome.\n"
    "# TYPE ebb_recoveries_total counter\n"
    "ebb_recoveries_total{outcome=\"complete\"} 2\n"
    "ebb_recoveries_total{outcome=\"timed_out\"} 1\n"
    "ebb_recoveries_total{outcome=\"superseded\"} 4\n"
    "# HELP ebb_last_recovery_seconds From the last re-homing to all its links up.\n"
    "# TYPE ebb_last_recovery_seconds gauge\n"
    "ebb_last_recovery_seconds 0.250000\n"
    "# HELP ebb_flap_holds_total Links held on because they flapped (agent.flap_limit).\n"
    "# TYPE ebb_flap_holds_total counter\n"
    "ebb_flap_holds_total 1\n"
    "# TYPE ebb_links_held_on gauge\n"
    "ebb_links_held_on 1\n"
    "# HELP ebb_subnet_manager_master 1 while a master subnet manager answers; turn-offs wait "
    "for one.\n"
    "# TYPE ebb_subnet_manager_master gauge\n"
    "ebb_subnet_manager_master 1\n"
    "# HELP ebb_reenables_pending Re-enables not delivered yet, retried with backoff.\n"
    "# TYPE ebb_reenables_pending gauge\n"
    "ebb_reenables_pending 2\n"
    "# HELP ebb_reenables_delivered_total Pending re-enables delivered or found up.\n"
    "# TYPE ebb_reenables_delivered_total counter\n"
    "ebb_reenables_delivered_total 3\n"
    "# HELP ebb_switches_out_of_reach Switches a failure cut off the management port.\n"
    "# TYPE ebb_switches_out_of_reach gauge\n"
    "ebb_switches_out_of_reach 1\n"
    "# HELP ebb_reprobes_total Rounds reading the failed links again (a lost trap).\n"
    "# TYPE ebb_reprobes_total counter\n"
    "ebb_reprobes_total 4\n"
    "# HELP ebb_reprobe_repairs_total Failed links those rounds found up again.\n"
    "# TYPE ebb_reprobe_repairs_total counter\n"
    "ebb_reprobe_repairs_total 1\n";

TEST(Metrics, FixedNumbersGiveTheExactText) {
  EXPECT_EQ(renderPrometheus(fixedMetrics()), kFixedText);
}

TEST(Metrics, OpenSmEventsAppearOnceAnyArrived) {
  DaemonMetrics m = fixedMetrics();
  m.osmEvents[{"trap", 128}] = 3;
  m.osmEvents[{"trap", 64}] = 1;
  m.osmEvents[{"heavy_sweep_done", -1}] = 2;
  m.osmRereads = 3;
  m.osmRereadsFailed = 1;
  m.osmPortChanges = 4;
  m.osmEventsMalformed = 0;
  EXPECT_EQ(renderPrometheus(m),
            std::string(kFixedText) +
                "# HELP ebb_osm_events_total Events from OpenSM's ebb_osm_events plugin.\n"
                "# TYPE ebb_osm_events_total counter\n"
                "ebb_osm_events_total{event=\"heavy_sweep_done\"} 2\n"
                "ebb_osm_events_total{event=\"trap\",trap=\"64\"} 1\n"
                "ebb_osm_events_total{event=\"trap\",trap=\"128\"} 3\n"
                "# HELP ebb_osm_event_rereads_total Switches whose ports were re-read at once on "
                "an OpenSM event.\n"
                "# TYPE ebb_osm_event_rereads_total counter\n"
                "ebb_osm_event_rereads_total 3\n"
                "# TYPE ebb_osm_event_rereads_failed_total counter\n"
                "ebb_osm_event_rereads_failed_total 1\n"
                "# HELP ebb_osm_event_port_changes_total Port changes those re-reads found.\n"
                "# TYPE ebb_osm_event_port_changes_total counter\n"
                "ebb_osm_event_port_changes_total 4\n"
                "# TYPE ebb_osm_events_malformed_total counter\n"
                "ebb_osm_events_malformed_total 0\n");
}

TEST(Metrics, NoLinksIsStillValidText) {
  const std::string t = renderPrometheus(DaemonMetrics{});
  EXPECT_NE(t.find("# TYPE ebb_links gauge\n# HELP ebb_link_power_relative"), std::string::npos);
  EXPECT_NE(t.find("ebb_link_power_relative 1.000000\n"), std::string::npos);
  EXPECT_NE(t.find("ebb_gating_action{action=\"disable_port\"} 1\n"), std::string::npos);
  EXPECT_EQ(t.find("ebb_osm_events_total"), std::string::npos);
}

// Label values from outside (an OpenSM event name) are escaped as the
// exposition format requires: backslash, quote, newline.
TEST(Metrics, LabelValuesAreEscaped) {
  DaemonMetrics m;
  m.osmEvents[{"we\"ird\\ev\nent", -1}] = 1;
  EXPECT_NE(renderPrometheus(m).find("ebb_osm_events_total{event=\"we\\\"ird\\\\ev\\nent\"} 1\n"),
            std::string::npos);
}

}  // namespace
}  // namespace ebb::daemon
