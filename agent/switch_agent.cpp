#include "agent/switch_agent.h"

#include <fmt/format.h>

#include <algorithm>

namespace ebb::agent {

using policies::Action;
using policies::isOnOrTurningOn;

Status AgentConfig::validate() const {
  if (Status s = thresholds.validate(); !s.isOk()) {
    return {s.code(), "agent.thresholds: " + s.message()};
  }
  if (checkPeriodPs <= 0) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("agent.check_period_ps: must be > 0 (is {})", checkPeriodPs)};
  }
  if (Status s = rateLimits.validate(); !s.isOk()) {
    return {s.code(), "agent." + s.message()};
  }
  if (controlLatencyPs < 0) {
    return {ErrorCode::kInvalidArgument, "agent.control_latency_ps: must be >= 0"};
  }
  if (resumeAfterFailSafePs < 0) {
    return {ErrorCode::kInvalidArgument, "agent.resume_after_fail_safe_ps: must be >= 0"};
  }
  return Status::ok();
}

SwitchAgent::SwitchAgent(fabric::SwitchId sw, const fabric::Topology& topo,
                         const fabric::MinimalTree& mt, const AgentConfig& cfg, Backend& backend,
                         Scheduler& scheduler, SafetyGuard& guard, NeighborChannel& channel,
                         DecisionSink sink)
    : sw_(sw),
      topo_(topo),
      cfg_(cfg),
      policy_(cfg.thresholds),
      backend_(backend),
      sched_(scheduler),
      guard_(guard),
      channel_(channel),
      sink_(std::move(sink)),
      isMt_(mt.containsSwitch(sw)),
      wholeLink_(!backend.capabilities().perDirectionGating) {
  for (std::uint16_t p = 0; p < topo.sw(sw).ports.size(); ++p) {
    const fabric::Port& port = topo.sw(sw).ports[p];
    if (port.role == fabric::PortRole::kUnused) continue;
    const fabric::Link& l = topo.link(port.link);
    PortState ps{p, port.role == fabric::PortRole::kUp, !l.lowerIsHost};
    if (ps.up) upIdx_.push_back(ports_.size());
    ports_.push_back(ps);
  }
  setTree(mt);
  channel_.subscribe(sw_, [this](const messages::NeighborMessage& m) { onNeighbor(m); });
}

void SwitchAgent::setTree(const fabric::MinimalTree& mt) {
  isMt_ = mt.containsSwitch(sw_);
  const auto mtUp = mt.upPort(sw_);
  mtUpPort_ = mtUp ? *mtUp : -1;
  // A switch that joined the tree keeps its down links on (the down-link rule).
  if (started_ && !stopped_ && cfg_.gating) applyDownRule();
}

void SwitchAgent::start() {
  backend_.discoverPorts(sw_, [this](Result<std::vector<PortDescription>> r) {
    if (!r) return failSafe("discovery failed: " + r.status().toString());
    takeDescriptions(*r, -1);
    started_ = true;
    // A start state that breaks the down-link rule (a tree switch with a down
    // direction off) is put right at once: routing descends over it.
    if (cfg_.gating) applyDownRule();
    sched_.after(cfg_.checkPeriodPs, Phase::kAgent, [this] { tick(); });
  });
}

void SwitchAgent::restart() {
  backend_.discoverPorts(sw_, [this](Result<std::vector<PortDescription>> r) {
    if (!r) return failSafe("discovery failed: " + r.status().toString());
    takeDescriptions(*r, -1);
    backend_.requestCounters(sw_, [this](Result<CounterSample> c) {
      if (!c) return failSafe("counters unavailable: " + c.status().toString());
      for (const PortCounters& pc : c->ports) {
        for (PortState& p : ports_) {
          if (p.index == pc.index) p.lastTxBytes = pc.txBytes;
        }
      }
      lastSample_ = c->sampledAt;
      started_ = true;
      const TimePs now = sched_.now();
      const TimePs next = (now / cfg_.checkPeriodPs + 1) * cfg_.checkPeriodPs;
      sched_.at(next, Phase::kAgent, [this] { tick(); });
    });
  });
}

void SwitchAgent::takeDescriptions(const std::vector<PortDescription>& ports, int only) {
  for (const PortDescription& d : ports) {
    if (only >= 0 && d.index != only) continue;
    for (PortState& p : ports_) {
      if (p.index != d.index) continue;
      p.transmit = d.transmit;
      p.inputOn = isOnOrTurningOn(d.receive);
      p.failed = d.failed;
      if (d.bandwidthBytesPerPs > 0) p.bandwidth = d.bandwidthBytesPerPs;
    }
  }
}

void SwitchAgent::tick() {
  if (stopped_) return;
  backend_.requestCounters(sw_, [this](Result<CounterSample> r) {
    if (!r) return failSafe("counters unavailable: " + r.status().toString());
    onSample(*r);
  });
  sched_.after(cfg_.checkPeriodPs, Phase::kAgent, [this] { tick(); });
}

void SwitchAgent::buildView() {
  view_.clear();
  viewPorts_.clear();
  for (std::size_t i : upIdx_) {
    const PortState& p = ports_[i];
    if (p.failed) continue;  // not a link the policy can use or turn on
    view_.push_back({p.transmit, p.index == mtUpPort_});
    viewPorts_.push_back(i);
  }
}

bool SwitchAgent::anyAscendingInputOn() const {
  for (const PortState& p : ports_) {
    if (!p.up && p.inputOn) return true;
  }
  return false;
}

bool SwitchAgent::anyInputOn() const {
  for (const PortState& p : ports_) {
    if (p.inputOn) return true;
  }
  return false;
}

void SwitchAgent::onSample(const CounterSample& s) {
  ++periods_;
  if (s.stale) return;
  // u_up: bytes sent on the usable up links over the period, per link capacity.
  // The credit wait likewise: time waited over the period, per usable up link.
  double bytes = 0, capacity = 0, waited = 0, links = 0;
  const TimePs dt = lastSample_ < 0 ? 0 : s.sampledAt - lastSample_;
  std::vector<PortState*> waitingOff;  // off directions packets wait on
  for (const PortCounters& c : s.ports) {
    for (PortState& p : ports_) {
      if (p.index != c.index) continue;
      // Up links; and down directions where this agent gates them apart
      // (whole links: a down port follows its link, and the emulator drops
      // what a way down gone off would strand, as InfiniBand does).
      if ((p.up || !wholeLink_) && !p.failed && c.waitingWhileOff &&
          p.transmit == LinkPowerState::kOff) {
        waitingOff.push_back(&p);
      }
      if (p.up && p.transmit == LinkPowerState::kOn && dt > 0) {
        bytes += static_cast<double>(c.txBytes - p.lastTxBytes);
        capacity += p.bandwidth * static_cast<double>(dt);
        waited += static_cast<double>(std::max<TimePs>(0, c.xmitWait - p.lastXmitWait));
        links += 1;
      }
      p.lastTxBytes = c.txBytes;
      p.lastXmitWait = c.xmitWait;
    }
  }
  lastWait_ = links > 0 ? std::min(1.0, waited / (links * static_cast<double>(dt))) : 0.0;
  const bool firstSample = lastSample_ < 0;
  lastSample_ = s.sampledAt;
  lastU_ = capacity > 0 ? bytes / capacity : 0.0;
  if (firstSample || !cfg_.gating || stopped_) return;
  // Packets wait on an off up link (routing found no on way to their
  // destination, e.g. after a one-direction failure), or on a down direction
  // the down-link rule turned off while they were still on their way in
  // (on the wire or in the route stage when the switch's last input went
  // off): it goes on, and the policy holds this period so it does not undo
  // that at once. A down direction the rule turns off again drains first.
  if (!waitingOff.empty()) {
    for (PortState* p : waitingOff) {
      DecisionRecord rec;
      rec.source = "packets-waiting";
      rec.rule = policies::Rule::kPacketsWaiting;
      rec.measured = lastU_;
      apply(*p, true, rec);
    }
    return;
  }
  if (upIdx_.empty()) return;
  buildView();
  const policies::SwitchView view{view_, view_.empty(), isMt_, anyAscendingInputOn()};
  const policies::Decision d = policy_.decide(view, lastU_, lastWait_);
  if (d.action == Action::kHold) return;
  DecisionRecord rec;
  rec.source = d.reason.rule == policies::Rule::kPropagateUp ? "propagate-up" : "gating";
  rec.rule = d.reason.rule;
  rec.measured = d.reason.measured;
  rec.threshold = d.reason.threshold;
  rec.effectiveThreshold = d.reason.effectiveThreshold;
  rec.linksOn = d.reason.linksOn;
  // The ports first: apply() may change the view's links.
  std::vector<PortState*> ports;
  for (int i : d.upIndices)
    ports.push_back(&viewPort(i));
  for (PortState* p : ports) {
    if (stopped_) break;  // failed safe meanwhile: it restores, nothing more
    apply(*p, d.action == Action::kTurnOn, rec);
  }
}

void SwitchAgent::apply(PortState& p, bool on, DecisionRecord rec) {
  const fabric::LinkId link = linkOf(p);
  const fabric::Direction dir = txDir(p);
  rec.time = sched_.now();
  rec.port = {sw_, p.index};
  rec.up = p.up;
  rec.turnOn = on;
  if (!on) {
    Status s = wholeLink_ ? guard_.checkTurnOffLink(link) : guard_.checkTurnOff(link, dir);
    if (s.isOk()) s = guard_.checkRate(link, rec.time);
    if (!s.isOk()) {
      rec.refused = s.message();
      if (sink_) sink_(rec);
      return;
    }
    if (wholeLink_) {
      guard_.recordOff(link, fabric::Direction::kUp);
      guard_.recordOff(link, fabric::Direction::kDown);
    } else {
      guard_.recordOff(link, dir);
    }
    guard_.noteOff(link, rec.time);
  }
  p.transmit = on ? LinkPowerState::kTurningOn : LinkPowerState::kTurningOff;
  if (sink_) sink_(rec);
  // The peer hears "on" at once (it may propagate in parallel) but "off" only
  // once the direction is unpowered: packets still on the wire arrive first.
  if (on) notifyPeer(p, true);
  const std::uint16_t index = p.index;
  backend_.applyLinkState({sw_, index}, on, [this, index, on](Result<LinkPowerState> r) {
    if (!r && !on && r.status().code() == ErrorCode::kUnavailable) {
      // A turn-off whose end went out of reach before the Set (another link
      // toward that switch went off or failed meanwhile): nothing changed,
      // the link stays on and the agent goes on gating.
      return turnOffNotApplied(index, r.status());
    }
    if (!r) return failSafe("applying a link state failed: " + r.status().toString());
    onLinkStateChanged(index, *r);
  });
}

void SwitchAgent::turnOffNotApplied(std::uint16_t index, const Status& why) {
  for (PortState& p : ports_) {
    if (p.index != index || p.transmit != LinkPowerState::kTurningOff) continue;
    p.transmit = LinkPowerState::kOn;
    guard_.recordOn(linkOf(p), txDir(p));
    if (wholeLink_) {
      guard_.recordOn(linkOf(p), p.up ? fabric::Direction::kDown : fabric::Direction::kUp);
    }
    DecisionRecord rec;
    rec.time = sched_.now();
    rec.port = {sw_, index};
    rec.up = p.up;
    rec.turnOn = false;
    rec.source = "gating";
    rec.refused = "not applied, the link stays on: " + why.message();
    if (sink_) sink_(rec);
  }
}

void SwitchAgent::onLinkStateChanged(std::uint16_t index, LinkPowerState state) {
  for (PortState& p : ports_) {
    if (p.index != index) continue;
    if (wholeLink_ && !p.up) {  // a down port follows its link, whoever gated it
      p.transmit = state;
      continue;
    }
    // A late completion of an older request must not undo a newer one.
    const bool wantOn = isOnOrTurningOn(p.transmit);
    if (wantOn != isOnOrTurningOn(state)) return;
    const bool wasOff = p.transmit == LinkPowerState::kOff;
    p.transmit = state;
    if (state == LinkPowerState::kOn) {
      guard_.recordOn(linkOf(p), txDir(p));
      if (wholeLink_) guard_.recordOn(linkOf(p), fabric::Direction::kDown);
      guard_.noteOn(linkOf(p), sched_.now());
    }
    if (state == LinkPowerState::kOff && !wasOff) notifyPeer(p, false);
  }
}

void SwitchAgent::onPortDown(std::uint16_t index) {
  for (PortState& p : ports_) {
    if (p.index != index) continue;
    ++portFaults_;
    p.transmit = LinkPowerState::kOff;  // out of u_up and of the policy's links on
    p.inputOn = false;
    p.failed = true;
  }
}

void SwitchAgent::onTransmitDown(std::uint16_t index) {
  for (PortState& p : ports_) {
    if (p.index != index) continue;
    ++portFaults_;
    p.transmit = LinkPowerState::kOff;
    p.failed = true;
  }
}

void SwitchAgent::onInputDown(std::uint16_t index) {
  for (PortState& p : ports_) {
    if (p.index == index) p.inputOn = false;
  }
}

void SwitchAgent::onPortUp(std::uint16_t index) {
  for (PortState& p : ports_) {
    if (p.index == index) p.failed = false;
  }
  // A stopped agent (shutdown, restore in progress) asks the backend nothing:
  // it may be gone before the answer comes.
  if (stopped_) return;
  backend_.discoverPorts(sw_, [this, index](Result<std::vector<PortDescription>> r) {
    if (!r) return failSafe("discovery failed: " + r.status().toString());
    takeDescriptions(*r, index);
    for (PortState& p : ports_) {
      if (p.index != index || p.transmit != LinkPowerState::kOn) continue;
      guard_.recordOn(linkOf(p), txDir(p));
      if (wholeLink_)
        guard_.recordOn(linkOf(p), p.up ? fabric::Direction::kDown : fabric::Direction::kUp);
    }
  });
}

void SwitchAgent::restorePort(std::uint16_t index, const std::string& why) {
  if (stopped_) return;
  for (PortState& p : ports_) {
    if (p.index != index || p.failed || isOnOrTurningOn(p.transmit)) continue;
    if (wholeLink_ && !p.up) continue;  // the lower end gates the link
    DecisionRecord rec;
    rec.source = "fault-recovery";
    rec.note = why;
    apply(p, true, rec);
  }
}

void SwitchAgent::notifyPeer(const PortState& p, bool on) {
  if (!p.toSwitch) return;
  const fabric::PortId peer = topo_.peerOf({sw_, p.index});
  messages::NeighborMessage m;
  auto* t = m.mutable_transmit_state();
  t->set_from_switch(sw_.value());
  t->set_from_port(p.index);
  t->set_to_switch(peer.sw.value());
  t->set_to_port(peer.index);
  t->set_on(on);
  t->set_sent_at_ps(sched_.now());
  channel_.send(peer.sw, std::move(m));
}

void SwitchAgent::onNeighbor(const messages::NeighborMessage& m) {
  if (!m.has_transmit_state()) return;
  const auto& t = m.transmit_state();
  for (PortState& p : ports_) {
    if (p.index == t.to_port()) p.inputOn = t.on();
  }
  if (stopped_ || !cfg_.gating || !started_) return;
  propagate();
  applyDownRule();
}

// Upward propagation: an ascending input on with no up link on.
void SwitchAgent::propagate() {
  if (upIdx_.empty()) return;
  buildView();
  if (view_.empty()) return;
  const policies::SwitchView view{view_, false, isMt_, anyAscendingInputOn()};
  const policies::Decision d = policies::propagateUp(view);
  if (d.action != Action::kTurnOn) return;
  DecisionRecord rec;
  rec.source = "propagate-up";
  rec.rule = d.reason.rule;
  rec.linksOn = d.reason.linksOn;
  apply(viewPort(d.upIndex), true, rec);
}

// Down links all on iff the switch is in the MT or any input link is on.
void SwitchAgent::applyDownRule() {
  if (wholeLink_) return;
  const bool want = policies::downLinksOn(isMt_, anyInputOn());
  for (PortState& p : ports_) {
    if (p.up || p.failed || isOnOrTurningOn(p.transmit) == want) continue;
    DecisionRecord rec;
    rec.source = "down-link-rule";
    rec.rule = want ? policies::Rule::kAnInputOn : policies::Rule::kEveryInputOff;
    apply(p, want, rec);
  }
}

void SwitchAgent::failSafe(const std::string& why) {
  if (stopped_) return;
  stopped_ = true;
  if (failSafeHook_) failSafeHook_(sw_, why);
  for (PortState& p : ports_) {
    if (p.failed || isOnOrTurningOn(p.transmit) || (wholeLink_ && !p.up)) continue;
    DecisionRecord rec;
    rec.source = "fail-safe";
    rec.refused = why;
    apply(p, true, rec);
  }
}

}  // namespace ebb::agent
