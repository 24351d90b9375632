#include "campaign/campaign.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "common/plural.h"
#include "fabric/minimal_tree.h"
#include "replay/fabric_from_config.h"
#include "replay/run_spec.h"
#include "replay/runner.h"

namespace ebb::campaign {

namespace {

// A scenario's message budget unless the base sets workload.max_messages:
// scenarios are short runs (seconds each at the default shape).
constexpr std::uint64_t kScenarioMessages = 10'000'000;

using Clock = std::chrono::steady_clock;

void countScheduled(const config::Config& cfg, ScenarioResult& r) {
  for (const config::FaultEventSpec& e : cfg.faults().event()) {
    if (e.action() == config::FaultEventSpec::REPAIR) {
      ++r.repairsScheduled;
    } else if (e.action() != config::FaultEventSpec::RESTART_AGENT) {
      ++r.faultsScheduled;
    }
  }
}

// One scenario on a fabric built once for the whole campaign.
ScenarioResult runOn(const config::Config& cfg, const std::string& baseDir,
                     const fabric::Topology& topo, const fabric::MinimalTree& mt) {
  const auto start = Clock::now();
  ScenarioResult r;
  r.seed = cfg.seed();
  countScheduled(cfg, r);
  Result<replay::RunSpec> spec = replay::buildRunSpec(cfg, baseDir);
  if (!spec) {
    r.error = spec.status().toString();
    return r;
  }
  spec->faults.violationsAreErrors = false;
  spec->baseline = false;
  spec->plots = false;
  Result<replay::RunOutput> run = replay::runEmulation(*spec, topo, mt, true, {});
  if (!run) {
    r.error = run.status().toString();
  } else {
    r.faults = std::move(run->faults);
    r.periods = static_cast<std::int64_t>(run->rows.size());
    r.messagesGenerated = run->summary.messages_generated();
    r.messagesDelivered = run->summary.messages_delivered();
    r.packetsStranded = run->summary.packets_stranded();
    for (const replay::FaultRecord& f : r.faults.events) {
      if (f.action == "fail") ++r.faultsInjected;
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

// Worse first: a failed run, then more violations, then a longer recovery,
// then more messages lost.
auto badness(const ScenarioResult& r) {
  return std::make_tuple(!r.error.empty(), r.faults.violations, r.faults.maxRecoveryPs,
                         r.faults.lostMessages);
}

std::string whyWorst(const ScenarioResult& r) {
  if (!r.error.empty()) return "the run failed: " + r.error;
  if (r.faults.violations > 0) {
    return fmt::format("the most violations ({}), then the longest recovery ({} ps)",
                       r.faults.violations, r.faults.maxRecoveryPs);
  }
  if (r.faults.maxRecoveryPs > 0) {
    return fmt::format("no violations; the longest recovery ({} ps)", r.faults.maxRecoveryPs);
  }
  if (r.faults.lostMessages > 0) {
    return fmt::format("no violations, no recovery needed; the most messages lost ({})",
                       r.faults.lostMessages);
  }
  return "no violations, no recovery needed, nothing lost: the first scenario";
}

}  // namespace

ScenarioResult runScenario(const config::Config& scenario, const std::string& baseDir) {
  Result<fabric::Topology> topo = replay::topologyFromConfig(scenario.fabric(), baseDir);
  if (!topo) {
    ScenarioResult r;
    r.seed = scenario.seed();
    r.error = topo.status().toString();
    return r;
  }
  Result<fabric::MinimalTree> mt = fabric::MinimalTree::build(*topo);
  if (!mt) {
    ScenarioResult r;
    r.seed = scenario.seed();
    r.error = mt.status().toString();
    return r;
  }
  return runOn(scenario, baseDir, *topo, *mt);
}

CampaignTotals aggregate(const std::vector<ScenarioResult>& scenarios) {
  CampaignTotals t;
  t.scenarios = scenarios.size();
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    const ScenarioResult& r = scenarios[i];
    const replay::FaultOutcome& f = r.faults;
    t.violations += f.violations;
    t.scenariosWithViolations += f.violations > 0 ? 1u : 0u;
    t.physicallyCutPairs += f.physicallyCutPairs;
    t.scenariosWithCutPairs += f.physicallyCutPairs > 0 ? 1u : 0u;
    t.scenariosWithCutHosts += f.cutOffHosts.empty() ? 0u : 1u;
    t.maxRecoveryPs = std::max(t.maxRecoveryPs, f.maxRecoveryPs);
    t.recoveryBoundPs = std::max(t.recoveryBoundPs, f.recoveryBoundPs);
    t.lostMessages += f.lostMessages;
    t.retransmittedMessages += f.retransmittedMessages;
    t.packetsRerouted += f.packetsRerouted;
    t.packetsStranded += r.packetsStranded;
    t.scenariosWithStranded += r.packetsStranded > 0 ? 1u : 0u;
    t.packetsDropped += f.packetsDropped;
    t.agentRestarts += f.agentRestarts;
    t.faultsInjected += r.faultsInjected;
    t.faultsScheduled += r.faultsScheduled;
    t.repairsScheduled += r.repairsScheduled;
    t.messagesGenerated += r.messagesGenerated;
    t.messagesDelivered += r.messagesDelivered;
    if (!r.error.empty()) {
      ++t.failedRuns;
      if (t.firstError.empty()) {
        t.firstError = fmt::format("scenario {} (seed {}): {}", r.index, r.seed, r.error);
      }
    }
    if (f.violations > 0 && t.firstViolation.empty()) {
      t.firstViolation =
          fmt::format("scenario {} (seed {}): {}", r.index, r.seed, f.firstViolation);
    }
    if (badness(r) > badness(scenarios[t.worst])) t.worst = i;
  }
  if (!scenarios.empty()) t.worstReason = whyWorst(scenarios[t.worst]);
  return t;
}

Status checkCampaignBase(const config::Config& base, const fabric::Topology& topo,
                         std::uint64_t seed, const ScenarioShape& shape,
                         const std::string& baseDir) {
  if (topo.numHosts() < 2) {
    return invalidArgument(
        fmt::format("fabric: {}: a fault campaign needs at least 2 (it keeps host pairs connected)",
                    counted(topo.numHosts(), "host", "hosts")));
  }
  // The campaign draws every scenario's failures: a random process or events
  // of the base's own would be dropped without a word.
  if (base.has_faults() && base.faults().has_random()) {
    return invalidArgument(
        "faults.random: a fault campaign draws each scenario's failures itself; leave "
        "faults.random out of the base config (ebb replay runs it)");
  }
  if (base.has_faults() && base.faults().event_size() > 0) {
    return invalidArgument(fmt::format(
        "faults.event: a fault campaign draws each scenario's events itself; leave the base "
        "config's {} out (ebb replay runs them; the fault timing, detection_cycles and the "
        "rest, stays)",
        counted(static_cast<std::size_t>(base.faults().event_size()), "event", "events")));
  }
  // The base's own settings (gating, emulator, fault timing), on a scenario.
  const config::Config first = makeScenario(base, topo, seed, shape, baseDir);
  Result<replay::RunSpec> spec = replay::buildRunSpec(first, baseDir);
  if (!spec) return spec.status();
  // The cost before the work: scenarios are short runs, so the base's check
  // period sets their length (--periods of them).
  const std::uint64_t limit =
      base.workload().has_max_messages() ? spec->maxMessages : kScenarioMessages;
  // At most: every period at the highest load drawn.
  const double cycles =
      static_cast<double>(scenarioPeriods(shape)) * static_cast<double>(checkPeriodCycles(base));
  const double messages =
      shape.maxRate * cycles * static_cast<double>(topo.numHosts()) /
      static_cast<double>(spec->emulator.messageFlits(spec->workload.messageBytes));
  if (messages > static_cast<double>(limit)) {
    return invalidArgument(fmt::format(
        "faults: a scenario of {} check periods of {} cycles makes up to {:.3g} messages, more "
        "than the limit of {} per scenario: shorten gating.check_period_cycles or --periods, or "
        "raise workload.max_messages in the base deliberately",
        scenarioPeriods(shape), checkPeriodCycles(base), messages, limit));
  }
  return Status::ok();
}

Result<CampaignResult> runCampaign(const config::Config& base, const CampaignOptions& options) {
  Result<fabric::Topology> topo = replay::topologyFromConfig(base.fabric(), options.baseDir);
  if (!topo) return topo.status();
  Result<fabric::MinimalTree> mt = fabric::MinimalTree::build(*topo);
  if (!mt) return mt.status();
  // Checked before any thread starts.
  if (Status s = checkCampaignBase(base, *topo, scenarioSeed(options.seed, 0), options.shape,
                                   options.baseDir);
      !s.isOk()) {
    return s;
  }
  CampaignResult result;
  result.scenarios.resize(options.scenarios);
  std::atomic<std::uint64_t> next{0};
  std::uint64_t done = 0;
  std::mutex mu;
  const auto worker = [&] {
    while (true) {
      const std::uint64_t i = next++;
      if (i >= options.scenarios) return;
      const std::uint64_t seed = scenarioSeed(options.seed, i);
      const config::Config cfg = makeScenario(base, *topo, seed, options.shape, options.baseDir);
      ScenarioResult r = runOn(cfg, options.baseDir, *topo, *mt);
      r.index = i;
      result.scenarios[i] = std::move(r);  // each slot written by one thread only
      std::lock_guard lock(mu);
      ++done;
      if (options.progress) options.progress(done, options.scenarios);
    }
  };
  const auto threads =
      std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max(1, options.jobs)),
                              std::max<std::uint64_t>(1, options.scenarios));
  std::vector<std::thread> pool;
  for (std::uint64_t t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool)
    t.join();
  result.totals = aggregate(result.scenarios);
  return result;
}

}  // namespace ebb::campaign
