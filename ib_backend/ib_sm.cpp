// The subnet manager: ebb disables links and relies on the SM to route
// around them (trap 128, a re-sweep, new forwarding tables). Without a master
// SM nothing re-routes, so a turn-off would strand the routes through it.
// checkSubnetManager asks the management port (PortInfo by directed route,
// hop 0: PortState Active and MasterSMLID set mean an SM configured it), then
// the SM itself (SMInfo by LID to that MasterSMLID: SMState master), which
// also sees an SM that died after it configured the subnet.
#include <fmt/format.h>

#include <algorithm>

#include "ib_backend/ib_backend.h"

namespace ebb::ib {

using fabric::SwitchId;

namespace {
const char* portStateName(PortState s) {
  switch (s) {
    case PortState::kDown:
      return "Down";
    case PortState::kInit:
      return "Initialize";
    case PortState::kArmed:
      return "Armed";
    case PortState::kActive:
      return "Active";
    default:
      return "NoChange";
  }
}
const char* smStateName(std::uint8_t s) {
  switch (s) {
    case 0:
      return "not active";
    case 1:
      return "discovering";
    case 2:
      return "standby";
    case kSmStateMaster:
      return "master";
    default:
      return "unknown";
  }
}
}  // namespace

void IbBackend::checkSubnetManager(Done<SubnetManagerState> done) {
  MadAddress local;  // hop count 0: the management port itself
  local.mgmtClass = MgmtClass::kSmiDirect;
  const std::uint64_t mKey = opts_.mKey;
  mad_.send(
      local, buildRequest(local, Method::kGet, Attr::kPortInfo, 0, mKey),
      [this, done = std::move(done)](Result<MadBytes> r) mutable {
        SubnetManagerState st;
        if (!r) {
          st.why = "the management port's PortInfo could not be read: " + r.status().message();
          return done(st);
        }
        const PortInfo pi = parsePortInfo(*r);
        st.smLid = pi.masterSmLid;
        if (pi.state == PortState::kDown) {
          st.why = "the management port is Down: its own link is not up";
          return done(st);
        }
        if (pi.state != PortState::kActive || pi.masterSmLid == 0) {
          st.why = fmt::format(
              "the management port is {} with MasterSMLID {}: no subnet manager has brought it up",
              portStateName(pi.state), pi.masterSmLid);
          return done(st);
        }
        MadAddress sm;
        sm.mgmtClass = MgmtClass::kSmiLid;
        sm.lid = pi.masterSmLid;
        mad_.send(sm, buildRequest(sm, Method::kGet, Attr::kSmInfo, 0),
                  [st, done = std::move(done)](Result<MadBytes> info) mutable {
                    if (!info) {
                      st.why =
                          fmt::format("the subnet manager at LID {} does not answer SMInfo: {}",
                                      st.smLid, info.status().message());
                    } else if (const std::uint8_t s = parseSmState(*info); s != kSmStateMaster) {
                      st.why = fmt::format("the subnet manager at LID {} is {}, not master",
                                           st.smLid, smStateName(s));
                    } else {
                      st.master = true;
                    }
                    done(st);
                  });
      },
      /*urgent=*/true);
}

bool IbBackend::anyLidMissing() const {
  return std::any_of(sw_.begin(), sw_.end(),
                     [](const SwitchState& s) { return s.reachable && s.lid == 0; });
}

void IbBackend::rereadLids(std::function<void(std::size_t)> done) {
  std::vector<SwitchId> targets;
  for (std::uint32_t s = 0; s < sw_.size(); ++s) {
    if (sw_[s].reachable) targets.push_back(SwitchId(s));
  }
  const std::uint64_t mKey = opts_.mKey;
  fanIn<std::uint16_t>(
      targets.size(),
      [this, targets, mKey](std::size_t i, std::function<void(Result<std::uint16_t>)> answer) {
        sendSmp(
            targets[i],
            [mKey](const MadAddress& to) {
              return buildRequest(to, Method::kGet, Attr::kPortInfo, 0, mKey);
            },
            [answer](Result<MadBytes> r) {
              if (!r) return answer(r.status());
              answer(parsePortInfo(*r).lid);
            });
      },
      [this, targets, done = std::move(done)](Gathered<std::uint16_t> g) {
        std::size_t changed = 0;
        for (std::size_t i = 0; i < targets.size(); ++i) {
          if (!g.results[i] || *g.results[i] == sw_[targets[i].value()].lid) continue;
          sw_[targets[i].value()].lid = *g.results[i];
          ++changed;
        }
        done(changed);
      });
}

}  // namespace ebb::ib
