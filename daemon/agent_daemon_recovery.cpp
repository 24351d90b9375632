// The agent daemon's view of recoveries (docs/ib_agent.md, "Cable and switch
// failures"): a re-homing turns links on at once; each is watched until it is
// up, and at restore_timeout_ms the recovery is complete, superseded (turned
// off again on purpose, or taken over by a later re-homing) or timed out.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "daemon/agent_daemon.h"

namespace ebb::daemon {

// Ports went down or up without ebb: the agents re-homed the minimal tree and
// turned on at once what it needs (docs/faults.md).
void AgentDaemon::onRehome(const agent::AgentHost::Recovery& r) {
  ++counters_.rehomings;
  counters_.linksRestored += r.restored.size();
  std::vector<std::string> links, hosts;
  for (fabric::LinkId l : r.restored)
    links.push_back(topo_.describeLink(l));
  for (fabric::HostId h : r.cutOff)
    hosts.push_back(topo_.host(h).name);
  log_.rehome(r.at, r.cause, r.treeChanged, links, hosts);
  if (!r.restored.empty()) watchRecovery(r.at, counters_.rehomings, r.restored, r.cause);
  out_ << fmt::format("{:.3f}s re-homed after {}: {}{} link(s) turned on at once{}{}\n",
                      toSeconds(r.at), r.cause, r.treeChanged ? "new minimal tree, " : "",
                      links.size(),
                      r.forResilience == 0
                          ? ""
                          : fmt::format(" ({} to keep single-failure resilience)", r.forResilience),
                      hosts.empty() ? "" : fmt::format("; {} host(s) cut off", hosts.size()))
       << std::flush;
}

void AgentDaemon::watchRecovery(TimePs since, std::uint64_t number,
                                std::vector<fabric::LinkId> links, std::string cause) {
  sched_.after(
      s_.backend.linkPollPs, agent::Phase::kControl,
      [this, since, number, links = std::move(links), cause = std::move(cause)]() mutable {
        if (stopping_) return;  // the restore on exit takes over
        const fabric::LinkStates now = backend_->linkStates();
        std::vector<std::string> notUp, all;
        for (fabric::LinkId l : links) {
          all.push_back(topo_.describeLink(l));
          if (!now.isFullyOn(l)) notUp.push_back(all.back());
        }
        const TimePs took = sched_.now() - since;
        if (notUp.empty()) {
          ++counters_.recoveries;
          counters_.lastRecoverySeconds = toSeconds(took);
          log_.recovery(sched_.now(), cause, RecoveryOutcome::kComplete, toMilliseconds(took), all);
          out_ << fmt::format("{:.3f}s recovered from {}: {} link(s) up again in {:.0f} ms\n",
                              toSeconds(sched_.now()), cause, all.size(), toMilliseconds(took))
               << std::flush;
          return;
        }
        if (took < s_.backend.restoreTimeoutPs) {
          return watchRecovery(since, number, std::move(links), std::move(cause));
        }
        finishRecovery(since, number, links, cause);
      });
}

// At the deadline, a recovery whose links are not all up is superseded, not
// timed out, when what it turned on is no longer its business: a later
// re-homing (its cause repaired, or another change) decided again from the
// fabric as it is and watches what it turned on itself, or the agents turned
// the links off again on purpose (the guard's proofs allowed it).
void AgentDaemon::finishRecovery(TimePs since, std::uint64_t number,
                                 const std::vector<fabric::LinkId>& links,
                                 const std::string& cause) {
  const fabric::LinkStates now = backend_->linkStates();
  const std::vector<fabric::LinkId> gated = backend_->gatedLinks();
  // A re-enable that has not reached its switch (its end out of reach, still
  // tried or pending) leaves the link listed as gated too: that one is no
  // turn-off, it timed out.
  const std::vector<fabric::LinkId> pending = backend_->reenablesNotDelivered();
  const bool laterRehoming = counters_.rehomings > number;
  std::vector<std::string> timedOut, superseded;
  for (fabric::LinkId l : links) {
    if (now.isFullyOn(l)) continue;
    const bool offAgain = std::find(gated.begin(), gated.end(), l) != gated.end() &&
                          std::find(pending.begin(), pending.end(), l) == pending.end();
    (laterRehoming || offAgain ? superseded : timedOut).push_back(topo_.describeLink(l));
  }
  const double tookMs = toMilliseconds(sched_.now() - since);
  if (timedOut.empty()) {
    ++counters_.recoveriesSuperseded;
    log_.recovery(sched_.now(), cause, RecoveryOutcome::kSuperseded, tookMs, superseded);
    out_ << fmt::format(
                "{:.3f}s recovery from {} superseded after {:.0f} ms ({}): not up, on purpose: "
                "{}\n",
                toSeconds(sched_.now()), cause, tookMs,
                laterRehoming ? "a later re-homing took over" : "turned off again",
                fmt::join(superseded, ", "))
         << std::flush;
    return;
  }
  ++counters_.recoveriesIncomplete;
  log_.recovery(sched_.now(), cause, RecoveryOutcome::kTimedOut, tookMs, timedOut);
  err_ << fmt::format("ebb agent: recovery from {} incomplete after {:.0f} ms: not up: {}\n", cause,
                      tookMs, fmt::join(timedOut, ", "));
  // What did not come up may hang on a failure nobody could report (a dead
  // switch behind it, its traps lost with it): reach out to the switches out
  // of reach, so ebb reads them again and the agents re-home on what it finds.
  reachOut();
}

void AgentDaemon::reachOut() {
  const std::vector<fabric::LinkId> set = backend_->reachOut();
  if (set.empty()) return;
  std::vector<std::string> links;
  for (fabric::LinkId l : set)
    links.push_back(topo_.describeLink(l));
  err_ << fmt::format("ebb agent: switches out of reach: turning on {} to reach them again\n",
                      fmt::join(links, ", "))
       << std::flush;
}

}  // namespace ebb::daemon
