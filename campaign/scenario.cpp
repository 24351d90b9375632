#include "campaign/scenario.h"
#include "common/hash.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "agent/switch_agent.h"
#include "common/fs_util.h"
#include "common/hash.h"
#include "fabric/faults.h"
#include "fabric/minimal_tree.h"
#include "sim_backend/emulator_config.h"

namespace ebb::campaign {

namespace {

using config::FaultEventSpec;
using fabric::Direction;
using fabric::LinkId;
using fabric::SwitchId;

// Draws from our own arithmetic rather than std:: distributions, whose
// results differ between standard libraries: a scenario is the same config
// for the same seed everywhere.
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return splitmix64(state_++ * 0xD1342543DE82EF95ULL + 1); }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  double between(double lo, double hi) { return lo + (hi - lo) * unit(); }
  std::int64_t between(std::int64_t lo, std::int64_t hi) {  // [lo, hi]
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo + 1)));
  }
  bool chance(double p) { return unit() < p; }

 private:
  std::uint64_t state_;
};

double round4(double x) {
  return std::round(x * 1e4) / 1e4;
}

// A load level: low loads let the agents gate links off (so a failure meets
// a thin fabric), high ones keep them on.
double drawRate(Draw& d, double maxRate) {
  const double u = d.unit();
  if (u < 0.4) return round4(d.between(0.002, 0.05));
  if (u < 0.75) return round4(d.between(0.05, std::min(0.25, maxRate)));
  return round4(d.between(std::min(0.25, maxRate), maxRate));
}

void addPoint(config::RatePointsSpec& rp, std::int64_t at, double rate) {
  config::RatePoint* p = rp.add_point();
  p->set_at_cycles(at);
  p->set_rate(rate);
}

// Steps and ramps between drawn levels, one change every 2 to 6 periods.
config::RatePointsSpec drawLoad(Draw& d, std::int64_t period, std::int64_t horizon,
                                double maxRate) {
  config::RatePointsSpec rp;
  double rate = drawRate(d, maxRate);
  addPoint(rp, 0, rate);
  std::int64_t t = 0;
  while (true) {
    t += d.between(2 * period, 6 * period);
    if (t + 1 >= horizon) break;
    const double next = drawRate(d, maxRate);
    if (d.chance(0.5)) {  // a step: two points one cycle apart
      addPoint(rp, t, rate);
      addPoint(rp, t + 1, next);
    } else {  // a ramp from the previous point
      addPoint(rp, t, next);
    }
    rate = next;
  }
  addPoint(rp, horizon, rate);
  return rp;
}

// A failed part as the generator tracks it (the config may name it by
// minimal_tree_up, which the runner resolves at the event's time).
struct Part {
  bool isSwitch = false;
  SwitchId sw;
  LinkId link;
  FaultEventSpec::Scope scope = FaultEventSpec::LINK;
};

struct Drawn {
  FaultEventSpec spec;
  Part part;
};

void apply(const fabric::Topology& topo, fabric::FaultSet& fs, const Drawn& e) {
  const bool fail = e.spec.action() != FaultEventSpec::REPAIR;
  if (e.part.isSwitch) {
    fail ? fs.failSwitch(topo, e.part.sw) : fs.repairSwitch(topo, e.part.sw);
  } else if (!fail) {
    fs.repairLink(topo, e.part.link);
  } else if (e.part.scope == FaultEventSpec::UP_DIRECTION) {
    fs.failLink(e.part.link, Direction::kUp);
  } else if (e.part.scope == FaultEventSpec::DOWN_DIRECTION) {
    fs.failLink(e.part.link, Direction::kDown);
  } else {
    fs.failLink(e.part.link);
  }
}

// What has failed just before `at`, by the events drawn so far.
fabric::FaultSet failedBefore(const fabric::Topology& topo, std::vector<Drawn> events,
                              std::int64_t at) {
  std::stable_sort(events.begin(), events.end(), [](const Drawn& a, const Drawn& b) {
    return a.spec.at_cycles() < b.spec.at_cycles();
  });
  fabric::FaultSet fs(topo);
  for (const Drawn& e : events) {
    if (e.spec.at_cycles() > at) break;  // the same cycle counts: those come first
    if (e.spec.action() != FaultEventSpec::RESTART_AGENT) apply(topo, fs, e);
  }
  return fs;
}

FaultEventSpec::Scope drawLinkScope(Draw& d) {
  const double u = d.unit();
  return u < 0.7    ? FaultEventSpec::LINK
         : u < 0.85 ? FaultEventSpec::UP_DIRECTION
                    : FaultEventSpec::DOWN_DIRECTION;
}

// A link fault at `sw`'s port label `label`, named by switch and port.
Drawn linkFault(const fabric::Topology& topo, SwitchId sw, std::uint16_t label,
                FaultEventSpec::Scope scope) {
  Drawn e;
  e.part.sw = sw;
  e.part.link = topo.sw(sw).ports[label].link;
  e.part.scope = scope;
  e.spec.set_switch_name(topo.sw(sw).name);
  e.spec.set_port(static_cast<std::uint32_t>(label) + 1);
  e.spec.set_scope(scope);
  return e;
}

template <class T>
const T& pick(Draw& d, const std::vector<T>& v) {
  return v[d.below(v.size())];
}

// One failure at `at` of a part not failed then, or nothing when the drawn
// kind has no candidate left.
std::optional<Drawn> drawFailure(Draw& d, const fabric::Topology& topo, const fabric::FaultSet& fs,
                                 bool mayNameMinimalTreeUp) {
  const int leafLevel = topo.depth() - 1;
  const double kind = d.unit();
  std::vector<SwitchId> candidates;
  if (kind < 0.30) {
    // A link of the minimal tree as it stands after the failures so far.
    const fabric::Rehomed mt = fabric::MinimalTree::build(topo, fs);
    for (std::uint32_t s = 0; s < topo.numSwitches(); ++s) {
      const SwitchId id(s);
      const auto up =
          mt.tree.root().valid() && mt.tree.containsSwitch(id) ? mt.tree.upPort(id) : std::nullopt;
      if (up && !fs.linkFailed(topo.sw(id).ports[*up].link)) candidates.push_back(id);
    }
    if (candidates.empty()) return std::nullopt;
    const SwitchId sw = pick(d, candidates);
    Drawn e = linkFault(topo, sw, *mt.tree.upPort(sw), drawLinkScope(d));
    if (mayNameMinimalTreeUp && d.chance(0.5)) {
      e.spec.clear_port();
      e.spec.set_minimal_tree_up(true);
    }
    return e;
  }
  if (kind < 0.55) {
    // Any switch-to-switch cable, by an up port of its lower switch.
    for (int level = 1; level <= leafLevel; ++level) {
      for (SwitchId s : topo.switchesAtLevel(level))
        candidates.push_back(s);
    }
    if (candidates.empty()) return std::nullopt;
    const SwitchId sw = pick(d, candidates);
    if (topo.sw(sw).upPorts.empty()) return std::nullopt;
    const std::uint16_t label = pick(d, topo.sw(sw).upPorts);
    if (fs.linkFailed(topo.sw(sw).ports[label].link)) return std::nullopt;
    return linkFault(topo, sw, label, drawLinkScope(d));
  }
  if (kind < 0.70) {
    // A root, by level and index.
    const std::vector<SwitchId>& roots = topo.switchesAtLevel(0);
    const auto index = static_cast<std::uint32_t>(d.below(roots.size()));
    if (fs.switchFailed(roots[index])) return std::nullopt;
    Drawn e;
    e.part.isSwitch = true;
    e.part.sw = roots[index];
    e.part.scope = FaultEventSpec::SWITCH;
    e.spec.set_scope(FaultEventSpec::SWITCH);
    e.spec.set_level(0);
    e.spec.set_index(index);
    return e;
  }
  if (kind < 0.85) {
    // A switch below the roots, by name (a leaf cuts its hosts off).
    for (int level = 1; level <= leafLevel; ++level) {
      for (SwitchId s : topo.switchesAtLevel(level))
        candidates.push_back(s);
    }
    if (candidates.empty()) return std::nullopt;
    const SwitchId sw = pick(d, candidates);
    if (fs.switchFailed(sw)) return std::nullopt;
    Drawn e;
    e.part.isSwitch = true;
    e.part.sw = sw;
    e.part.scope = FaultEventSpec::SWITCH;
    e.spec.set_scope(FaultEventSpec::SWITCH);
    e.spec.set_switch_name(topo.sw(sw).name);
    return e;
  }
  // A host's cable, by its leaf's down port (cuts the host off).
  const SwitchId leaf = pick(d, topo.switchesAtLevel(leafLevel));
  if (topo.sw(leaf).downPorts.empty()) return std::nullopt;
  const std::uint16_t label = pick(d, topo.sw(leaf).downPorts);
  if (fs.linkFailed(topo.sw(leaf).ports[label].link)) return std::nullopt;
  return linkFault(topo, leaf, label, FaultEventSpec::LINK);
}

std::vector<Drawn> drawFaults(Draw& d, const fabric::Topology& topo, std::int64_t period,
                              std::int64_t horizon, const ScenarioShape& shape) {
  std::vector<Drawn> events;
  const auto failures = d.between(static_cast<std::int64_t>(shape.minFailures),
                                  static_cast<std::int64_t>(shape.maxFailures));
  // Failures from the first period to two periods before the end, in order.
  std::vector<std::int64_t> times;
  for (std::int64_t i = 0; i < failures; ++i) {
    times.push_back(d.between(period, std::max(period, horizon - 2 * period)));
  }
  std::sort(times.begin(), times.end());
  bool repairedYet = false;
  for (std::int64_t at : times) {
    const fabric::FaultSet fs = failedBefore(topo, events, at);
    // The runner resolves minimal_tree_up at the event's time: name the link
    // that way only while no repair may have moved the tree back yet, and
    // only for a failure not repaired (a repair names the port).
    const bool repair = d.chance(shape.repairShare);
    const std::int64_t repairAt = at + d.between(2 * period, 8 * period);
    const bool repaired = repair && repairAt < horizon - period;
    std::optional<Drawn> fail = drawFailure(d, topo, fs, !repairedYet && !repaired);
    if (!fail) continue;
    fail->spec.set_at_cycles(at);
    fail->spec.set_action(FaultEventSpec::FAIL);
    events.push_back(*fail);
    if (repaired) {
      Drawn r = *fail;
      r.spec.set_action(FaultEventSpec::REPAIR);
      r.spec.set_at_cycles(repairAt);
      events.push_back(r);
      repairedYet = true;
    }
  }
  // One agent restart, anywhere in the run.
  Drawn restart;
  const SwitchId sw(static_cast<std::uint32_t>(d.below(topo.numSwitches())));
  restart.part.sw = sw;
  restart.spec.set_action(FaultEventSpec::RESTART_AGENT);
  restart.spec.set_switch_name(topo.sw(sw).name);
  restart.spec.set_at_cycles(d.between(period, horizon - period));
  events.push_back(restart);
  std::stable_sort(events.begin(), events.end(), [](const Drawn& a, const Drawn& b) {
    return a.spec.at_cycles() < b.spec.at_cycles();
  });
  return events;
}

}  // namespace

std::uint64_t scenarioSeed(std::uint64_t campaignSeed, std::uint64_t index) {
  const std::uint64_t s = splitmix64(splitmix64(campaignSeed) ^ (index + 1));
  return s == 0 ? 1 : s;
}

std::int64_t checkPeriodCycles(const config::Config& base) {
  const std::int64_t p = base.gating().check_period_cycles();
  return p > 0 ? p : agent::AgentConfig{}.checkPeriodPs / sim::EmulatorConfig{}.cyclePs;
}

config::Config makeScenario(const config::Config& base, const fabric::Topology& topo,
                            std::uint64_t seed, const ScenarioShape& shape,
                            const std::string& baseDir) {
  Draw d(seed);
  const std::int64_t period = checkPeriodCycles(base);
  const std::int64_t horizon = period * scenarioPeriods(shape);
  config::Config c = base;
  c.set_name(fmt::format("faults scenario {}", seed));
  c.set_seed(seed);
  if (c.fabric().has_topology_file()) {  // an empty baseDir: the current folder
    const std::filesystem::path p(c.fabric().topology_file().path());
    if (p.is_relative()) {
      c.mutable_fabric()->mutable_topology_file()->set_path(
          std::filesystem::path(absolutePath(std::filesystem::path(baseDir) / p))
              .lexically_normal()
              .string());
    }
  }
  // The load: the base's message sizes and arrivals, a drawn rate profile.
  config::WorkloadSpec& w = *c.mutable_workload();
  const config::WorkloadSpec baseLoad = base.workload();
  w.Clear();
  if (baseLoad.has_message_bytes()) w.set_message_bytes(baseLoad.message_bytes());
  if (baseLoad.has_max_messages()) w.set_max_messages(baseLoad.max_messages());
  if (baseLoad.has_message_bytes_min()) w.set_message_bytes_min(baseLoad.message_bytes_min());
  if (baseLoad.has_message_bytes_max()) w.set_message_bytes_max(baseLoad.message_bytes_max());
  w.set_arrivals(baseLoad.arrivals());
  *w.mutable_rate_points() = drawLoad(d, period, horizon, shape.maxRate);
  if (d.chance(shape.hotspotShare) && topo.numHosts() > 4) {
    config::HotspotSpec& h = *w.mutable_hotspot();
    const auto count = d.between(std::int64_t{1}, std::int64_t{3});
    std::vector<std::uint64_t> hosts;
    while (static_cast<std::int64_t>(hosts.size()) < count) {
      const std::uint64_t host = d.below(topo.numHosts());
      if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
    }
    for (std::uint64_t host : hosts)
      h.add_host(topo.hosts()[host].name);
    h.set_fraction(round4(d.between(0.2, 0.6)));
  }
  c.mutable_report()->set_skip_baseline(true);
  c.mutable_report()->set_skip_plots(true);
  // The fault timing of the base, the events drawn here.
  config::FaultsSpec& f = *c.mutable_faults();
  f.clear_event();
  f.clear_random();
  for (const Drawn& e : drawFaults(d, topo, period, horizon, shape))
    *f.add_event() = e.spec;
  return c;
}

}  // namespace ebb::campaign
