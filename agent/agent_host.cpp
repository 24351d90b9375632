#include "agent/agent_host.h"

namespace ebb::agent {

AgentHost::AgentHost(const fabric::Topology& topo, const fabric::MinimalTree& mt,
                     const AgentConfig& cfg, Backend& backend, Scheduler& scheduler,
                     fabric::LinkStates initial, DecisionSink sink)
    : topo_(topo),
      mt_(mt),
      cfg_(cfg),
      backend_(backend),
      sched_(scheduler),
      guard_(topo, mt, std::move(initial)),
      channel_(scheduler, cfg.controlLatencyPs),
      sink_(std::move(sink)),
      bySwitch_(topo.numSwitches(), nullptr) {
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
    agents_.push_back(std::make_unique<SwitchAgent>(s, topo_, mt_, cfg_, backend_, sched_, guard_,
                                                    channel_, sink_));
    agents_.back()->setFailSafeHook(failSafeHook_);
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
}

void AgentHost::onPortUp(fabric::PortId port) {
  downPorts_.erase(port);
  const fabric::LinkId link = topo_.sw(port.sw).ports[port.index].link;
  guard_.recordOn(link, fabric::Direction::kUp);
  guard_.recordOn(link, fabric::Direction::kDown);
  if (SwitchAgent* a = bySwitch_[port.sw.value()]) a->onPortUp(port.index);
}

void AgentHost::stopAll() {
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
