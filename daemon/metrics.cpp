#include "daemon/metrics.h"

#include <fmt/format.h>

#include <algorithm>

namespace ebb::daemon {
namespace {

// A label value as the exposition format wants it: backslash, quote and
// newline escaped.
std::string labelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void linkGauges(std::string& t, const DaemonMetrics& m) {
  t += "# HELP ebb_links Switch-to-switch links by the level of their upper switch and state.\n"
       "# TYPE ebb_links gauge\n";
  for (const auto& [level, n] : m.linksByLevel) {
    t += fmt::format("ebb_links{{level=\"{}\",state=\"on\"}} {}\n", level, n.on);
    t += fmt::format("ebb_links{{level=\"{}\",state=\"off\"}} {}\n", level, n.off);
  }
  t += "# HELP ebb_link_power_relative Estimated switch-link power relative to all links on.\n"
       "# TYPE ebb_link_power_relative gauge\n";
  t += fmt::format("ebb_link_power_relative {:.6f}\n", m.linkPowerRelative);
  t += fmt::format(
      "# HELP ebb_gating_action How links are gated (disable_port or reduce_width).\n"
      "# TYPE ebb_gating_action gauge\nebb_gating_action{{action=\"{}\"}} 1\n"
      "# HELP ebb_links_reduced_width Switch links at reduced width (LinkWidthEnabled).\n"
      "# TYPE ebb_links_reduced_width gauge\nebb_links_reduced_width {}\n",
      labelValue(m.gatingAction), m.linksReducedWidth);
}

void decisions(std::string& t, const DaemonMetrics& m) {
  t += "# HELP ebb_decisions_total Gating decisions by source, action and outcome.\n"
       "# TYPE ebb_decisions_total counter\n";
  for (const auto& [d, n] : m.decisions) {
    t += fmt::format(
        "ebb_decisions_total{{source=\"{}\",action=\"{}\",refused=\"{}\",gating_action=\"{}\"}} "
        "{}\n",
        labelValue(d.source), d.turnOn ? "on" : "off", d.refused ? "yes" : "no",
        labelValue(d.gatingAction), n);
  }
}

void transportAndBackend(std::string& t, const DaemonMetrics& m) {
  t += fmt::format(
      "# TYPE ebb_mads_sent_total counter\nebb_mads_sent_total {}\n"
      "# TYPE ebb_mads_failed_total counter\nebb_mads_failed_total {}\n"
      "# TYPE ebb_mads_timeouts_total counter\nebb_mads_timeouts_total {}\n"
      "# TYPE ebb_mads_malformed_total counter\nebb_mads_malformed_total {}\n"
      "# TYPE ebb_mads_outstanding gauge\nebb_mads_outstanding {}\n"
      "# TYPE ebb_mads_queued gauge\nebb_mads_queued {}\n",
      m.madsSent, m.madsFailed, m.madsTimeouts, m.madsMalformed, m.madsOutstanding, m.madsQueued);
  t += fmt::format(
      "# TYPE ebb_port_sets_total counter\nebb_port_sets_total {}\n"
      "# HELP ebb_port_sets_suppressed_total Sets a dry run decided but did not send.\n"
      "# TYPE ebb_port_sets_suppressed_total counter\nebb_port_sets_suppressed_total {}\n"
      "# HELP ebb_period_seconds Time of the last counter read of one switch.\n"
      "# TYPE ebb_period_seconds gauge\nebb_period_seconds {:.6f}\n"
      "# TYPE ebb_agents gauge\nebb_agents {}\n"
      "# HELP ebb_agents_failed_safe Agents failed safe now (not resumed).\n"
      "# TYPE ebb_agents_failed_safe gauge\nebb_agents_failed_safe {}\n"
      "# HELP ebb_agents_resumed_total Failed-safe agents started again "
      "(agent.resume_after_fail_safe_ms).\n"
      "# TYPE ebb_agents_resumed_total counter\nebb_agents_resumed_total {}\n"
      "# HELP ebb_smp_reroutes_total SMPs sent again on a new directed route after a timeout.\n"
      "# TYPE ebb_smp_reroutes_total counter\nebb_smp_reroutes_total {}\n"
      "# HELP ebb_counters_held_total Counter reads with no LID route while the switch answered "
      "by directed route (its agent holds).\n"
      "# TYPE ebb_counters_held_total counter\nebb_counters_held_total {}\n"
      "# HELP ebb_width_sets_total LinkWidthEnabled Sets by what they did.\n"
      "# TYPE ebb_width_sets_total counter\nebb_width_sets_total{{action=\"reduce\"}} {}\n"
      "ebb_width_sets_total{{action=\"restore\"}} {}\n",
      m.portSets, m.portSetsSuppressed, m.periodSeconds, m.agents,
      m.agentsFailedSafe - std::min(m.agentsResumed, m.agentsFailedSafe), m.agentsResumed,
      m.smpReroutes, m.countersHeld, m.widthSetsReduce, m.widthSetsRestore);
  t += fmt::format(
      "# HELP ebb_rehomings_total Minimal-tree re-homings after ports went down or up.\n"
      "# TYPE ebb_rehomings_total counter\nebb_rehomings_total {}\n"
      "# HELP ebb_links_restored_total Links those re-homings turned on at once.\n"
      "# TYPE ebb_links_restored_total counter\nebb_links_restored_total {}\n"
      "# HELP ebb_recoveries_total Re-homings whose links all came up again, by outcome.\n"
      "# TYPE ebb_recoveries_total counter\nebb_recoveries_total{{outcome=\"complete\"}} {}\n"
      "ebb_recoveries_total{{outcome=\"timed_out\"}} {}\n"
      "ebb_recoveries_total{{outcome=\"superseded\"}} {}\n"
      "# HELP ebb_last_recovery_seconds From the last re-homing to all its links up.\n"
      "# TYPE ebb_last_recovery_seconds gauge\nebb_last_recovery_seconds {:.6f}\n"
      "# HELP ebb_flap_holds_total Links held on because they flapped (agent.flap_limit).\n"
      "# TYPE ebb_flap_holds_total counter\nebb_flap_holds_total {}\n"
      "# TYPE ebb_links_held_on gauge\nebb_links_held_on {}\n",
      m.rehomings, m.linksRestored, m.recoveries, m.recoveriesIncomplete, m.recoveriesSuperseded,
      m.lastRecoverySeconds, m.flapHolds, m.linksHeldOn);
  t += fmt::format(
      "# HELP ebb_subnet_manager_master 1 while a master subnet manager answers; turn-offs "
      "wait for one.\n"
      "# TYPE ebb_subnet_manager_master gauge\nebb_subnet_manager_master {}\n"
      "# HELP ebb_reenables_pending Re-enables not delivered yet, retried with backoff.\n"
      "# TYPE ebb_reenables_pending gauge\nebb_reenables_pending {}\n"
      "# HELP ebb_reenables_delivered_total Pending re-enables delivered or found up.\n"
      "# TYPE ebb_reenables_delivered_total counter\nebb_reenables_delivered_total {}\n"
      "# HELP ebb_switches_out_of_reach Switches a failure cut off the management port.\n"
      "# TYPE ebb_switches_out_of_reach gauge\nebb_switches_out_of_reach {}\n"
      "# HELP ebb_reprobes_total Rounds reading the failed links again (a lost trap).\n"
      "# TYPE ebb_reprobes_total counter\nebb_reprobes_total {}\n"
      "# HELP ebb_reprobe_repairs_total Failed links those rounds found up again.\n"
      "# TYPE ebb_reprobe_repairs_total counter\nebb_reprobe_repairs_total {}\n",
      m.subnetManagerMaster ? 1 : 0, m.reenablesPending, m.reenablesDelivered, m.switchesOutOfReach,
      m.reprobes, m.reprobeRepairs);
}

void osmEvents(std::string& t, const DaemonMetrics& m) {
  if (m.osmEvents.empty() && m.osmRereads == 0 && m.osmEventsMalformed == 0) return;
  t += "# HELP ebb_osm_events_total Events from OpenSM's ebb_osm_events plugin.\n"
       "# TYPE ebb_osm_events_total counter\n";
  for (const auto& [e, n] : m.osmEvents) {
    t += e.trap >= 0
             ? fmt::format("ebb_osm_events_total{{event=\"{}\",trap=\"{}\"}} {}\n",
                           labelValue(e.event), e.trap, n)
             : fmt::format("ebb_osm_events_total{{event=\"{}\"}} {}\n", labelValue(e.event), n);
  }
  t += fmt::format(
      "# HELP ebb_osm_event_rereads_total Switches whose ports were re-read at once on an "
      "OpenSM event.\n"
      "# TYPE ebb_osm_event_rereads_total counter\nebb_osm_event_rereads_total {}\n"
      "# TYPE ebb_osm_event_rereads_failed_total counter\nebb_osm_event_rereads_failed_total {}\n"
      "# HELP ebb_osm_event_port_changes_total Port changes those re-reads found.\n"
      "# TYPE ebb_osm_event_port_changes_total counter\nebb_osm_event_port_changes_total {}\n"
      "# TYPE ebb_osm_events_malformed_total counter\nebb_osm_events_malformed_total {}\n",
      m.osmRereads, m.osmRereadsFailed, m.osmPortChanges, m.osmEventsMalformed);
}

}  // namespace

std::string renderPrometheus(const DaemonMetrics& m) {
  std::string t;
  linkGauges(t, m);
  decisions(t, m);
  transportAndBackend(t, m);
  osmEvents(t, m);
  return t;
}

}  // namespace ebb::daemon
