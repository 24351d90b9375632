#include "sim_backend/sim_backend.h"

#include <fmt/format.h>

namespace ebb::sim {

using fabric::Direction;
using fabric::PortId;

SimBackend::SimBackend(FabricEmulator& emu, GatingUnit unit) : emu_(emu), unit_(unit) {
  if (unit_ == GatingUnit::kLink) emu_.setRouteAroundGated(true);
  emu_.onTransition([this](fabric::LinkId link, Direction dir, agent::LinkPowerState state) {
    if (!callback_) return;
    const fabric::Link& l = emu_.topology().link(link);
    if (dir == Direction::kUp && l.lowerIsHost) return;  // hosts have no agent
    callback_->onLinkStateChanged(dir == Direction::kUp ? l.lower : l.upper, state);
  });
  reports_.resize(emu_.topology().numLinks());
  emu_.onLinkFault([this](fabric::LinkId link, bool up) { linkFault(link, up); });
}

// Down is reported after the detection delay if the link is still down then
// (no later change); up at once, and only if down was reported.
void SimBackend::linkFault(fabric::LinkId link, bool up) {
  LinkReport& r = reports_[link.value()];
  const std::uint64_t generation = ++r.generation;
  agent::VirtualScheduler& sched = emu_.scheduler();
  if (!up) {
    sched.at(sched.now() + emu_.config().faultDetectionPs, agent::Phase::kBackend,
             [this, link, generation] {
               LinkReport& now = reports_[link.value()];
               if (now.generation != generation) return;
               now.reportedDown = true;
               reportPorts(link, false);
             });
    return;
  }
  if (!r.reportedDown) return;
  r.reportedDown = false;
  sched.at(sched.now(), agent::Phase::kBackend, [this, link] { reportPorts(link, true); });
}

void SimBackend::reportPorts(fabric::LinkId link, bool up) {
  if (!callback_) return;
  const fabric::Link& l = emu_.topology().link(link);
  const auto report = [&](fabric::PortId p) {
    if (up) {
      callback_->onPortUp(p);
    } else {
      callback_->onPortDown(p);
    }
  };
  if (!l.lowerIsHost) report(l.lower);  // hosts have no agent
  report(l.upper);
}

Direction SimBackend::txDir(PortId p) const {
  return emu_.topology().sw(p.sw).ports[p.index].role == fabric::PortRole::kUp ? Direction::kUp
                                                                               : Direction::kDown;
}

template <class T>
void SimBackend::complete(Done<T> done, Result<T> r) {
  emu_.scheduler().at(emu_.scheduler().now(), agent::Phase::kBackend,
                      [done = std::move(done), r = std::move(r)] { done(r); });
}

void SimBackend::discoverPorts(fabric::SwitchId sw,
                               Done<std::vector<agent::PortDescription>> done) {
  std::vector<agent::PortDescription> out;
  const fabric::Switch& s = emu_.topology().sw(sw);
  for (std::uint16_t p = 0; p < s.ports.size(); ++p) {
    if (s.ports[p].role == fabric::PortRole::kUnused) continue;
    const Direction tx = txDir({sw, p});
    const Direction rx = tx == Direction::kUp ? Direction::kDown : Direction::kUp;
    // A switch knows a link failed once it reported it down (and not up since).
    out.push_back({p, s.ports[p].role, emu_.config().bandwidthBytesPerPs(),
                   emu_.directionState(s.ports[p].link, tx),
                   emu_.directionState(s.ports[p].link, rx),
                   reports_[s.ports[p].link.value()].reportedDown});
  }
  complete<std::vector<agent::PortDescription>>(std::move(done), std::move(out));
}

void SimBackend::requestCounters(fabric::SwitchId sw, Done<agent::CounterSample> done) {
  agent::CounterSample sample;
  sample.sampledAt = emu_.scheduler().now();
  const fabric::Switch& s = emu_.topology().sw(sw);
  sample.ports.reserve(s.ports.size());
  for (std::uint16_t p = 0; p < s.ports.size(); ++p) {
    if (s.ports[p].role == fabric::PortRole::kUnused) continue;
    const ChannelCounters& c = emu_.counters(s.ports[p].link, txDir({sw, p}));
    sample.ports.push_back(
        {p, c.txBytes, c.txPackets, emu_.creditWaitNow(s.ports[p].link, txDir({sw, p}))});
  }
  complete<agent::CounterSample>(std::move(done), std::move(sample));
}

void SimBackend::applyLinkState(PortId port, bool on, Done<agent::LinkPowerState> done) {
  const fabric::Switch& s = emu_.topology().sw(port.sw);
  if (port.index >= s.ports.size() || s.ports[port.index].role == fabric::PortRole::kUnused) {
    complete<agent::LinkPowerState>(
        std::move(done), Result<agent::LinkPowerState>(
                             ErrorCode::kInvalidArgument,
                             fmt::format("{} has no cabled port {}", s.name, port.ibPortNumber())));
    return;
  }
  const fabric::LinkId link = s.ports[port.index].link;
  const Direction dir = txDir(port);
  emu_.setDirection(link, dir, on);
  if (unit_ == GatingUnit::kLink) {
    emu_.setDirection(link, dir == Direction::kUp ? Direction::kDown : Direction::kUp, on);
  }
  complete<agent::LinkPowerState>(std::move(done), emu_.directionState(link, dir));
}

}  // namespace ebb::sim
