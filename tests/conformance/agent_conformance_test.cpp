// One scripted scenario, two backends: the same SwitchAgent code over the
// emulator (SimBackend, per-direction gating) and over InfiniBand MADs
// (IbBackend on a scripted subnet, whole-link gating) must behave alike.
//   1. No load: every non-MT link goes off, no MT link ever does.
//   2. Load on one leaf: it turns its up links on, lowest first, one per period.
//   3. Load gone: it turns them off again, highest first, back to the MT.
// The leaf's decisions are compared between the backends, step for step.
// A 4-ary 2-tree: on a 3-level tree in-band management adds a rule the
// emulator does not need (a link whose loss would leave a switch with links
// on out of reach of management is refused), so the runs may differ there by
// design (docs/ib_agent.md).
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "agent/agent_host.h"
#include "agent/virtual_scheduler.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "ib_backend/ib_backend.h"
#include "ib_backend/in_band_guard.h"
#include "sim_backend/sim_backend.h"
#include "tests/ib_backend/fake_fabric.h"

namespace ebb::agent {
namespace {

using fabric::Direction;
using fabric::HostId;
using fabric::LinkId;
using fabric::SwitchId;

const fabric::Topology& tree() {
  static const fabric::Topology t = fabric::KAryNTree::make(4, 2).value().build();
  return t;
}
const fabric::MinimalTree& mt() {
  static const fabric::MinimalTree m = fabric::MinimalTree::build(tree()).value();
  return m;
}
SwitchId loadedLeaf() {
  return tree().leafOf(HostId(0));
}

// What the scenario sees of a backend's fabric.
class World {
 public:
  virtual ~World() = default;
  virtual Backend& backend() = 0;
  virtual VirtualScheduler& sched() = 0;
  virtual TimePs period() const = 0;
  // Whether the link carries ascending traffic now (on the real fabric).
  virtual bool upOn(LinkId l) = 0;
  // Drive the loaded leaf's up links hard (true) or not at all, from now on.
  virtual void setLoad(bool high) = 0;
  virtual const char* name() const = 0;
  // What the daemon sets up on the host before starting it.
  virtual void prepare(AgentHost&) {}
};

class SimWorld final : public World {
 public:
  SimWorld() : emu_(tree(), sim::EmulatorConfig{}, sched_), backend_(emu_) {}
  Backend& backend() override { return backend_; }
  VirtualScheduler& sched() override { return sched_; }
  TimePs period() const override { return AgentConfig{}.checkPeriodPs; }
  bool upOn(LinkId l) override { return emu_.usable(l, Direction::kUp); }
  // The leaf's four hosts each send half their line rate to another leaf:
  // u_up >= 0.5 with any number of up links on.
  void setLoad(bool high) override {
    high_ = high;
    if (high && !ticking_) tick();
  }
  const char* name() const override { return "SimBackend"; }

 private:
  void tick() {
    ticking_ = high_;
    if (!high_) return;
    const TimePs step = 2 * emu_.config().serializationPs(256);  // half the line rate
    for (HostId::rep_type h = 0; h < 4; ++h)
      emu_.sendMessage(HostId(h), HostId(h + 4), 256);
    sched_.after(step, Phase::kControl, [this] { tick(); });
  }
  VirtualScheduler sched_;
  sim::FabricEmulator emu_;
  sim::SimBackend backend_;
  bool high_ = false;
  bool ticking_ = false;
};

class IbWorld final : public World {
 public:
  static constexpr TimePs kMs = 1'000'000'000;
  // kReduceWidth: links are gated by LinkWidthEnabled instead of disabled.
  explicit IbWorld(ib::GatingAction action = ib::GatingAction::kDisablePort)
      : fab_(tree(), HostId(5)), action_(action) {
    fab_.trainAfter = 4;  // a port set Polling trains after a few MADs
    ib::TransportOptions t;
    t.timeoutPs = 20 * kMs;
    t.retries = 1;
    mad_ = std::make_unique<ib::FakeMadTransport>(sched_, t, fab_.responder());
    ib::IbBackendOptions o;
    for (const fabric::Switch& s : tree().switches())
      o.allowGuids.insert(s.guid);
    o.linkPollPs = 10 * kMs;
    o.lostContactPs = 10'000 * kMs;
    o.action = action;
    backend_ = std::make_unique<ib::IbBackend>(tree(), *mad_, sched_, o);
    Status st(ErrorCode::kInternal, "not done");
    backend_->initialize([&](Status s) { st = s; });
    sched_.runAll();
    EXPECT_TRUE(st.isOk()) << st.toString();
  }
  Backend& backend() override { return *backend_; }
  VirtualScheduler& sched() override { return sched_; }
  TimePs period() const override { return 100 * kMs; }
  // Width mode: on = up and not at 1x (the fake fabric's links are 4x).
  bool upOn(LinkId l) override {
    if (action_ == ib::GatingAction::kDisablePort) return fab_.linkUp(l);
    return fab_.linkUp(l) && fab_.widthActive(tree().link(l).upper) != ib::kWidth1x;
  }
  // PortXmitData of the leaf's live up ports grows by far more than U_on of
  // their capacity every tenth of a period.
  void setLoad(bool high) override {
    high_ = high;
    if (high && !ticking_) tick();
  }
  const char* name() const override {
    return action_ == ib::GatingAction::kDisablePort ? "IbBackend" : "IbBackend (reduce width)";
  }
  void prepare(AgentHost& host) override {
    // The single-failure rule is in-band control's alone (the emulator's
    // agents act at their own switches): the backends are compared without it.
    ib::attachGuard(*backend_, host.guard(), agent::Resilience::kNone);
  }

 private:
  void tick() {
    ticking_ = high_;
    if (!high_) return;
    const fabric::Switch& leaf = tree().sw(loadedLeaf());
    for (std::uint16_t p : leaf.upPorts) {
      // Load only on the links the agent counts as on (in width mode a 1x
      // link stays up but is off), so both actions see the same utilization.
      if (upOn(leaf.ports[p].link)) fab_.xmitWords({loadedLeaf(), p}) += 1'000'000'000;
    }
    sched_.after(period() / 10, Phase::kControl, [this] { tick(); });
  }
  VirtualScheduler sched_;
  ib::testing::FakeFabric fab_;
  std::unique_ptr<ib::FakeMadTransport> mad_;
  std::unique_ptr<ib::IbBackend> backend_;
  ib::GatingAction action_;
  bool high_ = false;
  bool ticking_ = false;
};

// One decision of the loaded leaf, in check periods since the phase began.
struct Step {
  std::uint16_t port;
  bool on;
  bool operator==(const Step&) const = default;
};
// A decision with the check period (since its phase began) it was made in.
struct TimedStep {
  Step step;
  TimePs period;
};
std::vector<Step> steps(const std::vector<TimedStep>& t) {
  std::vector<Step> out;
  for (const TimedStep& x : t)
    out.push_back(x.step);
  return out;
}
// One decision per check period: consecutive periods.
bool onePerPeriod(const std::vector<TimedStep>& t) {
  for (std::size_t i = 1; i < t.size(); ++i) {
    if (t[i].period != t[i - 1].period + 1) return false;
  }
  return true;
}

struct Outcome {
  std::vector<TimedStep> rampUp, rampDown;
  std::size_t nonMtOffWhenIdle = 0, nonMtOffAtEnd = 0;
  std::size_t mtOffEver = 0, refusedSets = 0;
  bool failedSafe = false;
};

std::size_t nonMtUpOff(World& w) {
  std::size_t n = 0;
  for (LinkId::rep_type l = 0; l < tree().numLinks(); ++l) {
    const LinkId id(l);
    if (!tree().link(id).lowerIsHost && !mt().containsLink(id) && !w.upOn(id)) ++n;
  }
  return n;
}

Outcome runScenario(World& w) {
  Outcome out;
  AgentConfig cfg;  // dynamic thresholds, U_on = 0.15
  cfg.checkPeriodPs = w.period();
  std::vector<TimedStep>* phase = nullptr;
  TimePs phaseStart = 0;
  AgentHost host(
      tree(), mt(), cfg, w.backend(), w.sched(), fabric::LinkStates::allOn(tree()),
      [&](const DecisionRecord& d) {
        if (!d.refused.empty()) {
          ADD_FAILURE() << w.name() << ": " << tree().describePort(d.port) << " " << d.source
                        << ": " << d.refused;
          ++out.refusedSets;
          return;
        }
        const LinkId l = tree().sw(d.port.sw).ports[d.port.index].link;
        if (!d.turnOn && mt().containsLink(l)) ++out.mtOffEver;
        if (phase && d.port.sw == loadedLeaf() && d.up) {
          phase->push_back({{d.port.index, d.turnOn}, (d.time - phaseStart) / w.period()});
        }
      });
  w.prepare(host);
  host.startAll();
  auto runPeriods = [&](int n) { w.sched().runUntil(w.sched().now() + n * w.period()); };
  runPeriods(12);
  out.nonMtOffWhenIdle = nonMtUpOff(w);
  // Load starts half a period off the agents' sampling instants: starting
  // exactly on one would make the first sample see it or not depending on
  // how many MADs the backend has in flight at that instant.
  w.sched().runUntil(w.sched().now() + w.period() / 2);
  phase = &out.rampUp;
  phaseStart = w.sched().now();
  w.setLoad(true);
  runPeriods(8);
  phase = &out.rampDown;
  phaseStart = w.sched().now();
  w.setLoad(false);
  runPeriods(12);
  out.nonMtOffAtEnd = nonMtUpOff(w);
  out.failedSafe = host.failedSafe();
  host.stopAll();
  return out;
}

std::size_t nonMtSwitchLinks() {
  std::size_t n = 0;
  for (LinkId::rep_type l = 0; l < tree().numLinks(); ++l) {
    if (!tree().link(LinkId(l)).lowerIsHost && !mt().containsLink(LinkId(l))) ++n;
  }
  return n;
}

// 0: SimBackend, 1: IbBackend disabling ports, 2: IbBackend reducing widths.
class Conformance : public ::testing::TestWithParam<int> {
 protected:
  std::unique_ptr<World> make() const {
    if (GetParam() == 1) return std::make_unique<IbWorld>();
    if (GetParam() == 2) return std::make_unique<IbWorld>(ib::GatingAction::kReduceWidth);
    return std::make_unique<SimWorld>();
  }
};

TEST_P(Conformance, GatesToTheMinimalTreeFollowsLoadAndBack) {
  auto w = make();
  const Outcome o = runScenario(*w);
  EXPECT_FALSE(o.failedSafe);
  EXPECT_EQ(o.mtOffEver, 0u);
  EXPECT_EQ(o.refusedSets, 0u);
  EXPECT_EQ(o.nonMtOffWhenIdle, nonMtSwitchLinks());
  EXPECT_EQ(o.nonMtOffAtEnd, nonMtSwitchLinks());
  // The leaf's three non-MT up links: on under load, lowest first, one per
  // period; off after, highest first.
  const fabric::Switch& leaf = tree().sw(loadedLeaf());
  std::vector<Step> up, down;
  for (std::uint16_t p : leaf.upPorts) {
    if (!mt().containsLink(leaf.ports[p].link)) up.push_back({p, true});
  }
  ASSERT_EQ(up.size(), 3u);
  for (auto it = up.rbegin(); it != up.rend(); ++it)
    down.push_back({it->port, false});
  EXPECT_EQ(steps(o.rampUp), up);
  EXPECT_EQ(steps(o.rampDown), down);
  EXPECT_TRUE(onePerPeriod(o.rampUp));
  EXPECT_TRUE(onePerPeriod(o.rampDown));
}

INSTANTIATE_TEST_SUITE_P(Backends, Conformance, ::testing::Values(0, 1, 2),
                         [](const ::testing::TestParamInfo<int>& tpi) {
                           return std::string(tpi.param == 0   ? "SimBackend"
                                              : tpi.param == 1 ? "IbBackend"
                                                               : "IbBackendReduceWidth");
                         });

// The loaded leaf's steps, in the same periods, and the same links off.
void expectSameDecisions(const Outcome& a, const Outcome& b) {
  ASSERT_EQ(steps(a.rampUp), steps(b.rampUp));
  ASSERT_EQ(steps(a.rampDown), steps(b.rampDown));
  for (std::size_t i = 0; i < a.rampUp.size(); ++i) {
    EXPECT_EQ(a.rampUp[i].period, b.rampUp[i].period) << "ramp up, step " << i;
  }
  for (std::size_t i = 0; i < a.rampDown.size(); ++i) {
    EXPECT_EQ(a.rampDown[i].period, b.rampDown[i].period) << "ramp down, step " << i;
  }
  EXPECT_EQ(a.nonMtOffWhenIdle, b.nonMtOffWhenIdle);
  EXPECT_EQ(a.nonMtOffAtEnd, b.nonMtOffAtEnd);
}

// Both backends, one scenario: the loaded leaf decides the same, step for step.
TEST(ConformanceAcrossBackends, TheLoadedLeafDecidesTheSameOnBoth) {
  SimWorld sim;
  IbWorld ib;
  const Outcome a = runScenario(sim);
  const Outcome b = runScenario(ib);
  expectSameDecisions(a, b);
}

// Width reduction instead of disabling: the same decisions in the same
// periods (the agents see a 1x link as off; only the Set differs).
TEST(ConformanceAcrossBackends, ReducingWidthsDecidesTheSameAsDisabling) {
  IbWorld disable;
  IbWorld width(ib::GatingAction::kReduceWidth);
  const Outcome a = runScenario(disable);
  const Outcome b = runScenario(width);
  ASSERT_FALSE(a.rampUp.empty());
  expectSameDecisions(a, b);
}

}  // namespace
}  // namespace ebb::agent
