#pragma once
// The IbBackend test rig: a 2-ary 3-tree in a FakeFabric behind a
// FakeMadTransport, in virtual time, with every backend event recorded.
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "agent/virtual_scheduler.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "ib_backend/ib_backend.h"
#include "tests/ib_backend/fake_fabric.h"

namespace ebb::ib::testing {

using agent::LinkPowerState;
using fabric::LinkId;
using fabric::PortId;
using fabric::SwitchId;
inline constexpr TimePs kMs = 1'000'000'000;

inline const fabric::Topology& tree() {
  static const fabric::Topology t = fabric::KAryNTree::make(2, 3).value().build();
  return t;
}

// Records every backend event.
struct Callbacks : agent::BackendCallback {
  std::vector<std::pair<PortId, LinkPowerState>> changes;
  std::vector<PortId> down, up;
  std::vector<Status> errors;
  void onLinkStateChanged(PortId p, LinkPowerState s) override { changes.emplace_back(p, s); }
  void onPortDown(PortId p) override { down.push_back(p); }
  void onPortUp(PortId p) override { up.push_back(p); }
  // InfiniBand reports whole links only.
  void onDirectionDown(fabric::LinkId, fabric::Direction) override { ++directionEvents; }
  void onDirectionUp(fabric::LinkId, fabric::Direction) override { ++directionEvents; }
  int directionEvents = 0;
  void onBackendError(const Status& e) override { errors.push_back(e); }
};

struct Rig {
  explicit Rig(IbBackendOptions o = allowAll()) : fab(tree(), fabric::HostId(1)) {
    TransportOptions t;
    t.timeoutPs = 50 * kMs;
    t.retries = 1;
    mad = std::make_unique<FakeMadTransport>(
        sched, t,
        [this, answer = fab.responder()](
            const MadAddress& to, const MadBytes& m) -> std::optional<std::vector<std::uint8_t>> {
          if (holdIf && holdIf(to, m)) {
            held.emplace_back(to, m);  // not at the fabric yet: release() delivers it
            return std::nullopt;
          }
          return answer(to, m);
        });
    backend = std::make_unique<IbBackend>(tree(), *mad, sched, o);
    backend->setCallback(&cb);
  }
  static IbBackendOptions allowAll() {
    IbBackendOptions o;
    for (const fabric::Switch& s : tree().switches())
      o.allowGuids.insert(s.guid);
    o.linkPollPs = 10 * kMs;
    o.lostContactPs = 500 * kMs;
    return o;
  }
  Status init() {
    Status out(ErrorCode::kInternal, "not done");
    backend->initialize([&](Status s) { out = s; });
    sched.runAll();
    return out;
  }
  Result<LinkPowerState> set(PortId p, bool on) {
    Result<LinkPowerState> out = Status(ErrorCode::kInternal, "not done");
    backend->applyLinkState(p, on, [&](Result<LinkPowerState> r) { out = r; });
    sched.runUntil(sched.now() + 2000 * kMs);
    return out;
  }
  // MADs for which holdIf is true reach the fabric (and their reply comes
  // back) only at release(): a Set held on its way, deterministically.
  // Release before the transport's timeout (50 ms) for the reply to count.
  std::function<bool(const MadAddress&, const MadBytes&)> holdIf;
  std::vector<std::pair<MadAddress, MadBytes>> held;
  void release() {
    auto answer = fab.responder();
    for (const auto& [to, m] : std::exchange(held, {})) {
      if (auto reply = answer(to, m)) mad->inject(*reply);
    }
  }
  agent::VirtualScheduler sched;
  FakeFabric fab;
  std::unique_ptr<FakeMadTransport> mad;
  std::unique_ptr<IbBackend> backend;
  Callbacks cb;
};

// The non-MT up ports of a switch, highest first (the order gating uses).
inline std::vector<PortId> nonMtUpPorts(SwitchId s) {
  const auto mt = fabric::MinimalTree::build(tree()).value();
  std::vector<PortId> out;
  for (auto it = tree().sw(s).upPorts.rbegin(); it != tree().sw(s).upPorts.rend(); ++it) {
    const PortId p{s, *it};
    if (!mt.containsLink(tree().sw(s).ports[*it].link)) out.push_back(p);
  }
  return out;
}

// Re-reads one switch's ports (as on an OpenSM event) and runs until done.
inline Result<std::vector<PortChange>> reread(Rig& rig, fabric::SwitchId s) {
  Result<std::vector<PortChange>> out = Status(ErrorCode::kInternal, "not done");
  rig.backend->rereadPorts(s, [&](Result<std::vector<PortChange>> r) { out = r; });
  rig.sched.runUntil(rig.sched.now() + 100 * kMs);
  return out;
}

}  // namespace ebb::ib::testing
