#include "replay/fault_injector.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "fabric/minimal_tree.h"
#include "sim_backend/fabric_emulator.h"
#include "workload/arrival_gap.h"

namespace ebb::replay {

using fabric::Direction;
using fabric::LinkId;
using fabric::SwitchId;

namespace {

const char* actionName(FaultAction a) {
  switch (a) {
    case FaultAction::kFail:
      return "fail";
    case FaultAction::kRepair:
      return "repair";
    case FaultAction::kRestartAgent:
      return "restart-agent";
  }
  return "?";
}

// A fail or repair of `scope` (the switch `sw`, or `link`, whole or one
// direction) recorded in `faults`: the one place the plan check and the
// run both keep what failed.
void recordFault(fabric::FaultSet& faults, const fabric::Topology& topo, FaultScope scope,
                 bool fail, SwitchId sw, LinkId link) {
  switch (scope) {
    case FaultScope::kSwitch:
      if (fail) {
        faults.failSwitch(topo, sw);
      } else {
        faults.repairSwitch(topo, sw);
      }
      return;
    case FaultScope::kLink:
      if (fail) {
        faults.failLink(link);
      } else {
        faults.repairLink(topo, link);
      }
      return;
    case FaultScope::kUpDirection:
    case FaultScope::kDownDirection: {
      const Direction d = scope == FaultScope::kUpDirection ? Direction::kUp : Direction::kDown;
      if (fail) {
        faults.failLink(link, d);
      } else {
        faults.repairLink(topo, link, d);
      }
      return;
    }
  }
}

}  // namespace

Result<std::unique_ptr<FaultInjector>> FaultInjector::create(const FaultsDef& def,
                                                             const fabric::Topology& topo,
                                                             sim::FabricEmulator& emu,
                                                             TimePs horizon) {
  std::unique_ptr<FaultInjector> inj(new FaultInjector(def, topo, emu, horizon));
  for (const FaultEventDef& e : def.events) {
    const FaultTargetDef& t = e.target;
    Resolved r{e, SwitchId{}, LinkId{}};
    if (!t.switchName.empty()) {
      const auto sw = topo.findSwitch(t.switchName);
      if (!sw)
        return invalidArgument(
            fmt::format("{}.switch_name: no switch named {}", e.where, t.switchName));
      r.sw = *sw;
    } else {
      if (t.level >= topo.depth()) {
        return invalidArgument(fmt::format("{}.level: the fabric has levels 0..{} (is {})", e.where,
                                           topo.depth() - 1, t.level));
      }
      const auto& level = topo.switchesAtLevel(t.level);
      if (t.index >= level.size()) {
        return invalidArgument(fmt::format("{}.index: level {} has switches 0..{} (is {})", e.where,
                                           t.level, level.size() - 1, t.index));
      }
      r.sw = level[t.index];
    }
    const fabric::Switch& s = topo.sw(r.sw);
    if (t.port != 0) {
      const std::size_t index = t.port - 1u;
      if (index >= s.ports.size() || s.ports[index].role == fabric::PortRole::kUnused) {
        return invalidArgument(
            fmt::format("{}.port: {} has no cabled port {}", e.where, s.name, t.port));
      }
      r.link = s.ports[index].link;
    }
    if (t.minimalTreeUp && s.upPorts.empty()) {
      return invalidArgument(
          fmt::format("{}.minimal_tree_up: {} is a root and has no up link", e.where, s.name));
    }
    inj->events_.push_back(std::move(r));
  }
  if (Status st = checkRepairs(inj->events_, topo, def.random.enabled(), emu.config().cyclePs);
      !st.isOk())
    return st;
  // The cost before the work: every arrival is an event, a record and a
  // connectivity proof (an mtbf_us typo of ns for us would fill the memory).
  if (const RandomFaultsDef& rd = def.random; rd.enabled()) {
    const TimePs span = std::max<TimePs>(0, rd.endAt(horizon) - rd.startPs);
    const double arrivals = static_cast<double>(span) / static_cast<double>(rd.mtbfPs);
    if (arrivals > static_cast<double>(rd.maxArrivals)) {
      return invalidArgument(fmt::format(
          "faults.random.mtbf_us: {:g} us over the {:g} us of random faults draws about {:.3g} "
          "failures, more than the limit of {}: raise mtbf_us (it is in microseconds), shorten "
          "the span (start_cycles, end_cycles), or raise faults.random.max_arrivals deliberately",
          static_cast<double>(rd.mtbfPs) / 1e6, static_cast<double>(span) / 1e6, arrivals,
          rd.maxArrivals));
    }
  }
  return inj;
}

// A REPAIR names a part an earlier FAIL took (a typo in a port must not
// leave the failed cable failed while the plan claims it was repaired), and
// a FAIL takes something. A link named as a switch's minimal-tree up link is
// resolved as the run will resolve it: the tree re-homed over what the plan
// failed so far (no gating changes it). Not checked with random faults,
// which the plan cannot follow ahead of the run (there the run skips what
// takes nothing, and says so).
Status FaultInjector::checkRepairs(const std::vector<Resolved>& events,
                                   const fabric::Topology& topo, bool randomFaults,
                                   TimePs cyclePs) {
  if (randomFaults) return Status::ok();
  std::vector<std::uint8_t> failedDirs(topo.numLinks(), 0);  // bit 1 up, bit 2 down
  std::vector<std::uint8_t> failedSwitches(topo.numSwitches(), 0);
  fabric::FaultSet truth(topo);                          // for minimal_tree_up
  std::vector<LinkId> treeUpFailed(topo.numSwitches());  // as mtUpFailed_
  for (const Resolved& r : events) {  // in time order (faultsFromConfig sorted them)
    const FaultEventDef& e = r.def;
    if (e.action == FaultAction::kRestartAgent) continue;
    const bool fail = e.action == FaultAction::kFail;
    LinkId link = r.link;
    if (e.scope != FaultScope::kSwitch && !link.valid()) {
      if (fail) {
        const auto up = fabric::MinimalTree::build(topo, truth).tree.upPort(r.sw);
        if (!up) {  // a failure that would fail nothing (the run would skip it)
          return invalidArgument(fmt::format(
              "{}.minimal_tree_up: {} is not in the minimal tree at {} cycles{} (the FAIL would "
              "take no link): name the link by port, or fail it while {} is in the tree",
              e.where, topo.sw(r.sw).name, e.at / cyclePs,
              truth.switchFailed(r.sw) ? ": an earlier event failed it" : "", topo.sw(r.sw).name));
        }
        link = topo.sw(r.sw).ports[*up].link;
        treeUpFailed[r.sw.value()] = link;
      } else {
        link = treeUpFailed[r.sw.value()];
        if (!link.valid()) {
          return invalidArgument(fmt::format(
              "{}: REPAIR of the minimal_tree_up link of {}, but no earlier minimal_tree_up "
              "FAIL of {} took a link (a repair names the part a FAIL took)",
              e.where, topo.sw(r.sw).name, topo.sw(r.sw).name));
        }
        treeUpFailed[r.sw.value()] = LinkId{};
      }
    }
    recordFault(truth, topo, e.scope, fail, r.sw, link);
    if (e.scope == FaultScope::kSwitch) {
      std::uint8_t& failed = failedSwitches[r.sw.value()];
      if (!fail && failed == 0) {
        return invalidArgument(
            fmt::format("{}: REPAIR of switch {}, which no earlier event failed (a repair names "
                        "the part a FAIL named)",
                        e.where, topo.sw(r.sw).name));
      }
      if (fail && failed != 0) {
        return invalidArgument(fmt::format(
            "{}: FAIL of switch {}, which an earlier event failed and none repaired (a part "
            "fails once until a REPAIR names it)",
            e.where, topo.sw(r.sw).name));
      }
      failed = fail ? 1 : 0;
      continue;
    }
    const std::uint8_t bits = e.scope == FaultScope::kUpDirection     ? 1
                              : e.scope == FaultScope::kDownDirection ? 2
                                                                      : 3;
    std::uint8_t& failed = failedDirs[link.value()];
    const auto part = [&] {
      return fmt::format("{}link {}",
                         bits == 1   ? "the up direction of "
                         : bits == 2 ? "the down direction of "
                                     : "",
                         topo.describeLink(link));
    };
    const fabric::Link& l = topo.link(link);
    const bool upperFailed = failedSwitches[l.upper.sw.value()] != 0;
    const bool endFailed =
        upperFailed || (!l.lowerIsHost && failedSwitches[l.lower.sw.value()] != 0);
    if (fail) {
      // The switch took its links with it: the cable is down already.
      if (endFailed) {
        return invalidArgument(fmt::format(
            "{}: FAIL of {}, whose switch {} an earlier event failed and none repaired (its "
            "links failed with it)",
            e.where, part(), topo.sw(upperFailed ? l.upper.sw : l.lower.sw).name));
      }
      if ((failed & bits) == bits) {
        return invalidArgument(
            fmt::format("{}: FAIL of {}, which an earlier event failed and none repaired (a "
                        "part fails once until a REPAIR names it)",
                        e.where, part()));
      }
      failed = static_cast<std::uint8_t>(failed | bits);
      continue;
    }
    if ((failed & bits) == 0 && !endFailed) {
      return invalidArgument(
          fmt::format("{}: REPAIR of {}, which no earlier event failed (a repair names the part "
                      "a FAIL named)",
                      e.where, part()));
    }
    failed = static_cast<std::uint8_t>(failed & ~bits);
  }
  return Status::ok();
}

FaultInjector::FaultInjector(const FaultsDef& def, const fabric::Topology& topo,
                             sim::FabricEmulator& emu, TimePs horizon)
    : def_(def),
      topo_(topo),
      emu_(emu),
      horizon_(horizon),
      truth_(topo),
      everCutOff_(topo.numHosts(), 0),
      mtUpFailed_(topo.numSwitches()),
      rng_(def.random.seed) {}

void FaultInjector::start() {
  agent::VirtualScheduler& sched = emu_.scheduler();
  for (std::size_t i = 0; i < events_.size(); ++i) {
    sched.at(events_[i].def.at, agent::Phase::kNetwork, [this, i] {
      ++eventsReached_;
      const Resolved& r = events_[i];
      apply(r.def.action, r.def.scope, r.sw, r.link, false);
    });
  }
  if (def_.random.enabled()) {
    const TimePs first = def_.random.startPs + exponential(def_.random.mtbfPs);
    sched.at(first, agent::Phase::kNetwork, [this] { randomArrival(); });
  }
}

TimePs FaultInjector::exponential(TimePs mean) {
  std::exponential_distribution<double> d(1.0 / static_cast<double>(mean));
  const double t = d(rng_);
  if (!(t < static_cast<double>(workload::kNoArrival))) return workload::kNoArrival;
  return std::max<TimePs>(1, static_cast<TimePs>(std::llround(t)));
}

void FaultInjector::beginRecord(FaultRecord rec) {
  finish();
  const sim::EmulatorStats& st = emu_.stats();
  reroutedAt_ = st.packetsRerouted;
  droppedAt_ = st.packetsDroppedByFaults();
  messagesDroppedAt_ = st.messagesDroppedByFaults();
  records_.push_back(std::move(rec));
}

void FaultInjector::finish() {
  if (records_.empty()) return;
  const sim::EmulatorStats& st = emu_.stats();
  FaultRecord& last = records_.back();
  last.packetsRerouted = st.packetsRerouted - reroutedAt_;
  last.packetsDropped = st.packetsDroppedByFaults() - droppedAt_;
  last.messagesDropped = st.messagesDroppedByFaults() - messagesDroppedAt_;
}

void FaultInjector::apply(FaultAction action, FaultScope scope, SwitchId sw, LinkId link,
                          bool random) {
  FaultRecord rec;
  rec.at = emu_.scheduler().now();
  rec.action = actionName(action);
  rec.random = random;
  const fabric::Switch& s = topo_.sw(sw);
  if (action == FaultAction::kRestartAgent) {
    rec.part = "agent of " + s.name;
    const Status st = restart_ ? restart_(sw) : Status(ErrorCode::kNotFound, "no agents run");
    if (st.isOk()) {
      ++restarts_;
    } else {
      rec.part += " (skipped: " + st.message() + ")";
      rec.skipped = true;
    }
    beginRecord(std::move(rec));
    if (onEvent_) onEvent_(records_.size() - 1);
    return;
  }
  const bool fail = action == FaultAction::kFail;
  if (scope != FaultScope::kSwitch && !link.valid() && !fail) {
    // minimal_tree_up: the link the latest such FAIL of the switch took.
    link = mtUpFailed_[sw.value()];
    mtUpFailed_[sw.value()] = LinkId{};
    if (!link.valid()) {
      rec.part = fmt::format(
          "minimal-tree up link of {} (skipped: no minimal_tree_up FAIL of {} "
          "took a link)",
          s.name, s.name);
      rec.skipped = true;
      beginRecord(std::move(rec));
      if (onEvent_) onEvent_(records_.size() - 1);
      return;
    }
  }
  if (scope != FaultScope::kSwitch && !link.valid()) {
    // minimal_tree_up: the switch's up link in the tree over what survives now.
    const fabric::Rehomed now = fabric::MinimalTree::build(topo_, truth_);
    const auto up = now.tree.upPort(sw);
    if (!up) {
      rec.part = fmt::format("minimal-tree up link of {} (skipped: {} is not in the tree now)",
                             s.name, s.name);
      rec.skipped = true;
      beginRecord(std::move(rec));
      if (onEvent_) onEvent_(records_.size() - 1);
      return;
    }
    link = s.ports[*up].link;
    mtUpFailed_[sw.value()] = link;
  }
  if (scope != FaultScope::kSwitch) rec.link = link;
  // The record and the monitor's notice come first: the emulator reports the
  // directions it takes away as it applies the change.
  std::function<void()> change;
  // Both directions of the link, failed or repaired.
  const auto wholeLink = [this, fail, link] {
    recordFault(truth_, topo_, FaultScope::kLink, fail, {}, link);
    if (fail) {
      emu_.failLink(link);
    } else {
      emu_.repairLink(link);
    }
  };
  switch (scope) {
    case FaultScope::kSwitch:
      rec.part = "switch " + s.name;
      change = [this, fail, sw] {
        recordFault(truth_, topo_, FaultScope::kSwitch, fail, sw, {});
        if (fail) {
          emu_.failSwitch(sw);
        } else {
          emu_.repairSwitch(sw);
        }
      };
      break;
    case FaultScope::kLink:
      rec.part = "link " + topo_.describeLink(link);
      change = wholeLink;
      break;
    case FaultScope::kUpDirection:
    case FaultScope::kDownDirection: {
      const Direction d = scope == FaultScope::kUpDirection ? Direction::kUp : Direction::kDown;
      rec.part = fmt::format("{} direction of link {}", d == Direction::kUp ? "up" : "down",
                             topo_.describeLink(link));
      if (wholeLinkFaults_) {
        // Whole-link gating models InfiniBand, where a link trains both ways
        // or not at all: a dead direction takes the link down, for the
        // emulator, the agents and the proof of connectivity alike.
        rec.part += " (the whole link: in-band)";
        change = wholeLink;
        break;
      }
      change = [this, fail, link, d, scope] {
        recordFault(truth_, topo_, scope, fail, {}, link);
        if (fail) {
          emu_.failDirection(link, d);
        } else {
          emu_.repairDirection(link, d);
        }
      };
      break;
    }
  }
  lastChangeAt_ = rec.at;
  beginRecord(std::move(rec));
  if (beforeChange_) beforeChange_(records_.size() - 1);
  change();
  const fabric::Rehomed now = fabric::MinimalTree::build(topo_, truth_);
  for (const auto* hosts : {&now.cutOff, &now.oneWay}) {
    for (fabric::HostId h : *hosts)
      everCutOff_[h.value()] = 1;
  }
  if (onEvent_) onEvent_(records_.size() - 1);
}

// A failure is heard after the detection delay; one on a link the agents
// already hear as down (an earlier failure of a direction of it, heard now or
// before and not repaired since) changes nothing they see, so a re-homing
// after it covers it too (a probe saw a later repair's re-homing credited).
void FaultInjector::noteDetected(TimePs t) {
  for (std::size_t i = 0; i < records_.size(); ++i) {
    FaultRecord& r = records_[i];
    if (r.detectedAt >= 0 || r.action == "restart-agent" || r.skipped || t < r.at) continue;
    const TimePs earliest = r.at + (r.action == "fail" ? def_.detectionPs : 0);
    bool heardDown = false;
    if (r.action == "fail" && r.link.valid()) {
      for (std::size_t j = i; j-- > 0;) {
        const FaultRecord& q = records_[j];
        if (q.link != r.link) continue;
        // Heard after this failure: a report before it saw only what was down then.
        heardDown = q.action == "fail" && q.detectedAt >= r.at && q.detectedAt <= t;
        break;  // the latest change of that link decides
      }
    }
    if (t >= earliest || heardDown) r.detectedAt = t;
  }
}

// One arrival of the random process: a failure (within max_failed), its
// repair, and the next arrival.
void FaultInjector::randomArrival() {
  agent::VirtualScheduler& sched = emu_.scheduler();
  const RandomFaultsDef& rd = def_.random;
  const TimePs end = rd.endAt(horizon_);
  if (sched.now() > end) return;
  if (randomFailed_ < rd.maxFailed) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    FaultScope scope = FaultScope::kLink;
    SwitchId sw;
    LinkId link;
    if (u(rng_) < rd.switchShare) {
      std::vector<SwitchId> alive;
      for (SwitchId::rep_type s = 0; s < topo_.numSwitches(); ++s)
        if (!truth_.switchFailed(SwitchId(s))) alive.push_back(SwitchId(s));
      if (!alive.empty()) {
        scope = FaultScope::kSwitch;
        sw = alive[std::uniform_int_distribution<std::size_t>(0, alive.size() - 1)(rng_)];
      }
    } else {
      const bool mt = u(rng_) < rd.mtShare;
      const fabric::MinimalTree tree = fabric::MinimalTree::build(topo_, truth_).tree;
      std::vector<LinkId> candidates;
      for (LinkId::rep_type l = 0; l < topo_.numLinks(); ++l) {
        const LinkId id(l);
        if (!topo_.isSwitchLink(id) || truth_.linkFailed(id)) continue;
        if (mt && !tree.containsLink(id)) continue;
        candidates.push_back(id);
      }
      if (!candidates.empty()) {
        link =
            candidates[std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(rng_)];
        sw = topo_.link(link).lower.sw;
        if (u(rng_) < rd.directionShare) {
          scope = u(rng_) < 0.5 ? FaultScope::kUpDirection : FaultScope::kDownDirection;
        }
      }
    }
    if (sw.valid()) {
      ++randomFailed_;
      apply(FaultAction::kFail, scope, sw, link, true);
      if (rd.repairPs > 0) {
        sched.at(sched.now() + exponential(rd.repairPs), agent::Phase::kNetwork,
                 [this, scope, sw, link] {
                   --randomFailed_;
                   apply(FaultAction::kRepair, scope, sw, link, true);
                 });
      }
    }
  }
  const TimePs next = sched.now() + exponential(rd.mtbfPs);
  if (next <= end) sched.at(next, agent::Phase::kNetwork, [this] { randomArrival(); });
}

std::vector<std::string> FaultInjector::cutOffHosts() const {
  std::vector<std::string> out;
  for (std::size_t h = 0; h < everCutOff_.size(); ++h)
    if (everCutOff_[h])
      out.push_back(topo_.host(fabric::HostId(static_cast<std::uint32_t>(h))).name);
  return out;
}

std::vector<std::string> FaultInjector::cutOffNow() const {
  const fabric::Rehomed now = fabric::MinimalTree::build(topo_, truth_);
  std::vector<std::string> out;
  for (fabric::HostId h : now.cutOff)
    out.push_back(topo_.host(h).name);
  for (fabric::HostId h : now.oneWay)
    out.push_back(topo_.host(h).name + " (one direction)");
  return out;
}

}  // namespace ebb::replay
