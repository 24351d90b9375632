#include "agent/agent_host.h"

#include <algorithm>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "fabric/recovery.h"

namespace ebb::agent {

AgentHost::AgentHost(const fabric::Topology& topo, const fabric::MinimalTree& mt,
                     const AgentConfig& cfg, Backend& backend, Scheduler& scheduler,
                     fabric::LinkStates initial, DecisionSink sink)
    : topo_(topo),
      tree_(mt),
      faults_(topo),
      cfg_(cfg),
      backend_(backend),
      sched_(scheduler),
      guard_(topo, tree_, std::move(initial)),
      channel_(scheduler, cfg.controlLatencyPs),
      sink_(std::move(sink)),
      bySwitch_(topo.numSwitches(), nullptr),
      failSafes_(topo.numSwitches(), 0),
      conn_(topo) {
  if (Status s = cfg_.validate(); !s.isOk()) throw Error(s);
  guard_.setRateLimits(cfg_.rateLimits);
  backend_.setCallback(this);
}

void AgentHost::startAll() {
  std::vector<fabric::SwitchId> all;
  for (fabric::SwitchId::rep_type s = 0; s < topo_.numSwitches(); ++s) {
    all.push_back(fabric::SwitchId(s));
  }
  start(all);
}

void AgentHost::start(const std::vector<fabric::SwitchId>& switches) {
  for (fabric::SwitchId s : switches) {
    agents_.push_back(std::make_unique<SwitchAgent>(s, topo_, tree_, cfg_, backend_, sched_, guard_,
                                                    channel_, sink_));
    install(*agents_.back());
    bySwitch_[s.value()] = agents_.back().get();
  }
  for (std::size_t i = agents_.size() - switches.size(); i < agents_.size(); ++i) {
    agents_[i]->start();
  }
}

void AgentHost::onLinkStateChanged(fabric::PortId port, LinkPowerState state) {
  if (SwitchAgent* a = bySwitch_[port.sw.value()]) a->onLinkStateChanged(port.index, state);
}

void AgentHost::onPortDown(fabric::PortId port) {
  downPorts_.insert(port);
  const fabric::LinkId link = topo_.sw(port.sw).ports[port.index].link;
  guard_.recordOff(link, fabric::Direction::kUp);
  guard_.recordOff(link, fabric::Direction::kDown);
  if (SwitchAgent* a = bySwitch_[port.sw.value()]) a->onPortDown(port.index);
  if (faults_.cableUsable(link)) {  // both ends report a link: the first one counts
    faults_.failLink(link);
    guard_.setFaults(faults_);
    scheduleRehome(topo_.describeLink(link) + " down");
  }
}

namespace {
// The switch ends that transmit and receive on a direction (a host end: none).
struct DirectionEnds {
  std::optional<fabric::PortId> tx, rx;
};
DirectionEnds endsOf(const fabric::Topology& t, fabric::LinkId link, fabric::Direction dir) {
  const fabric::Link& l = t.link(link);
  std::optional<fabric::PortId> lower;
  if (!l.lowerIsHost) lower = l.lower;
  if (dir == fabric::Direction::kUp) return {lower, l.upper};
  return {l.upper, lower};
}
std::string describeDirection(const fabric::Topology& t, fabric::LinkId link,
                              fabric::Direction dir) {
  return fmt::format("{} direction of {}", dir == fabric::Direction::kUp ? "up" : "down",
                     t.describeLink(link));
}
}  // namespace

void AgentHost::onDirectionDown(fabric::LinkId link, fabric::Direction dir) {
  guard_.recordOff(link, dir);
  const DirectionEnds e = endsOf(topo_, link, dir);
  if (e.tx) {
    if (SwitchAgent* a = bySwitch_[e.tx->sw.value()]) a->onTransmitDown(e.tx->index);
  }
  if (e.rx) {
    if (SwitchAgent* a = bySwitch_[e.rx->sw.value()]) a->onInputDown(e.rx->index);
  }
  if (faults_.usable(link, dir)) {
    faults_.failLink(link, dir);
    guard_.setFaults(faults_);
    scheduleRehome(describeDirection(topo_, link, dir) + " down");
  }
}

void AgentHost::onDirectionUp(fabric::LinkId link, fabric::Direction dir) {
  const fabric::Link& l = topo_.link(link);
  if (l.lowerIsHost && dir == fabric::Direction::kUp)
    guard_.recordOn(link, dir);  // hosts never gate
  // Each end's agent reads its port again: the transmitter records its
  // direction if on, the receiver takes its input in.
  const DirectionEnds e = endsOf(topo_, link, dir);
  for (const auto& end : {e.tx, e.rx}) {
    if (!end) continue;
    if (SwitchAgent* a = bySwitch_[end->sw.value()]) a->onPortUp(end->index);
  }
  if (!faults_.usable(link, dir)) {
    faults_.repairLink(topo_, link, dir);
    guard_.setFaults(faults_);
    scheduleRehome(describeDirection(topo_, link, dir) + " up");
  }
}

void AgentHost::onPortUp(fabric::PortId port) {
  downPorts_.erase(port);
  const fabric::LinkId link = topo_.sw(port.sw).ports[port.index].link;
  const fabric::Link& l = topo_.link(link);
  if (l.lowerIsHost) {
    guard_.recordOn(link, fabric::Direction::kUp);  // a host never gates its link
  }
  // Each end's agent reads its port again and records it (both ways under
  // whole-link gating) only if on: a link whose switch came back from a
  // failure is up again but stays off where gating had it off (the
  // emulator's repair), and taking it for on would make a re-homing count on
  // a way that is not there.
  if (SwitchAgent* a = bySwitch_[port.sw.value()]) a->onPortUp(port.index);
  if (faults_.linkFailed(link)) {
    faults_.repairLink(topo_, link);
    guard_.setFaults(faults_);
    scheduleRehome(topo_.describeLink(link) + " up");
  }
}

// Once per instant, after the backend's other completions of that instant
// (Phase::kControl): a switch failure reports every one of its links at once.
void AgentHost::scheduleRehome(std::string cause) {
  if (stopped_) return;  // shutting down: the restore brings links back
  pendingCause_ += (pendingCause_.empty() ? "" : ", ") + cause;
  if (rehomePending_) return;
  rehomePending_ = true;
  sched_.after(0, Phase::kControl, [this] { rehome(); });
}

void AgentHost::rehome() {
  rehomePending_ = false;
  if (stopped_) return;
  Recovery rec;
  rec.at = sched_.now();
  rec.cause = std::move(pendingCause_);
  pendingCause_.clear();
  fabric::Rehomed r = fabric::MinimalTree::build(topo_, faults_);
  rec.treeChanged = !(r.tree == tree_);
  if (rec.treeChanged) {
    tree_ = std::move(r.tree);
    for (auto& a : agents_)
      a->setTree(tree_);
  }
  cutOff_ = std::move(r.cutOff);
  rec.cutOff = cutOff_;
  rec.restored = fabric::linksToRestore(conn_, topo_, guard_.states(), faults_, tree_);
  // In-band, the gates a fault left where a further failure could not be
  // recovered from are lifted too (the guard re-gates at the ends it proves).
  const std::vector<fabric::LinkId> more = guard_.linksForResilience(rec.restored);
  rec.forResilience = more.size();
  if (!more.empty()) {  // none of them among the restored: those count as on
    rec.restored.insert(rec.restored.end(), more.begin(), more.end());
    std::sort(rec.restored.begin(), rec.restored.end());
  }
  for (fabric::LinkId link : rec.restored)
    restoreLink(link, rec.cause);
  ++recoveries_;
  if (recoveryHook_) recoveryHook_(rec);
}

void AgentHost::restoreLink(fabric::LinkId link, const std::string& why) {
  const fabric::Link& l = topo_.link(link);
  const std::string note = "recovery after " + why;
  if (!l.lowerIsHost) {
    if (SwitchAgent* a = bySwitch_[l.lower.sw.value()]) a->restorePort(l.lower.index, note);
  }
  if (SwitchAgent* a = bySwitch_[l.upper.sw.value()]) a->restorePort(l.upper.index, note);
}

Status AgentHost::restartAgent(fabric::SwitchId sw) {
  SwitchAgent* old = sw.value() < bySwitch_.size() ? bySwitch_[sw.value()] : nullptr;
  if (!old) {
    return {ErrorCode::kNotFound,
            "no agent runs for switch " +
                (sw.value() < topo_.numSwitches() ? topo_.sw(sw).name : std::string("?"))};
  }
  old->stop();
  auto fresh = std::make_unique<SwitchAgent>(sw, topo_, tree_, cfg_, backend_, sched_, guard_,
                                             channel_, sink_);
  install(*fresh);
  bySwitch_[sw.value()] = fresh.get();
  auto it = std::find_if(agents_.begin(), agents_.end(),
                         [old](const std::unique_ptr<SwitchAgent>& a) { return a.get() == old; });
  retired_.push_back(std::move(*it));
  *it = std::move(fresh);
  (*it)->restart();
  return Status::ok();
}

void AgentHost::install(SwitchAgent& agent) {
  agent.setFailSafeHook(
      [this](fabric::SwitchId sw, const std::string& why) { onAgentFailedSafe(sw, why); });
}

// Links are all back on now; gating resumes from there after the wait, and
// the fresh agent's first periods move to what the measured load needs. A
// switch that keeps failing is tried ever more rarely.
void AgentHost::onAgentFailedSafe(fabric::SwitchId sw, const std::string& why) {
  if (failSafeHook_) failSafeHook_(sw, why);
  if (cfg_.resumeAfterFailSafePs <= 0 || stopped_) return;
  const std::uint32_t n = ++failSafes_[sw.value()];
  // Doubling up to 64 x, and never beyond a week (keeps now + wait in range).
  constexpr TimePs kWeekPs = TimePs{604'800} * 1'000'000'000'000;
  const TimePs wait = std::min(cfg_.resumeAfterFailSafePs << std::min<std::uint32_t>(n - 1, 6),
                               std::max(kWeekPs, cfg_.resumeAfterFailSafePs));
  SwitchAgent* failed = bySwitch_[sw.value()];
  sched_.after(wait, Phase::kAgent, [this, sw, failed] { resume(sw, failed); });
}

void AgentHost::resume(fabric::SwitchId sw, SwitchAgent* failed) {
  // Not after shutdown, nor if the agent was replaced meanwhile.
  if (stopped_ || bySwitch_[sw.value()] != failed || !failed->stopped()) return;
  ++resumes_;
  if (resumeHook_) resumeHook_(sw, failSafes_[sw.value()]);
  (void)restartAgent(sw);
}

void AgentHost::stopAll() {
  stopped_ = true;
  for (auto& a : agents_)
    a->stop();
}

void AgentHost::onBackendError(const Status& error) {
  if (backendError_.isOk()) backendError_ = error;
  failedSafe_ = true;
  for (auto& a : agents_)
    a->failSafe(error.toString());
}

}  // namespace ebb::agent
