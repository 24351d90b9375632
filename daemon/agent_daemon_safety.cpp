// AgentDaemon: the safety of the management path (docs/ib_agent.md, *Safe by
// default*). Turn-offs wait for a master subnet manager (ebb relies on it to
// route around what it disables) and for every re-enable not yet delivered;
// links that failed are read again now and then, so a repair whose trap was
// lost is seen; flap holds are said once when they start and once when they
// end. Each condition is said once when it starts and once when it ends.
#include <fmt/format.h>

#include <algorithm>

#include "daemon/agent_daemon.h"

namespace ebb::daemon {

namespace {
// Said in every refusal: stable texts, so a port's refusal is logged once.
constexpr const char* kNoSmRefusal =
    "refused: no master subnet manager: ebb turns a link off only while a master SM routes "
    "around it (see the warning on stderr)";
constexpr const char* kPendingRefusal =
    "refused: re-enables not delivered yet go out before any turn-off (ebb_reenables_pending)";
}  // namespace

// Before the agents start, so their first period already knows.
void AgentDaemon::checkSubnetManagerAtStart() {
  bool done = false;
  backend_->checkSubnetManager([&](Result<ib::SubnetManagerState> r) {
    onSubnetManager(r ? *r : ib::SubnetManagerState{false, 0, r.status().toString()});
    done = true;
  });
  while (!done && io_.run_one()) {
  }
  if (io_.stopped()) io_.restart();
}

void AgentDaemon::watchSubnetManager() {
  sched_.after(s_.agent.checkPeriodPs, agent::Phase::kControl, [this] {
    if (stopping_) return;
    backend_->checkSubnetManager([this](Result<ib::SubnetManagerState> r) {
      if (stopping_) return;
      onSubnetManager(r ? *r : ib::SubnetManagerState{false, 0, r.status().toString()});
      reportFlapHoldsEnded();
      watchSubnetManager();
    });
  });
}

void AgentDaemon::onSubnetManager(const ib::SubnetManagerState& st) {
  const bool first = !sm_.has_value();
  const bool was = sm_ && sm_->master;
  sm_ = st;
  if (st.master) {
    if (was) {
      // LIDs the SM's first sweep had not assigned yet at the last read.
      if (backend_->anyLidMissing()) backend_->rereadLids([](std::size_t) {});
      return;
    }
    const std::string text = fmt::format("master subnet manager at LID {}", st.smLid);
    log_.notice(sched_.now(), "subnet_manager", text);
    if (first) {
      out_ << "ebb agent: " << text << "\n" << std::flush;
      return;
    }
    out_ << fmt::format("{:.3f}s {} routes the subnet: turn-offs resume\n", toSeconds(sched_.now()),
                        text)
         << std::flush;
    smWarned_ = false;
    // An SM that came up may have given the switches their LIDs only now
    // (counters go by LID); and the path to the switches works again.
    backend_->rereadLids([](std::size_t) {});
    backend_->retryPendingReenables();
    rereadAfterOutage();
    return;
  }
  if (smWarned_) return;  // once per absence
  smWarned_ = true;
  log_.notice(sched_.now(), "subnet_manager", "no master: " + st.why);
  err_ << fmt::format(
              "ebb agent: warning: no master subnet manager ({}): ebb turns no link off until one "
              "routes the subnet (it relies on the SM to route around the links it disables); "
              "turn-ons and fail-safe re-enables go on\n",
              st.why)
       << std::flush;
}

Status AgentDaemon::turnOffGate() const {
  if (!sm_ || !sm_->master) return {ErrorCode::kUnavailable, kNoSmRefusal};
  // The backend's rule (one place): a re-enable pending at a switch that
  // failures cut off waits for that switch, not the fabric (a probe saw a
  // dead leaf's pending re-enable stop every turn-off fabric-wide).
  if (!backend_->reenablesPendingRefusal().isOk())
    return {ErrorCode::kUnavailable, kPendingRefusal};
  return Status::ok();
}

void AgentDaemon::onReenable(const ib::ReenableEvent& e) {
  const std::string link = topo_.describeLink(e.link);
  log_.reenable(sched_.now(), e, link);
  if (e.kind == ib::ReenableEvent::Kind::kPending) {
    err_ << fmt::format(
                "ebb agent: re-enabling {} was not delivered ({}); it stays pending and is sent "
                "again, backing off to every {:g} s, until the switch acknowledges it; no link "
                "is turned off meanwhile\n",
                link, e.why.message(), toSeconds(ib::IbBackend::kMaxReenableDelayPs))
         << std::flush;
    return;
  }
  ++counters_.reenablesDelivered;
  out_ << fmt::format("{:.3f}s {} after {:.0f} ms pending ({} Set(s) tried): {}\n",
                      toSeconds(sched_.now()),
                      e.kind == ib::ReenableEvent::Kind::kDelivered ? "re-enable delivered"
                                                                    : "re-enable found up",
                      toMilliseconds(e.pendingPs), e.attempts, link)
       << std::flush;
}

// The management path was down (no master SM seen): the traps of what failed
// or came back meanwhile went nowhere. Every watched switch's ports are read
// again at once, so such a change is taken in now rather than when a counter
// read fails or a re-probe comes round.
void AgentDaemon::rereadAfterOutage() {
  for (fabric::SwitchId sw : managed_) {
    backend_->rereadPorts(sw, [this, sw](Result<std::vector<ib::PortChange>> r) {
      if (stopping_ || !r || r->empty()) return;
      std::string text;
      for (const ib::PortChange& c : *r)
        text += fmt::format(" [{}] {};", c.port.ibPortNumber(), c.what);
      log_.notice(sched_.now(), "reread_after_outage", topo_.sw(sw).name + ":" + text);
      out_ << fmt::format("{:.3f}s {} re-read after the management path came back:{}\n",
                          toSeconds(sched_.now()), topo_.sw(sw).name, text)
           << std::flush;
    });
  }
}

// Every 3 check periods at first (at least a link poll), doubling while a
// round finds nothing, to 16 times that.
TimePs AgentDaemon::reprobeBasePs() const {
  return std::max(3 * s_.agent.checkPeriodPs, s_.backend.linkPollPs);
}

void AgentDaemon::scheduleReprobe(TimePs delay) {
  sched_.after(delay, agent::Phase::kControl, [this, delay] {
    if (stopping_) return;
    if (backend_->failedLinkCount() == 0) {
      failedSeen_ = 0;
      reportCutOff();
      return scheduleReprobe(reprobeBasePs());
    }
    backend_->reprobeFailedLinks([this, delay](Result<std::vector<ib::PortChange>> r) {
      if (stopping_) return;
      std::size_t repaired = 0;
      for (const ib::PortChange& c : r ? *r : std::vector<ib::PortChange>{}) {
        if (c.what != "LinkUp") continue;
        ++repaired;
        const std::string link = topo_.describeLink(topo_.sw(c.port.sw).ports[c.port.index].link);
        log_.notice(sched_.now(), "reprobe_repair", link + " reads LinkUp");
        out_ << fmt::format("{:.3f}s re-probe: {} reads LinkUp again (no trap told of it)\n",
                            toSeconds(sched_.now()), link)
             << std::flush;
      }
      counters_.reprobeRepairs += repaired;
      reportCutOff();
      // Back to the base period when something changed: a repair found, or
      // a new failure (its repair may follow soon).
      const std::size_t failed = backend_->failedLinkCount();
      const bool newFailure = failed > failedSeen_;
      failedSeen_ = failed;
      scheduleReprobe(repaired > 0 || newFailure ? reprobeBasePs()
                                                 : std::min(delay * 2, 16 * reprobeBasePs()));
    });
  });
}

// Switches a failure cut off: said when they go out of reach and when they
// come back, not every round.
void AgentDaemon::reportCutOff() {
  const std::vector<fabric::SwitchId> now = backend_->switchesCutOff();
  const std::set<fabric::SwitchId> cut(now.begin(), now.end());
  for (fabric::SwitchId sw : cut) {
    if (cutOff_.count(sw)) continue;
    const std::string& name = topo_.sw(sw).name;
    log_.notice(sched_.now(), "out_of_reach", name);
    err_ << fmt::format(
                "ebb agent: {} is out of reach of the management port (failed links cut every "
                "way to it that is up now; links being turned on may bring it back); ebb reads "
                "the failed links again every {:g} s, backing off to {:g} s, to see a repair no "
                "trap tells of\n",
                name, toSeconds(reprobeBasePs()), toSeconds(16 * reprobeBasePs()))
         << std::flush;
  }
  for (fabric::SwitchId sw : cutOff_) {
    if (cut.count(sw) || !backend_->reachable(sw)) continue;
    log_.notice(sched_.now(), "in_reach", topo_.sw(sw).name);
    out_ << fmt::format("{:.3f}s {} is in reach again\n", toSeconds(sched_.now()),
                        topo_.sw(sw).name)
         << std::flush;
  }
  // A switch no longer cut off but still dark (all its links off by ebb)
  // stays listed until it is in reach, so its return is said once.
  std::set<fabric::SwitchId> keep = cut;
  for (fabric::SwitchId sw : cutOff_) {
    if (!backend_->reachable(sw)) keep.insert(sw);
  }
  cutOff_ = std::move(keep);
}

void AgentDaemon::reportFlapHoldsEnded() {
  for (fabric::LinkId l : host_->guard().flapHoldsEnded(sched_.now())) {
    const fabric::Link& L = topo_.link(l);
    // The next refusal of this link (a new hold) is logged again.
    for (const fabric::PortId end : {L.lower, L.upper})
      lastRefusal_.erase({end.sw.value(), end.index});
    const std::string link = topo_.describeLink(l);
    log_.notice(sched_.now(), "flap_hold_ended", link);
    out_ << fmt::format("{:.3f}s flap damping: {} is no longer held on\n", toSeconds(sched_.now()),
                        link)
         << std::flush;
  }
}

}  // namespace ebb::daemon
