// Counters: PortCountersExtended of every cabled port of a switch, by LID,
// all at once; samples held (stale) while the SM re-routes or while the
// switch answers only by directed route; contact lost past lostContactPs.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "ib_backend/ib_backend.h"

namespace ebb::ib {

using fabric::SwitchId;

void IbBackend::requestCounters(SwitchId sw, Done<agent::CounterSample> done) {
  SwitchState& st = sw_[sw.value()];
  const fabric::Switch& me = topo_.sw(sw);
  bool anyUp = false;
  bool upLinkOn = me.upPorts.empty();  // a root needs none
  for (const fabric::Port& p : me.ports) {
    if (p.role == fabric::PortRole::kUnused || !rec(p.link).up) continue;
    anyUp = true;
    upLinkOn = upLinkOn || p.role == fabric::PortRole::kUp;
  }
  if (!anyUp) {  // a dark switch: nothing can have moved, and it cannot be reached
    agent::CounterSample s{sched_.now(), false, st.last};
    return later<agent::CounterSample>(std::move(done), std::move(s));
  }
  if (!upLinkOn) {
    // Reached only from below (an up link is coming back): up*/down* routing
    // gives its LID no route from the management port yet. Hold.
    agent::CounterSample s{sched_.now(), true, st.last};
    return later<agent::CounterSample>(std::move(done), std::move(s));
  }
  if (!st.reachable || st.lid == 0) {
    // Out of reach over the links that are up (a failure cut the directed
    // routes to it; the re-homing brings a way back) or no LID yet: held,
    // not lost (docs/ib_agent.md, "Lost contact"). Failing it safe would
    // send Sets it cannot receive, and keep it failed safe once reachable.
    ++stats_.countersHeld;
    agent::CounterSample s{sched_.now(), true, st.last};
    return later<agent::CounterSample>(std::move(done), std::move(s));
  }
  if (st.sweepInFlight) {
    // The last read is still waiting on timeouts: do not pile up more.
    agent::CounterSample stale{sched_.now(), true, st.last};
    return later<agent::CounterSample>(std::move(done), std::move(stale));
  }
  st.sweepInFlight = true;
  const TimePs start = sched_.now();
  MadAddress to;
  to.mgmtClass = MgmtClass::kPerf;
  to.lid = st.lid;
  std::vector<std::uint16_t> ports;
  for (std::uint16_t p = 0; p < me.ports.size(); ++p) {
    if (me.ports[p].role != fabric::PortRole::kUnused) ports.push_back(p);
  }
  fanIn<agent::PortCounters>(
      ports.size(),
      [this, sw, to, ports](std::size_t i,
                            std::function<void(Result<agent::PortCounters>)> answer) {
        const std::uint16_t p = ports[i];
        MadBytes req = buildRequest(to, Method::kGet, Attr::kPortCountersExt, 0);
        setCounterPortSelect(req, static_cast<std::uint8_t>(p + 1));
        mad_.send(to, req, [this, sw, p, to, answer](Result<MadBytes> r) {
          if (!r) {
            return answer(Status(r.status().code(),
                                 fmt::format("counters of {}: {}", topo_.describePort({sw, p}),
                                             r.status().message())));
          }
          const PortCountersExt c = parsePortCountersExt(*r);
          agent::PortCounters pc{p, c.xmitDataWords * 4, c.xmitPkts};
          if (!opts_.readXmitWait) return answer(pc);
          readXmitWait(sw, p, to, pc, answer);
        });
      },
      [this, sw, start, done = std::move(done)](Gathered<agent::PortCounters> g) {
        ++stats_.counterSweeps;
        stats_.lastSweepPs = sched_.now() - start;
        SwitchState& state = sw_[sw.value()];
        state.sweepInFlight = false;
        if (!g.firstError.isOk()) {
          // A failed cable toward the switch shows here first when no trap
          // tells of it: read the links toward it from their far ends (a
          // re-sweep by the SM, which makes LID routes fail for a moment,
          // finds nothing changed).
          probeLinksOf(sw, [](const std::vector<PortChange>&) {});
          if (state.missed++ == 0) state.firstMissAt = start;
          if (sched_.now() - state.firstMissAt < opts_.lostContactPs) {
            return done(agent::CounterSample{sched_.now(), true, state.last});
          }
          // Counters go by LID, along the SM's routes; under up*/down* routing a
          // gated fabric can leave a live switch with no LID route from the
          // management port. Contact is lost only if the switch does not
          // answer by directed route either; otherwise the agent holds.
          const std::string why =
              fmt::format("{} ({} reads in a row failed over {:.0f} ms)", g.firstError.message(),
                          state.missed, toMilliseconds(sched_.now() - state.firstMissAt));
          if (!state.reachable) {
            // Out of reach in ebb's own view: a link toward it is still
            // training. Hold; the probe would not even be sent.
            ++stats_.countersHeld;
            return done(agent::CounterSample{sched_.now(), true, state.last});
          }
          const std::uint64_t mKey = opts_.mKey;
          return sendSmp(
              sw,
              [mKey](const MadAddress& dr) {
                return buildRequest(dr, Method::kGet, Attr::kNodeInfo, 0, mKey);
              },
              [this, sw, done, why, code = g.firstError.code()](Result<MadBytes> probe) {
                if (!probe && !sw_[sw.value()].reachable) {
                  // Out of reach in ebb's own view by now (the failure that
                  // stopped the reads was just taken in): held, as above.
                  ++stats_.countersHeld;
                  return done(agent::CounterSample{sched_.now(), true, sw_[sw.value()].last});
                }
                if (!probe) {
                  const Status lost(code, fmt::format("{}; no answer by directed route either: {}",
                                                      why, probe.status().message()));
                  done(lost);
                  return lostContact(sw, lost);
                }
                ++stats_.countersHeld;
                done(agent::CounterSample{sched_.now(), true, sw_[sw.value()].last});
              });
        }
        state.missed = 0;
        // The switch answers again: contact is back, pending re-enables go
        // out now rather than at their next backoff.
        if (!pending_.empty()) retryPendingReenables(sw);
        agent::CounterSample sample;
        for (Result<agent::PortCounters>& r : g.results)
          sample.ports.push_back(*r);  // ascending port, as issued
        sample.sampledAt = sched_.now();
        state.last = sample.ports;
        state.lastSampleAt = sample.sampledAt;
        done(sample);
      });
}

// PortXmitWait of one port (PortCounters; PortCountersExtended has none),
// added to the counters read a moment before.
void IbBackend::readXmitWait(SwitchId sw, std::uint16_t p, const MadAddress& to,
                             agent::PortCounters pc,
                             std::function<void(Result<agent::PortCounters>)> answer) {
  MadBytes req = buildRequest(to, Method::kGet, Attr::kPortCounters, 0);
  setCounterPortSelect(req, static_cast<std::uint8_t>(p + 1));
  mad_.send(to, req, [this, sw, p, pc, answer](Result<MadBytes> r) mutable {
    if (!r) {
      return answer(Status(r.status().code(),
                           fmt::format("PortXmitWait of {}: {}", topo_.describePort({sw, p}),
                                       r.status().message())));
    }
    const SwitchState& st = sw_[sw.value()];
    const agent::PortCounters* before = nullptr;
    for (const agent::PortCounters& b : st.last) {
      if (b.index == p) before = &b;
    }
    pc.xmitWait = xmitWaitTime(sw, p, parsePortXmitWait(*r), before, st.lastSampleAt);
    answer(pc);
  });
}

TimePs IbBackend::xmitWaitTime(SwitchId s, std::uint16_t port, std::uint32_t ticks,
                               const agent::PortCounters* before, TimePs beforeAt) const {
  if (ticks == kXmitWaitSaturated) {
    // It stops there until something clears it (OpenSM's PerfMgr, perfquery
    // -R; ebb never clears counters it does not own): count the whole time
    // as waited, so the trigger errs toward links on.
    if (before == nullptr || beforeAt < 0) return 0;
    return before->xmitWait + std::max<TimePs>(0, sched_.now() - beforeAt);
  }
  double tick = static_cast<double>(opts_.xmitWaitTickPs);
  if (tick <= 0) {
    Result<double> lane = sw_[s.value()].ports[port].laneDataGbps(sw_[s.value()].extSpeeds);
    if (!lane || *lane <= 0) return before ? before->xmitWait : 0;  // no speed: no news
    tick = 8000.0 / *lane;                                          // a byte on one lane, in ps
  }
  return static_cast<TimePs>(static_cast<double>(ticks) * tick);
}

// A switch answers neither by LID nor by directed route. If the switch the
// management port attaches at does not answer either, nothing will: contact
// with the fabric is lost (raised once; the agents fail safe and stay so).
void IbBackend::lostContact(SwitchId s, const Status& why) {
  if (contactLost_ || !first_) return;
  auto raise = [this](Status error) {
    if (contactLost_) return;
    contactLost_ = true;
    if (callback_) callback_->onBackendError(error);
  };
  const std::string attach = topo_.sw(*first_).name;
  if (s == *first_) {
    return raise(Status(why.code(), fmt::format("lost contact with the fabric: {} (where the "
                                                "management port attaches) does not answer: {}",
                                                attach, why.message())));
  }
  const std::uint64_t mKey = opts_.mKey;
  sendSmp(
      *first_,
      [mKey](const MadAddress& dr) {
        return buildRequest(dr, Method::kGet, Attr::kNodeInfo, 0, mKey);
      },
      [raise, attach, why](Result<MadBytes> r) {
        if (r) return;  // only that switch is lost: its agent fails safe alone
        raise(Status(r.status().code(),
                     fmt::format("lost contact with the fabric: {} (where the management port "
                                 "attaches) does not answer either ({}); {}",
                                 attach, r.status().message(), why.message())));
      });
}

}  // namespace ebb::ib
