#include "replay/runner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>

#include <fmt/format.h>

#include "agent/agent_host.h"
#include "agent/virtual_scheduler.h"
#include "fabric/connectivity.h"
#include "policies/power_model.h"
#include "replay/fault_injector.h"
#include "replay/in_band.h"
#include "replay/oracle.h"
#include "replay/period_rows.h"
#include "replay/recovery_monitor.h"
#include "replay/workload_source.h"
#include "sim_backend/fabric_emulator.h"
#include "sim_backend/sim_backend.h"

namespace ebb::replay {

using fabric::Direction;
using fabric::LinkId;

namespace {

// Nearest rank: the smallest value with at least q of the values at or
// below it (so p99 of fewer than 100 messages is their maximum).
double percentile(std::vector<TimePs>& v, double q) {
  if (v.empty()) return 0;
  // (The epsilon keeps q x n = 99.000000001 from rounding up a whole rank.)
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()) - 1e-9));
  const std::size_t k = std::min(v.size(), std::max<std::size_t>(rank, 1)) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return static_cast<double>(v[k]);
}

struct EnergyTotals {
  double switchLinks = 0;
  double allLinks = 0;
  double lpiEnergy = 0;  // energy of the time links were gated on
  double lpiTime = 0;
};

// The links' energy so far, or, with `since` (per direction, the times at
// the last call, updated), since then: differences of whole picoseconds,
// exact, where a difference of energies summed from time 0 lost the row's
// few thousand picoseconds against 10^18 (an all-on row read 101.8%).
EnergyTotals energyNow(sim::FabricEmulator& emu, const policies::PowerModel& pm,
                       std::vector<policies::DirectionTimes>* since = nullptr) {
  EnergyTotals e;
  const auto& topo = emu.topology();
  if (since) since->resize(2 * static_cast<std::size_t>(topo.numLinks()));
  for (LinkId::rep_type l = 0; l < topo.numLinks(); ++l) {
    for (Direction d : {Direction::kUp, Direction::kDown}) {
      policies::DirectionTimes t = emu.directionTimes(LinkId(l), d);
      if (since) {
        policies::DirectionTimes& before = (*since)[2 * l + static_cast<std::size_t>(d)];
        const policies::DirectionTimes now = t;
        t -= before;
        before = now;
      }
      const policies::EnergyBreakdown b = pm.breakdown(t);
      const double en = b.total();
      e.allLinks += en;
      if (topo.isSwitchLink(LinkId(l))) e.switchLinks += en;
      for (std::size_t i = 0; i < t.lpi.size(); ++i) {
        e.lpiEnergy += b.lpi[i];
        e.lpiTime += static_cast<double>(t.lpi[i]);
      }
    }
  }
  return e;
}

// Per pair of levels (l, l+1): the share of switch-link directions usable now.
std::vector<double> linkSharesOn(sim::FabricEmulator& emu) {
  const auto& topo = emu.topology();
  std::vector<double> on(static_cast<std::size_t>(std::max(topo.depth() - 1, 0)), 0.0);
  std::vector<double> total(on.size(), 0.0);
  for (LinkId::rep_type l = 0; l < topo.numLinks(); ++l) {
    if (!topo.isSwitchLink(LinkId(l))) continue;
    const auto level = static_cast<std::size_t>(topo.sw(topo.link(LinkId(l)).upper.sw).level);
    for (Direction d : {Direction::kUp, Direction::kDown}) {
      total[level] += 1;
      on[level] += emu.usable(LinkId(l), d) ? 1.0 : 0.0;
    }
  }
  for (std::size_t i = 0; i < total.size(); ++i)
    on[i] /= std::max(1.0, total[i]);
  return on;
}

// The link states a gated run starts from (gating.start). From the minimal
// tree, per-direction gating also starts with every down direction of a tree
// switch on, as the down-link rule keeps them: on a k-ary n-tree those are the
// tree's own links, but on an irregular tree a tree switch can be the parent
// of a leaf that hangs on another switch, and its routing descends there.
// Whole-link gating (in-band) starts from the tree alone and routes around.
fabric::LinkStates startStates(const RunSpec& spec, const fabric::Topology& topo,
                               const fabric::MinimalTree& mt, bool perDirection) {
  if (spec.startAllOn) return fabric::LinkStates::allOn(topo);
  fabric::LinkStates s = fabric::LinkStates::onlyMinimalTree(topo, mt);
  if (!perDirection) return s;
  for (fabric::SwitchId::rep_type i = 0; i < topo.numSwitches(); ++i) {
    if (!mt.containsSwitch(fabric::SwitchId(i))) continue;
    const fabric::Switch& sw = topo.sw(fabric::SwitchId(i));
    for (std::uint16_t p : sw.downPorts)
      s.set(sw.ports[p].link, Direction::kDown, true);
  }
  return s;
}

// What low-power idle cost the packets, over every direction of the fabric.
void fillLpiReport(const sim::FabricEmulator& emu, const policies::LpiParams& p,
                   results::LpiReport& r) {
  const auto& topo = emu.topology();
  const double ns = 1000.0;
  const policies::AdaptiveHold& a = p.adaptive;
  double delay = 0, holds = 0, maxHold = 0, overdraw = 0;
  std::uint64_t directions = 0;
  for (LinkId::rep_type l = 0; l < topo.numLinks(); ++l) {
    for (Direction d : {Direction::kUp, Direction::kDown}) {
      const policies::LpiCounters c = emu.lpiCounters(LinkId(l), d);
      r.set_packets(r.packets() + c.packets);
      r.set_wakeups(r.wakeups() + c.wakeups);
      r.set_over_budget_idles(r.over_budget_idles() + c.overBudgetIdles);
      r.set_long_idle_wakeups(r.long_idle_wakeups() + c.longIdleWakeups);
      delay += static_cast<double>(c.wakeDelay);
      holds += static_cast<double>(c.hold);
      maxHold = std::max(maxHold, static_cast<double>(c.hold));
      if (a.enabled) overdraw = std::max(overdraw, static_cast<double>(c.maxOverdraw));
      ++directions;
    }
  }
  r.set_added_delay_ns_per_packet(r.packets() ? delay / static_cast<double>(r.packets()) / ns
                                              : 0.0);
  r.set_max_overdraw_ns(overdraw / ns);
  r.set_delay_budget_ns(a.enabled ? static_cast<double>(a.delayBudget) / ns : 0.0);
  r.set_mean_hold_ns(directions ? holds / static_cast<double>(directions) / ns : 0.0);
  r.set_max_hold_ns(maxHold / ns);
}

}  // namespace

void fillFaultsReport(const FaultOutcome& f, results::FaultsReport& r) {
  for (const FaultRecord& e : f.events) {
    results::FaultEventReport* x = r.add_events();
    x->set_time_ps(e.at);
    x->set_action(e.action);
    x->set_part(e.part);
    x->set_random(e.random);
    x->set_detected_ps(e.detectedAt);
    x->set_disconnected(e.disconnected);
    x->set_recovered_ps(e.recoveredAt);
    x->set_recovery_ps(e.recoveredAt >= 0 ? e.recoveredAt - e.at : -1);
    x->set_packets_rerouted(e.packetsRerouted);
    x->set_packets_dropped(e.packetsDropped);
    x->set_messages_dropped(e.messagesDropped);
  }
  r.set_violations(f.violations);
  r.set_first_violation(f.firstViolation);
  r.set_physically_cut_pairs(f.physicallyCutPairs);
  for (const std::string& h : f.cutOffHosts)
    r.add_cut_off_hosts(h);
  r.set_recovery_bound_ps(f.recoveryBoundPs);
  r.set_max_recovery_ps(f.maxRecoveryPs);
  r.set_lost_messages(f.lostMessages);
  r.set_retransmitted_messages(f.retransmittedMessages);
  r.set_packets_rerouted(f.packetsRerouted);
  r.set_packets_dropped(f.packetsDropped);
  r.set_agent_restarts(f.agentRestarts);
  r.set_events_not_reached(f.eventsNotReached);
}

Result<RunOutput> runEmulation(const RunSpec& spec, const fabric::Topology& topo,
                               const fabric::MinimalTree& mt, bool gated,
                               const ProgressFn& progress) {
  RunOutput out;
  sim::EmulatorConfig emCfg = spec.emulator;
  if (!gated) emCfg.lpi.mode = policies::LpiMode::kOff;
  agent::VirtualScheduler sched;
  sim::FabricEmulator emu(topo, emCfg, sched);
  const bool inBand = gated && spec.gating && spec.inBand.enabled;
  sim::SimBackend backend(emu, inBand ? sim::GatingUnit::kLink : sim::GatingUnit::kDirection);
  fabric::SwitchId mgmtRoot;
  if (inBand) {
    Result<fabric::SwitchId> root = managementSwitch(spec.inBand, topo);
    if (!root) return root.status();
    mgmtRoot = *root;
  }
  const policies::PowerModel pm(emCfg.lpi.powerDeepSleep, emCfg.lpi.powerFastWake);
  fabric::Connectivity conn(topo);

  std::unique_ptr<agent::AgentHost> host;
  std::uint64_t applied = 0, refused = 0;
  const fabric::LinkStates initial =
      gated && spec.gating ? startStates(spec, topo, mt, !inBand) : fabric::LinkStates::allOn(topo);
  if (gated && spec.gating) {
    for (LinkId::rep_type l = 0; l < topo.numLinks(); ++l) {
      for (Direction d : {Direction::kUp, Direction::kDown}) {
        if (!initial.isOn(LinkId(l), d)) emu.initDirection(LinkId(l), d, false);
      }
    }
    host = std::make_unique<agent::AgentHost>(topo, mt, spec.agent, backend, sched, initial,
                                              [&](const agent::DecisionRecord& r) {
                                                if (r.refused.empty() || r.source == "fail-safe") {
                                                  ++applied;
                                                } else {
                                                  ++refused;
                                                }
                                                out.decisions.push_back(r);
                                              });
    if (inBand) attachInBand(host->guard(), topo, mgmtRoot, spec.inBand.resilience, initial);
    host->startAll();
  }
  Result<std::unique_ptr<WorkloadSource>> made = makeWorkloadSource(spec, emu);
  if (!made) return made.status();
  WorkloadSource& source = **made;
  TimePs end = source.horizon();
  if (const TimePs createdBefore = source.createdBefore();
      spec.latencyWarmupPs > 0 && !source.closedLoop() && spec.latencyWarmupPs >= createdBefore) {
    return invalidArgument(fmt::format(
        "report.latency_warmup_cycles: {} cycles leave no message to measure: the workload "
        "creates its last before cycle {}",
        spec.latencyWarmupPs / emCfg.cyclePs, (createdBefore + emCfg.cyclePs - 1) / emCfg.cyclePs));
  }

  // Idle fast-forward: with no agents and no faults nothing happens between
  // the scheduler's events, so a sample that finds the next event more than a
  // period away moves to the last period boundary before it, and its row
  // covers the idle periods in between (seconds of compute between phases
  // cost one sample, not one per check period). Such a run also measures the
  // links (energy, share on: O(links)) once per timeseries row rather than
  // once per check period: nothing but low-power idle changes them, and the
  // energy over a row is the same either way; and it keeps at most
  // kFastForwardRows rows (the plots' resolution), so that a long run on a big
  // fabric measures its links a few thousand times, not tens of thousands.
  const bool fastForward = spec.idleFastForward && !host && !spec.faults.any();
  // The cost before the work: every other run simulates each check period of
  // the workload's span, idle or not (agents check every period).
  const TimePs period = spec.agent.checkPeriodPs;
  if (const double periods = static_cast<double>(end) / static_cast<double>(period);
      !fastForward && periods > static_cast<double>(spec.maxCheckPeriods)) {
    return invalidArgument(fmt::format(
        "gating: about {:.3g} check periods of {} cycles over the workload's span ({}), more than "
        "the limit of {}: a run with agents or faults simulates every check period; shorten the "
        "workload, lengthen gating.check_period_cycles, or raise gating.max_check_periods "
        "deliberately",
        periods, period / emCfg.cyclePs, spec.workloadName, spec.maxCheckPeriods));
  }

  // Faults, and the guarantee: connectivity of what routing may really use,
  // proved after every change that takes a direction away and after every
  // fault event, independently of the agents' safety guard (a guard bug
  // cannot hide); disconnection is allowed only within the recovery bound
  // after a fault.
  Result<std::unique_ptr<FaultInjector>> injectorMade = std::unique_ptr<FaultInjector>();
  if (spec.faults.any()) {
    injectorMade = FaultInjector::create(spec.faults, topo, emu, end);
    if (!injectorMade) return injectorMade.status();
  }
  std::unique_ptr<FaultInjector> injector = std::move(*injectorMade);
  // The in-band model is the fabric's, not the agents': the all-on baseline
  // of an in-band run fails whole links too.
  if (injector) injector->setWholeLinkFaults(spec.inBand.enabled);
  const fabric::FaultSet noFaults(topo);
  const TimePs recoveryBound = spec.faults.recoveryBoundPs;
  RecoveryMonitor monitor(topo, initial, sched, injector ? injector->truth() : noFaults,
                          injector ? &injector->records() : nullptr, recoveryBound,
                          spec.faults.violationsAreErrors);
  emu.onUsability([&](LinkId link, Direction dir, bool nowUsable) {
    monitor.onUsability(link, dir, nowUsable);
  });
  if (injector) {
    injector->beforeChange([&](std::size_t record) { monitor.beforeFaultChange(record); });
    injector->onEvent([&](std::size_t record) {
      const FaultRecord& r = injector->records()[record];
      monitor.onFaultEvent(
          record, r.action != "restart-agent" && r.part.find("(skipped") == std::string::npos);
    });
    if (host) {
      injector->setRestart([&](fabric::SwitchId sw) { return host->restartAgent(sw); });
      host->setRecoveryHook(
          [&](const agent::AgentHost::Recovery& r) { injector->noteDetected(r.at); });
    }
  }

  emu.onDrop([&](const sim::Drop& d) { source.onDrop(d); });
  // The oracle bound sees every message offered, period by period.
  const double periodBytes = static_cast<double>(spec.agent.checkPeriodPs) /
                             static_cast<double>(emCfg.cyclePs) *
                             static_cast<double>(emCfg.flitBytes);
  Result<OracleBound> oracleMade = OracleBound::make(
      topo, mt, spec.oracleTarget, periodBytes,
      inBand ? OracleBound::Rules::kWholeLinks : OracleBound::Rules::kPerDirection);
  std::optional<OracleBound> oracle;
  if (oracleMade) {
    oracle = std::move(*oracleMade);
    // What the message puts on each link: its packets' flits, whole, as the
    // agents' counters count it.
    emu.onSend([&](fabric::HostId src, fabric::HostId dst, std::int64_t bytes) {
      oracle->offer(src, dst, emCfg.messageFlits(bytes) * emCfg.flitBytes);
    });
  }
  std::vector<TimePs> latencies;  // of the messages created after the warm-up
  const TimePs warmupEnd = sched.now() + spec.latencyWarmupPs;
  std::uint64_t periodDelivered = 0;
  double periodLatencySum = 0;
  std::uint64_t periodFlitsDelivered = 0;  // as the links carried them
  emu.onDelivery([&](const sim::Delivery& d) {
    source.onDelivery(d);
    if (d.created >= warmupEnd) latencies.push_back(d.delivered - d.created);
    ++periodDelivered;
    periodLatencySum += static_cast<double>(d.delivered - d.created);
    periodFlitsDelivered += static_cast<std::uint64_t>(emCfg.messageFlits(d.bytes));
  });
  source.start();
  if (injector) injector->start();

  const double cycle = static_cast<double>(emCfg.cyclePs);
  const double hosts = static_cast<double>(topo.numHosts());
  std::size_t switchDirections = 0;
  for (LinkId::rep_type l = 0; l < topo.numLinks(); ++l)
    switchDirections += topo.isSwitchLink(LinkId(l)) ? 2u : 0u;
  const double allDirections = static_cast<double>(topo.numLinks() * 2);
  std::vector<policies::DirectionTimes> timesAtLastRow;  // per direction (energyNow)
  std::uint64_t prevFlitsSent = 0;
  int lastProgress = -1;
  const std::int64_t rowLimit = std::max<std::int64_t>(
      1, fastForward ? std::min(spec.maxTimeseriesRows, kFastForwardRows) : spec.maxTimeseriesRows);
  // Check periods per timeseries row: as configured, or enough to stay within
  // the row limit over the workload's span (doubled, the rows so far merged
  // in pairs, when a closed-loop run outlasts its estimated span).
  std::int64_t group = spec.timeseriesGroup > 0
                           ? spec.timeseriesGroup
                           : std::max<std::int64_t>(
                                 1, (end / std::max<TimePs>(period, 1) + rowLimit - 1) / rowLimit);
  RowMerger rows;
  TimePs lastSampleAt = 0;
  TimePs nextSampleAt = period;
  TimePs rowStartAt = 0;
  // The links' part of a row: its power over [from, now] and the share on now.
  std::vector<double> sharesOn;  // fast-forward: nothing turns a link off, so measured once
  const auto measureLinks = [&](PeriodRow& row, TimePs from) {
    if (fastForward && !sharesOn.empty()) {
      row.linksOnShare = sharesOn;
    } else {
      row.linksOnShare = linkSharesOn(emu);
      if (fastForward) sharesOn = row.linksOnShare;
    }
    const EnergyTotals e = energyNow(emu, pm, &timesAtLastRow);
    const double dt = static_cast<double>(std::max<TimePs>(1, sched.now() - from));
    row.powerSwitchLinks =
        switchDirections ? e.switchLinks / (dt * static_cast<double>(switchDirections)) : 0;
    row.powerAllLinks = e.allLinks / (dt * allDirections);
  };
  const auto emitRow = [&] {
    PeriodRow merged = rows.take();
    if (fastForward) measureLinks(merged, rowStartAt);
    rowStartAt = sched.now();
    out.rows.push_back(std::move(merged));
    if (spec.timeseriesGroup > 0 || out.rows.size() < 2 * static_cast<std::size_t>(rowLimit))
      return;
    out.rows = downsample(out.rows, out.rows.size() / 2);
    group *= 2;
  };
  bool draining = false;  // the rows of the drain after the workload's end
  std::function<void()> sample = [&] {
    const TimePs now = sched.now();
    PeriodRow row;
    row.drain = draining;
    const TimePs span = now - lastSampleAt;
    const double periodCycles = static_cast<double>(span) / cycle;
    row.timeCycles = static_cast<double>(now) / cycle;
    row.spanCycles = periodCycles;
    const std::uint64_t flitsSent = emu.stats().flitsSent;
    row.offered = static_cast<double>(flitsSent - prevFlitsSent) / hosts / periodCycles;
    row.injectedRate = draining                  ? 0
                       : source.hasRateProfile() ? source.rateAt(now - period / 2)
                                                 : row.offered;
    row.rising = source.hasRateProfile() && !draining ? source.risingAt(now - period / 2) : true;
    prevFlitsSent = flitsSent;
    row.accepted = static_cast<double>(periodFlitsDelivered) / hosts / periodCycles;
    row.delivered = periodDelivered;
    row.meanLatencyCycles =
        periodDelivered ? periodLatencySum / static_cast<double>(periodDelivered) / cycle : 0;
    periodDelivered = 0;
    periodLatencySum = 0;
    periodFlitsDelivered = 0;
    if (!fastForward) measureLinks(row, lastSampleAt);
    lastSampleAt = now;
    row.oraclePowerSwitchLinks =
        oracle ? oracle->closePeriod(static_cast<std::uint64_t>(std::max<TimePs>(1, span / period)))
               : 0;
    rows.add(row);
    if (!draining) monitor.onPeriod();
    if (progress) {
      // Closed loop may run past the trace's span: 100% is said once.
      const int pct = std::min(
          100, static_cast<int>(100.0 * static_cast<double>(now) / static_cast<double>(end)));
      if (pct / 5 != lastProgress / 5) {
        lastProgress = pct;
        progress(std::min(1.0, static_cast<double>(now) / static_cast<double>(end)));
      }
    }
    // Saturating: a workload that ends near the end of time (2^63 ps).
    nextSampleAt = saturatingAdd(now, period);
    if (fastForward) {
      const TimePs nextEvent = sched.nextTime();  // < 0: nothing is left to happen
      if (nextEvent > nextSampleAt) nextSampleAt = (nextEvent - 1) / period * period;
      // An open-loop run samples up to its end as without the fast-forward
      // (straight to it when nothing is left to happen: a rate of 0).
      if (!source.closedLoop()) {
        const TimePs last = end / period * period;
        nextSampleAt = std::max(saturatingAdd(now, period),
                                nextEvent < 0 ? last : std::min(nextSampleAt, last));
      }
    }
    // (At the end of time the next sample is now: none.)
    const bool more =
        nextSampleAt > now && (source.closedLoop() ? !source.done() : nextSampleAt <= end);
    if (!more || rows.spanCycles() >=
                     (static_cast<double>(group) - 1e-6) * static_cast<double>(period) / cycle) {
      emitRow();
    }
    if (more) sched.at(nextSampleAt, agent::Phase::kControl, sample);
  };
  sched.at(period, agent::Phase::kControl, sample);
  if (source.closedLoop()) {
    // Closed loop: run until every rank finished (bounded against deadlock).
    const TimePs limit = saturatingAdd(saturatingMul(100, end), kPsPerS);
    // Ranks on hosts that faults cut off from the main part of the fabric
    // (their cable, their leaf's every way up, or a split) can never finish:
    // said first, as the cause.
    const auto cutOffNote = [&]() -> std::string {
      if (!injector) return {};
      const std::vector<std::string> cut = injector->cutOffNow();
      if (cut.empty()) return {};
      return fmt::format(
          "faults cut off {} for good (no surviving cable path joins {} to the main part of "
          "the fabric both ways; a REPAIR event would bring {} back), so the ranks there cannot "
          "finish; ",
          fmt::join(cut, ", "), cut.size() == 1 ? "it" : "them", cut.size() == 1 ? "it" : "them");
    };
    while (!source.done() && sched.now() < limit && !sched.stopped()) {
      sched.runUntil(std::max(saturatingAdd(sched.now(), period), nextSampleAt));
      // Caught at the first check period at which no rank can move again.
      if (std::string d = source.describeDeadlock(); !d.empty()) {
        return Status(ErrorCode::kInvalidArgument,
                      fmt::format("{}: at {:.1f} us: {}{}", spec.workloadName,
                                  toMicroseconds(sched.now()), cutOffNote(), d));
      }
    }
    if (monitor.failure().isOk() && !source.done()) {
      const std::string cut = cutOffNote();
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("{}: the replay did not finish within {} s of virtual time: {}"
                                "({}; {})",
                                spec.workloadName, toSeconds(limit),
                                cut.empty() ? "a receive without a matching send? " : cut,
                                source.describeUnfinished(), emu.describeWaiting()));
    }
    end = std::max<TimePs>(sched.now(), 1);
  } else {
    sched.runUntil(end);
  }
  if (!rows.empty()) emitRow();
  if (!monitor.failure().isOk()) return monitor.failure();
  // Accepted load counts what arrived within the workload's window only.
  const std::uint64_t flitsDeliveredInWindow = emu.stats().flitsDelivered;
  // Drain what is still in flight. A drain that delivers goes on (a backlog
  // behind low-power wake-ups can take long to empty); one that delivers
  // nothing for `drainSpan` ends (packets stuck), and every drain ends at
  // ten spans (a saturated backlog); the bounds saturate for a workload that
  // ends near the end of time.
  const TimePs drainSpan = std::max<TimePs>(end / 5, saturatingMul(100, period));
  const TimePs drainCap = saturatingAdd(end, saturatingMul(10, drainSpan));
  TimePs drainLimit = saturatingAdd(end, drainSpan);
  std::uint64_t deliveredSoFar = emu.stats().flitsDelivered;
  const auto progressed = [&] {
    if (emu.stats().flitsDelivered == deliveredSoFar) return;
    deliveredSoFar = emu.stats().flitsDelivered;
    drainLimit = std::min(drainCap, saturatingAdd(sched.now(), drainSpan));
  };
  // The workload's last, partial check period has its row; the drain has
  // rows of its own (drain = 1), so the timeseries adds up to the report.
  // The drain ends with the network empty (and no recovery from a fault
  // under way), not at the next check period: an idle tail would count as
  // time with links off. A remainder under one cycle (a traffic file's end
  // is 1 ps past its last message) is no period: the next row spans it.
  if (sched.now() - lastSampleAt >= emCfg.cyclePs && !sched.stopped()) sample();
  draining = true;
  for (TimePs rowEnd = saturatingAdd(sched.now(), period);
       (emu.packetsInNetwork() > 0 || monitor.recovering()) && sched.now() < drainLimit &&
       !sched.stopped();) {
    const TimePs next = sched.nextTime();  // < 0: nothing is left to happen
    if (next < 0 || next > std::min(rowEnd, drainLimit)) {
      sched.runUntil(std::min(rowEnd, drainLimit));
      sample();
      progressed();
      rowEnd = saturatingAdd(sched.now(), period);
      if (next < 0) break;
      continue;
    }
    sched.runOne();
  }
  // The last row; a remainder under one cycle after other rows is no period.
  if (sched.now() > lastSampleAt && !sched.stopped() &&
      (sched.now() - lastSampleAt >= emCfg.cyclePs || out.rows.empty()))
    sample();
  if (!monitor.failure().isOk()) return monitor.failure();
  if (const Status st = source.status(); !st.isOk()) return st;
  if (emu.packetsInNetwork() > 0) {  // said, never left for the reader to infer
    out.summary.set_packets_stranded(emu.packetsInNetwork());
    out.summary.set_stranded_where(emu.describeWaiting(3));
  }
  out.connectivityProofs = monitor.proofs();
  if (injector) {
    injector->finish();
    FaultOutcome& f = out.faults;
    f.events = injector->records();
    monitor.fill(f);
    f.cutOffHosts = injector->cutOffHosts();
    f.agentRestarts = injector->agentRestarts();
    f.eventsNotReached = injector->eventsNotReached();
    f.retransmittedMessages = source.retransmissions();
    const sim::EmulatorStats& st = emu.stats();
    f.packetsRerouted = st.packetsRerouted;
    f.packetsDropped = st.packetsDroppedByFaults();
    const std::uint64_t dropped = st.messagesDroppedByFaults();
    f.lostMessages = dropped - std::min(dropped, f.retransmittedMessages);
  }
  const EnergyTotals e = energyNow(emu, pm);
  const double t = static_cast<double>(sched.now());
  results::RunSummary& s = out.summary;
  s.set_policy(gated ? spec.policyName : "all links on");
  if (switchDirections > 0) {
    s.set_relative_power_switch_links(e.switchLinks / (t * static_cast<double>(switchDirections)));
  }
  s.set_relative_power_all_links(e.allLinks / (t * allDirections));
  s.set_lpi_relative_power(e.lpiTime > 0 ? e.lpiEnergy / e.lpiTime : 1.0);
  if (!latencies.empty()) {  // else absent: no latency was measured
    double sum = 0;
    for (TimePs l : latencies)
      sum += static_cast<double>(l);
    s.set_mean_latency_cycles(sum / static_cast<double>(latencies.size()) / cycle);
    s.set_p50_latency_cycles(percentile(latencies, 0.50) / cycle);
    s.set_p99_latency_cycles(percentile(latencies, 0.99) / cycle);
  }
  s.set_latency_messages(latencies.size());
  s.set_latency_warmup_cycles(spec.latencyWarmupPs / emCfg.cyclePs);
  s.set_messages_generated(source.messagesGenerated());
  s.set_messages_delivered(emu.stats().messagesDelivered);
  s.set_link_transitions(applied);
  s.set_actions_refused(refused);
  s.set_offered_load(static_cast<double>(emu.stats().flitsSent) / hosts /
                     (static_cast<double>(end) / cycle));
  s.set_accepted_load(static_cast<double>(flitsDeliveredInWindow) / hosts /
                      (static_cast<double>(end) / cycle));
  s.set_events(sched.executed());
  s.set_packet_hops(emu.stats().packetHops);
  source.summarize(s);
  if (injector) fillFaultsReport(out.faults, *s.mutable_faults());
  if (!oracleMade) s.mutable_oracle()->set_unavailable(oracleMade.status().message());
  if (oracle) {
    results::OracleReport& o = *s.mutable_oracle();
    o.set_target_utilization(oracle->targetUtilization());
    o.set_switch_link_power(oracle->switchLinkPower());
    o.set_all_link_power(oracle->allLinkPower());
    o.set_free_directions_power(oracle->freeDirectionsPower());
    const bool linksFailed =
        std::any_of(out.faults.events.begin(), out.faults.events.end(),
                    [](const FaultRecord& r) { return r.action == "fail" && !r.skipped; });
    if (s.has_relative_power_switch_links() && o.switch_link_power() < 1.0 - 1e-12) {
      if (linksFailed) {
        o.set_no_efficiency(
            "faults took links: a failed direction saves power for free, and the bound counts "
            "on every link");
      } else {
        o.set_efficiency((1.0 - s.relative_power_switch_links()) / (1.0 - o.switch_link_power()));
      }
    }
  }
  if (emCfg.lpi.mode != policies::LpiMode::kOff) fillLpiReport(emu, emCfg.lpi, *s.mutable_lpi());
  if (inBand) {
    fillInBandReport(topo, mgmtRoot, spec.inBand.resilience, host->guard(), *s.mutable_in_band());
    s.mutable_in_band()->set_packets_reascended(emu.stats().packetsReascended);
    s.mutable_in_band()->set_packets_dropped(emu.stats().packetsDroppedGated);
    s.mutable_in_band()->set_messages_dropped(emu.stats().messagesDroppedGated);
  }
  return out;
}

}  // namespace ebb::replay
