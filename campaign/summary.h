#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "campaign/campaign.h"
#include "common/status.h"
#include "configs/proto/ebb.pb.h"  // generated

namespace ebb::campaign {

// What the summary says about how the campaign was run.
struct CampaignInfo {
  std::string config;  // the base config's path, as given
  std::string fabric;  // "4-ary 3-tree (64 hosts, 48 switches)"
  std::uint64_t seed = 1;
  int periods = 0;  // per scenario
};

// summary.json: the totals, the worst scenario and the first violation; the
// same bytes for the same campaign whatever the number of jobs.
std::string summaryJson(const CampaignInfo& info, const CampaignResult& result);
// scenarios.csv: one row per scenario, in scenario order.
std::string scenariosCsv(const CampaignResult& result);
// The human summary printed on stdout.
std::string summaryText(const CampaignInfo& info, const CampaignResult& result);
// A scenario's config as text (replays alone: `ebb replay FILE`).
std::string configText(const config::Config& cfg);

// The files writeCampaignOutputs writes (relative to its folder).
std::set<std::string> campaignOutputNames();

// Writes summary.json, scenarios.csv and worst_scenario.textproto (the
// config of the worst scenario) into `dir`, creating it. E_IO names the file.
Status writeCampaignOutputs(const std::string& dir, const CampaignInfo& info,
                            const CampaignResult& result, const config::Config& worstScenario);

}  // namespace ebb::campaign
