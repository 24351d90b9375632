#include "campaign/summary.h"

#include <filesystem>

#include <fmt/format.h>
#include <google/protobuf/text_format.h>

#include "common/file_io.h"
#include "common/json.h"
#include "common/output_set.h"

namespace ebb::campaign {

namespace {

// A CSV field: quoted when it holds a comma, quote or line break.
std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v)
    s += (s.empty() ? "" : " ") + x;
  return s;
}

std::string microseconds(TimePs ps) {
  return fmt::format("{:.3f} us", static_cast<double>(ps) / 1e6);
}

}  // namespace

std::string summaryJson(const CampaignInfo& info, const CampaignResult& result) {
  const CampaignTotals& t = result.totals;
  JsonObject worst;
  if (!result.scenarios.empty()) {
    const ScenarioResult& w = result.scenarios[t.worst];
    worst.add("index", w.index)
        .add("seed", w.seed)
        .add("why", t.worstReason)
        .add("violations", w.faults.violations)
        .add("max_recovery_ps", w.faults.maxRecoveryPs)
        .add("lost_messages", w.faults.lostMessages)
        .add("config", "worst_scenario.textproto");
  }
  JsonObject j;
  j.add("config", info.config)
      .add("fabric", info.fabric)
      .add("seed", info.seed)
      .add("scenario_periods", info.periods)
      .add("scenarios", t.scenarios)
      .add("violations", t.violations)
      .add("scenarios_with_violations", t.scenariosWithViolations)
      .add("physically_cut_pairs", t.physicallyCutPairs)
      .add("scenarios_with_cut_pairs", t.scenariosWithCutPairs)
      .add("scenarios_with_cut_hosts", t.scenariosWithCutHosts)
      .add("max_recovery_ps", t.maxRecoveryPs)
      .add("recovery_bound_ps", t.recoveryBoundPs)
      .add("lost_messages", t.lostMessages)
      .add("retransmitted_messages", t.retransmittedMessages)
      .add("packets_rerouted", t.packetsRerouted)
      .add("packets_dropped", t.packetsDropped)
      .add("packets_stranded", t.packetsStranded)
      .add("scenarios_with_stranded_packets", t.scenariosWithStranded)
      .add("agent_restarts", t.agentRestarts)
      .add("faults_injected", t.faultsInjected)
      .add("faults_scheduled", t.faultsScheduled)
      .add("repairs_scheduled", t.repairsScheduled)
      .add("messages_generated", t.messagesGenerated)
      .add("messages_delivered", t.messagesDelivered)
      .add("failed_runs", t.failedRuns);
  if (result.scenarios.empty()) {
    j.addRaw("worst_scenario", "null");
  } else {
    j.addRaw("worst_scenario", worst.str());
  }
  j.addRaw("first_violation", t.firstViolation.empty() ? "null" : jsonQuote(t.firstViolation));
  j.addRaw("first_error", t.firstError.empty() ? "null" : jsonQuote(t.firstError));
  return j.str() + "\n";
}

std::string scenariosCsv(const CampaignResult& result) {
  std::string s =
      "index,seed,faults_scheduled,repairs_scheduled,faults_injected,violations,"
      "physically_cut_pairs,cut_off_hosts,max_recovery_ps,lost_messages,retransmitted_messages,"
      "packets_rerouted,packets_dropped,agent_restarts,messages_generated,messages_delivered,"
      "periods,packets_stranded,error\n";
  for (const ScenarioResult& r : result.scenarios) {
    const replay::FaultOutcome& f = r.faults;
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.index, r.seed,
                     r.faultsScheduled, r.repairsScheduled, r.faultsInjected, f.violations,
                     f.physicallyCutPairs, csvField(joined(f.cutOffHosts)), f.maxRecoveryPs,
                     f.lostMessages, f.retransmittedMessages, f.packetsRerouted, f.packetsDropped,
                     f.agentRestarts, r.messagesGenerated, r.messagesDelivered, r.periods,
                     r.packetsStranded, csvField(r.error));
  }
  return s;
}

std::string summaryText(const CampaignInfo& info, const CampaignResult& result) {
  const CampaignTotals& t = result.totals;
  std::string s = fmt::format("ebb faults: {} scenarios of {} check periods on {}, seed {}\n",
                              t.scenarios, info.periods, info.fabric, info.seed);
  s += fmt::format(
      "  faults:     {} failures injected ({} scheduled), {} repairs, {} agent restarts\n",
      t.faultsInjected, t.faultsScheduled, t.repairsScheduled, t.agentRestarts);
  s += fmt::format(
      "  recovery:   longest {} (bound up to {}); {} host pairs physically cut off in {} "
      "scenarios ({} with hosts cut off from the main part)\n",
      microseconds(t.maxRecoveryPs), microseconds(t.recoveryBoundPs), t.physicallyCutPairs,
      t.scenariosWithCutPairs, t.scenariosWithCutHosts);
  s += fmt::format(
      "  messages:   {} generated, {} delivered, {} lost, {} retransmitted; packets {} rerouted, "
      "{} dropped\n",
      t.messagesGenerated, t.messagesDelivered, t.lostMessages, t.retransmittedMessages,
      t.packetsRerouted, t.packetsDropped);
  s += fmt::format("  violations: {} host-pair periods beyond the recovery bound in {} scenarios\n",
                   t.violations, t.scenariosWithViolations);
  if (t.packetsStranded > 0) {
    s += fmt::format(
        "  stranded:   {} packets in {} scenarios still in the network when the drain ended "
        "(scenarios.csv packets_stranded; replay one alone to see where they wait)\n",
        t.packetsStranded, t.scenariosWithStranded);
  }
  if (!t.firstViolation.empty()) s += "    first: " + t.firstViolation + "\n";
  if (t.failedRuns > 0) {
    s += fmt::format("  failed runs: {}; first: {}\n", t.failedRuns, t.firstError);
  }
  if (!result.scenarios.empty()) {
    const ScenarioResult& w = result.scenarios[t.worst];
    s += fmt::format("  worst:      scenario {} (seed {}): {}\n", w.index, w.seed, t.worstReason);
  }
  return s;
}

std::string configText(const config::Config& cfg) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(cfg, &text);
  return text;
}

std::set<std::string> campaignOutputNames() {
  return {"summary.json", "scenarios.csv", "worst_scenario.textproto"};
}

Status writeCampaignOutputs(const std::string& dir, const CampaignInfo& info,
                            const CampaignResult& result, const config::Config& worstScenario) {
  Result<OutputSet> set = OutputSet::begin(dir, campaignOutputNames());
  if (!set) return set.status();
  if (Status s = set->write("summary.json", summaryJson(info, result)); !s.isOk()) return s;
  if (Status s = set->write("scenarios.csv", scenariosCsv(result)); !s.isOk()) return s;
  if (!result.scenarios.empty()) {
    const std::string header = fmt::format(
        "# The worst scenario of `ebb faults` (seed {}): {}\n"
        "# Replay it alone: ebb replay worst_scenario.textproto\n",
        worstScenario.seed(), result.totals.worstReason);
    if (Status s = set->write("worst_scenario.textproto", header + configText(worstScenario));
        !s.isOk()) {
      return s;
    }
  }
  return set->commit();
}

}  // namespace ebb::campaign
