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

// A direction that went down is reported after the detection delay if it is
// still down then; one that came back, at once, and only if its down was
// reported.
void SimBackend::linkFault(fabric::LinkId link, bool up) {
  agent::VirtualScheduler& sched = emu_.scheduler();
  const TimePs at = sched.now() + (up ? 0 : emu_.config().faultDetectionPs);
  sched.at(at, agent::Phase::kBackend, [this, link, up] { report(link, !up); });
}

void SimBackend::report(fabric::LinkId link, bool downs) {
  LinkReport& r = reports_[link.value()];
  const std::uint8_t now = emu_.directionsDown(link);
  const auto changed = static_cast<std::uint8_t>(downs ? now & ~r.down : r.down & ~now);
  if (changed == 0) return;
  const std::uint8_t before = r.down;
  r.down = static_cast<std::uint8_t>(downs ? r.down | changed : r.down & ~changed);
  if (!callback_) return;
  constexpr std::uint8_t kBoth = 3;
  // Whole links (and every change under whole-link gating) as ports: a port
  // is the unit InfiniBand reports.
  if (unit_ == GatingUnit::kLink ||
      (downs ? before == 0 && r.down == kBoth : before == kBoth && r.down == 0)) {
    if (downs ? before == 0 : r.down == 0) reportPorts(link, !downs);
    return;
  }
  for (Direction d : {Direction::kUp, Direction::kDown}) {
    if ((changed & 1u << static_cast<unsigned>(d)) == 0) continue;
    if (downs) {
      callback_->onDirectionDown(link, d);
    } else {
      callback_->onDirectionUp(link, d);
    }
  }
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
    out.push_back(
        {p, s.ports[p].role, emu_.config().bandwidthBytesPerPs(),
         emu_.directionState(s.ports[p].link, tx), emu_.directionState(s.ports[p].link, rx),
         (reports_[s.ports[p].link.value()].down & 1u << static_cast<unsigned>(tx)) != 0});
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
    sample.ports.push_back({p, c.txBytes, c.txPackets,
                            emu_.creditWaitNow(s.ports[p].link, txDir({sw, p})),
                            emu_.waitingWhileOff(s.ports[p].link, txDir({sw, p}))});
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
