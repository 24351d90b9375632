#include "tune/grid.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "agent/gating_config.h"
#include "configs/overrides.h"
#include "policies/lpi_params.h"

namespace ebb::tune {

namespace {

constexpr std::size_t kMaxValues = 10'000;

// The well-known dimensions: config path, short column name, and the
// search_space field that sweeps it.
struct NamedDimension {
  const char* path;
  const char* column;
  const char* field;
};
constexpr NamedDimension kNamedDimensions[] = {
    {"gating.policy", "policy", "policy"},
    {"gating.u_off", "u_off", "u_off"},
    {"gating.u_on", "u_on", "u_on"},
    {"gating.check_period_cycles", "period", "check_period_cycles"},
    {"lpi.mode", "lpi", "lpi_mode"},
    {"lpi.hold_ts", "hold", "lpi_hold_ts"},
    {"gating.hysteresis", "h", "hysteresis"},
    {"lpi.adaptive_hold.delay_budget_ns", "budget", "lpi_delay_budget_ns"}};

const NamedDimension* namedDimension(const std::string& path) {
  for (const NamedDimension& d : kNamedDimensions) {
    if (path == d.path) return &d;
  }
  return nullptr;
}

// A dimension's column name: short for the well-known ones.
std::string shortName(const std::string& path) {
  const NamedDimension* d = namedDimension(path);
  return d != nullptr ? d->column : path;
}

// The search_space field that sweeps a config path (a field sweep: its path).
std::string spaceFieldOf(const std::string& path) {
  const NamedDimension* d = namedDimension(path);
  return d != nullptr ? d->field : "field (" + path + ")";
}

// Why a config path cannot be a dimension of the search, or "" if it can.
std::string notASetting(const std::string& path) {
  const auto under = [&](const char* section) {
    const std::string s = std::string(section) + ".";
    return path == section || path.rfind(s, 0) == 0;
  };
  if (under("agent")) {
    return "the emulator never reads agent.* (ebb agent's own settings): every setting would "
           "run the same; sweep the emulator's counterpart (gating.check_period_cycles for "
           "agent.check_period_ms)";
  }
  if (under("workload") || under("fabric") || under("faults") || path == "seed") {
    return "every setting runs on the same fabric and workloads, or the search would "
           "recommend a lighter workload or another fabric; give more workloads in the "
           "spec's workload list, or run one tune per fabric";
  }
  // The units the workload is given in: a message is a packet by default,
  // rates count flits per cycle, durations cycles; sweeping them replays
  // other traffic (a probe saw 98, 56 and 5 messages for three presets).
  for (const char* unit : {"emulator.link_preset", "emulator.cycle_ps", "emulator.flit_bytes",
                           "emulator.packet_bytes"}) {
    if (path == unit) {
      return "it changes the workload's own units (a message is a packet by default, rates are "
             "in flits per cycle, durations in cycles), so each setting would replay other "
             "traffic; run one tune per link preset or packet size";
    }
  }
  if (under("report") || under("oracle") || path == "name") {
    return "it changes what is reported, not what the fabric does; set it in base_config";
  }
  return {};
}

Status checkThresholdValues(const std::vector<double>& values, const char* field, bool isOff) {
  for (double v : values) {
    if (!isOff && !(v > 0 && v <= 1)) {
      return invalidArgument(fmt::format(
          "search_space.{}: {} is outside the map of valid thresholds (0 < U_on <= 1)", field, v));
    }
    if (isOff && !(v > 0 && v < 0.5)) {
      return invalidArgument(
          fmt::format("search_space.{}: {} is outside the map of valid thresholds (static needs "
                      "0 < U_off and U_on > 2*U_off with U_on <= 1, so U_off < 0.5)",
                      field, v));
    }
  }
  return Status::ok();
}

// Fills the dimensions swept, in column order.
Result<std::vector<Dimension>> dimensionsOf(const config::SearchSpace& sp,
                                            const config::Config& base) {
  std::vector<Dimension> dims;
  const auto numbers = [&](const config::Range& r, const std::string& path,
                           const std::string& field) -> Status {
    Result<std::vector<double>> v = expandRange(r, "search_space." + field);
    if (!v) return v.status();
    if (v->empty()) return Status::ok();
    Dimension d{path, {}};
    for (double x : *v)
      d.values.push_back(formatValue(x));
    dims.push_back(std::move(d));
    return Status::ok();
  };
  if (sp.policy_size() > 0) {
    Dimension d{"gating.policy", {}};
    for (int p : sp.policy()) {
      const auto policy = static_cast<config::GatingSpec::Policy>(p);
      if (policy == config::GatingSpec::POLICY_UNSPECIFIED) {
        return invalidArgument("search_space.policy: name STATIC, DYNAMIC, PROPORTIONAL or ALL_ON");
      }
      d.values.push_back(config::GatingSpec::Policy_Name(policy));
    }
    dims.push_back(std::move(d));
  }
  // The policies the grid spans: those swept, or the base's.
  bool anyStatic = sp.policy_size() == 0 && base.gating().policy() == config::GatingSpec::STATIC;
  for (int p : sp.policy())
    anyStatic = anyStatic || p == config::GatingSpec::STATIC;
  Result<std::vector<double>> uOff = expandRange(sp.u_off(), "search_space.u_off");
  if (!uOff) return uOff.status();
  if (Status s = checkThresholdValues(*uOff, "u_off", true); !s.isOk()) return s;
  if (!uOff->empty() && !anyStatic) {
    return invalidArgument(
        "search_space.u_off: only static thresholds have U_off; add STATIC to "
        "search_space.policy");
  }
  if (Status s = numbers(sp.u_off(), "gating.u_off", "u_off"); !s.isOk()) return s;
  bool anyProportional =
      sp.policy_size() == 0 && base.gating().policy() == config::GatingSpec::PROPORTIONAL;
  for (int p : sp.policy())
    anyProportional = anyProportional || p == config::GatingSpec::PROPORTIONAL;
  Result<std::vector<double>> hyst = expandRange(sp.hysteresis(), "search_space.hysteresis");
  if (!hyst) return hyst.status();
  for (double h : *hyst) {
    if (!(h > 0 && h < 1)) {
      return invalidArgument(
          fmt::format("search_space.hysteresis: {} breaks the rule 0 < h < 1", h));
    }
  }
  if (!hyst->empty() && !anyProportional) {
    return invalidArgument(
        "search_space.hysteresis: only the proportional policy has it; add PROPORTIONAL to "
        "search_space.policy");
  }
  if (Status s = numbers(sp.hysteresis(), "gating.hysteresis", "hysteresis"); !s.isOk()) return s;
  Result<std::vector<double>> uOn = expandRange(sp.u_on(), "search_space.u_on");
  if (!uOn) return uOn.status();
  if (Status s = checkThresholdValues(*uOn, "u_on", false); !s.isOk()) return s;
  if (Status s = numbers(sp.u_on(), "gating.u_on", "u_on"); !s.isOk()) return s;
  Result<std::vector<double>> periods =
      expandRange(sp.check_period_cycles(), "search_space.check_period_cycles");
  if (!periods) return periods.status();
  // gating.check_period_cycles is a 64-bit integer: 2^63 and above do not fit.
  constexpr double kPeriodLimit = 9223372036854775808.0;
  for (double p : *periods) {
    if (!(p >= 1) || p != std::floor(p)) {
      return invalidArgument(fmt::format(
          "search_space.check_period_cycles: {} is not a whole number of cycles >= 1", p));
    }
    if (!(p < kPeriodLimit)) {
      return invalidArgument(fmt::format(
          "search_space.check_period_cycles: {} is out of range: a check period is a 64-bit "
          "integer, at most {} cycles",
          p, std::numeric_limits<std::int64_t>::max()));
    }
  }
  if (Status s =
          numbers(sp.check_period_cycles(), "gating.check_period_cycles", "check_period_cycles");
      !s.isOk()) {
    return s;
  }
  // The LPI modes the grid spans: those swept, or the base's.
  const auto isLpi = [](int m) {
    return m != config::LpiSpec::OFF && m != config::LpiSpec::MODE_UNSPECIFIED;
  };
  bool anyLpi = sp.lpi_mode_size() == 0 && isLpi(base.lpi().mode());
  for (int m : sp.lpi_mode())
    anyLpi = anyLpi || isLpi(m);
  for (const config::FieldSweep& f : sp.field())
    anyLpi = anyLpi || f.path() == "lpi.mode";  // its values are checked with the field
  // Without low-power idle a sweep of its own fields would collapse onto one
  // setting unasked.
  const auto needsLpi = [](const char* field, const char* what) {
    return invalidArgument(fmt::format(
        "search_space.{}: only low-power idle has {}, and the grid has none (lpi.mode is OFF); "
        "add FAST_WAKE, DEEP_SLEEP or HYBRID to search_space.lpi_mode",
        field, what));
  };
  if (sp.lpi_mode_size() > 0) {
    Dimension d{"lpi.mode", {}};
    for (int m : sp.lpi_mode()) {
      const auto mode = static_cast<config::LpiSpec::Mode>(m);
      if (mode == config::LpiSpec::MODE_UNSPECIFIED) {
        return invalidArgument(
            "search_space.lpi_mode: name OFF, FAST_WAKE, DEEP_SLEEP or HYBRID (MODE_UNSPECIFIED "
            "is no mode)");
      }
      d.values.push_back(config::LpiSpec::Mode_Name(mode));
    }
    dims.push_back(std::move(d));
  }
  Result<std::vector<double>> holds = expandRange(sp.lpi_hold_ts(), "search_space.lpi_hold_ts");
  if (!holds) return holds.status();
  for (double h : *holds) {
    if (!(h >= 0)) {
      return invalidArgument(fmt::format("search_space.lpi_hold_ts: must be >= 0 (is {})", h));
    }
  }
  if (!holds->empty() && !anyLpi) return needsLpi("lpi_hold_ts", "a hold time");
  if (Status s = numbers(sp.lpi_hold_ts(), "lpi.hold_ts", "lpi_hold_ts"); !s.isOk()) return s;
  Result<std::vector<double>> budgets =
      expandRange(sp.lpi_delay_budget_ns(), "search_space.lpi_delay_budget_ns");
  if (!budgets) return budgets.status();
  for (double b : *budgets) {
    if (Status s = policies::checkDelayBudgetNs(b, "search_space.lpi_delay_budget_ns"); !s.isOk())
      return s;
  }
  if (!budgets->empty() && !anyLpi) return needsLpi("lpi_delay_budget_ns", "a delay budget");
  if (Status s = numbers(sp.lpi_delay_budget_ns(), "lpi.adaptive_hold.delay_budget_ns",
                         "lpi_delay_budget_ns");
      !s.isOk()) {
    return s;
  }
  // A field sweep of the policy makes its values count as swept policies.
  for (const config::FieldSweep& f : sp.field()) {
    if (f.path() != "gating.policy") continue;
    for (const std::string& v : f.values()) {
      anyStatic = anyStatic || v == "STATIC";
      anyProportional = anyProportional || v == "PROPORTIONAL";
    }
  }
  for (int i = 0; i < sp.field_size(); ++i) {
    const config::FieldSweep& f = sp.field(i);
    const std::string where = fmt::format("search_space.field[{}] ({})", i, f.path());
    if (f.path().empty()) return invalidArgument(where + ": path: must name a config field");
    // A setting is what the agents and the hardware are told; the fabric,
    // the traffic and what is measured are the same for every setting.
    if (const std::string why = notASetting(f.path()); !why.empty())
      return invalidArgument(where + ": " + why);
    // A field the grid's policies or modes never read would collapse onto
    // one setting unasked, as the named dimensions' would.
    if (f.path() == "gating.u_off" && !anyStatic) {
      return invalidArgument(where +
                             ": only static thresholds have U_off; add STATIC to "
                             "search_space.policy");
    }
    if (f.path() == "gating.hysteresis" && !anyProportional) {
      return invalidArgument(where +
                             ": only the proportional policy has it; add PROPORTIONAL to "
                             "search_space.policy");
    }
    if (f.path().rfind("lpi.", 0) == 0 && f.path() != "lpi.mode" && !anyLpi) {
      return invalidArgument(where +
                             ": only low-power idle reads it, and the grid has none (lpi.mode is "
                             "OFF); add FAST_WAKE, DEEP_SLEEP or HYBRID to search_space.lpi_mode");
    }
    Dimension d{f.path(), {f.values().begin(), f.values().end()}};
    Result<std::vector<double>> v = expandRange(f.range(), where + ".range");
    if (!v) return v.status();
    if (!d.values.empty() && !v->empty()) {
      return invalidArgument(where + ": give values or range, not both");
    }
    for (double x : *v)
      d.values.push_back(formatValue(x));
    if (d.values.empty()) return invalidArgument(where + ": empty: give values or a range");
    // Two dimensions of one field would each override the other: the grid's
    // rows would claim values that never ran.
    for (const Dimension& other : dims) {
      if (other.path == f.path()) {
        return invalidArgument(fmt::format(
            "{}: {} is swept twice (by a named dimension of search_space or an earlier field); "
            "sweep it once",
            where, f.path()));
      }
    }
    // Each value checked, and two spellings of one value ("0.2", "0.20") would
    // run the same setting twice under two names.
    std::map<std::string, std::string> seen;  // the config each value makes -> the value
    for (const std::string& value : d.values) {
      config::Config probe = base;
      if (Status s = config::applyOverride(probe, f.path() + "=" + value); !s.isOk()) {
        return invalidArgument(where + ": " + s.message());
      }
      const auto [it, fresh] = seen.emplace(probe.ShortDebugString(), value);
      if (!fresh) {
        return invalidArgument(fmt::format("{}: {} and {} are the same value; give it once", where,
                                           it->second, value));
      }
    }
    dims.push_back(std::move(d));
  }
  // The named dimensions: a value given twice would run twice.
  for (const Dimension& d : dims) {
    for (std::size_t i = 0; i < d.values.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (d.values[i] == d.values[j]) {
          return invalidArgument(fmt::format("search_space.{}: {} is given twice; give it once",
                                             spaceFieldOf(d.path), d.values[i]));
        }
      }
    }
  }
  return dims;
}

// Fills the thresholds and the map rule of a setting from its config.
void classify(const config::Config& cfg, Setting& s) {
  const auto& g = cfg.gating();
  s.isStatic = g.policy() == config::GatingSpec::STATIC;
  s.gates = g.policy() != config::GatingSpec::ALL_ON;
  const agent::GatingChoice gating = agent::gatingFromConfig(g);
  s.uOn = gating.thresholds.uOn;
  s.uOff = gating.thresholds.uOff;
  if (!s.gates) return;
  if (!(s.uOn > 0 && s.uOn <= 1)) {
    s.mapRule = "0 < U_on <= 1";
  } else if (s.isStatic && !(s.uOff > 0)) {
    s.mapRule = "0 < U_off";
  } else if (s.isStatic && !(s.uOn > 2 * s.uOff)) {
    s.mapRule = "U_on > 2*U_off";
  }
}

}  // namespace

std::string formatValue(double v) {
  if (std::isfinite(v) && std::abs(v) < 1e15 && v == std::floor(v)) {
    return fmt::format("{}", static_cast<std::int64_t>(v));
  }
  // Rounding to 1e-9 would only add noise to a value this large (1e30 would
  // become 1.0000000000000002e+30).
  if (!std::isfinite(v) || std::abs(v) >= 1e15) return fmt::format("{}", v);
  const double rounded = std::round(v * 1e9) / 1e9;
  return fmt::format("{}", rounded);
}

Result<std::vector<double>> expandRange(const config::Range& r, const std::string& field) {
  const bool hasRange = r.has_from() || r.has_to() || r.has_step();
  if (r.values_size() > 0 && hasRange) {
    return invalidArgument(field + ": give values or from/to/step, not both");
  }
  std::vector<double> out(r.values().begin(), r.values().end());
  for (double v : out) {
    if (!std::isfinite(v)) return invalidArgument(fmt::format("{}: {} is not a number", field, v));
  }
  if (!hasRange) return out;
  // A range missing an end would start or stop at 0 unasked.
  for (const auto& [name, given] : {std::pair{"from", r.has_from()}, std::pair{"to", r.has_to()},
                                    std::pair{"step", r.has_step()}}) {
    if (!given) {
      return invalidArgument(
          fmt::format("{}.{}: missing (a range needs from, to and step)", field, name));
    }
  }
  if (!(r.step() > 0) || !std::isfinite(r.step())) {
    return invalidArgument(fmt::format("{}.step: must be > 0 (is {})", field, r.step()));
  }
  for (const auto& [name, v] : {std::pair{"from", r.from()}, std::pair{"to", r.to()}}) {
    if (!std::isfinite(v)) {
      return invalidArgument(fmt::format("{}.{}: {} is not a number", field, name, v));
    }
  }
  if (!(r.to() >= r.from())) {
    return invalidArgument(
        fmt::format("{}.to: must be >= from ({}) (is {})", field, r.from(), r.to()));
  }
  // Tolerate rounding: 0.1..0.3 by 0.05 has 5 values.
  const double n = std::floor((r.to() - r.from()) / r.step() + 1e-9);
  if (!(n + 1 <= static_cast<double>(kMaxValues))) {  // inf too (from..to over a tiny step)
    const std::string count =
        std::isfinite(n) && n < 1e18 ? fmt::format("{:.0f}", n + 1) : std::string("over 10^18");
    return invalidArgument(fmt::format("{}: from {} to {} by {} gives {} values, more than {}",
                                       field, r.from(), r.to(), r.step(), count, kMaxValues));
  }
  for (int i = 0; i <= static_cast<int>(n); ++i)
    out.push_back(std::round((r.from() + i * r.step()) * 1e9) / 1e9);
  return out;
}

Setting settingOf(const TunePlan& plan, const std::vector<std::size_t>& at, std::string& key) {
  const auto& dims = plan.dimensions;
  const auto valueOr = [&](const std::string& path, const std::string& dflt) {
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (dims[i].path == path) return dims[i].values[at[i]];
    }
    return dflt;
  };
  const std::string policy =
      valueOr("gating.policy", config::GatingSpec::Policy_Name(plan.base.gating().policy()));
  std::string lpi = valueOr("lpi.mode", config::LpiSpec::Mode_Name(plan.base.lpi().mode()));
  // HYBRID with a hold of 0 goes to deep sleep at once: it is DEEP_SLEEP
  // (docs/mechanisms.md §4), one setting, not two that run alike. An adaptive
  // hold moves the hold but not hybrid's fast-wake stay, fixed at the hold it
  // starts from (0), so it is DEEP_SLEEP there too.
  const std::string hold = valueOr("lpi.hold_ts", fmt::format("{}", plan.base.lpi().hold_ts()));
  const bool hybridIsDeepSleep = lpi == "HYBRID" && std::strtod(hold.c_str(), nullptr) == 0;
  if (hybridIsDeepSleep) lpi = "DEEP_SLEEP";
  Setting s;
  key.clear();
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::string& path = dims[i].path;
    // Combinations that do not apply collapse onto one setting.
    if (path == "gating.u_off" && policy != "STATIC") continue;
    if (path == "gating.hysteresis" && policy != "PROPORTIONAL") continue;
    if ((path == "lpi.hold_ts" || path == "lpi.adaptive_hold.delay_budget_ns") &&
        (lpi == "OFF" || lpi == "MODE_UNSPECIFIED"))
      continue;
    if ((path == "gating.u_on" || path == "gating.u_off" || path == "gating.hysteresis") &&
        policy == "ALL_ON")
      continue;
    const std::string& value =
        path == "lpi.mode" && hybridIsDeepSleep ? lpi : dims[i].values[at[i]];
    s.overrides.emplace_back(path, value);
    key += path + "=" + value + ";";
    s.label += fmt::format("{}{}={}", s.label.empty() ? "" : " ", shortName(path), value);
  }
  if (s.label.empty()) s.label = "base";
  return s;
}

std::optional<std::size_t> settingAt(const TunePlan& plan, const std::vector<std::size_t>& at) {
  std::string key;
  settingOf(plan, at, key);
  auto it = plan.settingByKey.find(key);
  if (it == plan.settingByKey.end()) return std::nullopt;
  return it->second;
}

Status expandGrid(const config::SearchSpace& space, TunePlan& plan) {
  Result<std::vector<Dimension>> dims = dimensionsOf(space, plan.base);
  if (!dims) return dims.status();
  if (dims->empty()) {
    return invalidArgument(
        "search_space: empty grid: sweep at least one of policy, u_on, u_off, "
        "check_period_cycles, lpi_mode, lpi_hold_ts, lpi_delay_budget_ns or a field");
  }
  // The cost before the work: the product of the dimensions, exact up to
  // 10^18 (then "over 10^18").
  constexpr std::uint64_t kHuge = 1'000'000'000'000'000'000ULL;
  std::uint64_t combinations = 1;
  std::string sizes;
  for (const Dimension& d : *dims) {
    const std::uint64_t n = d.values.size();
    combinations = n != 0 && combinations > kHuge / n ? kHuge + 1 : combinations * n;
    sizes += fmt::format("{}{} {}", sizes.empty() ? "" : " x ", n, shortName(d.path));
  }
  if (combinations > plan.maxSettings) {
    return invalidArgument(fmt::format(
        "search_space: the grid has {} settings ({}), more than the limit of {}: narrow the "
        "ranges, or raise the limit deliberately with `ebb tune --max-settings`",
        combinations > kHuge ? std::string("over 10^18") : std::to_string(combinations), sizes,
        plan.maxSettings));
  }
  plan.dimensions = std::move(*dims);
  plan.settings.clear();
  plan.settingByKey.clear();
  std::vector<std::size_t> at(plan.dimensions.size(), 0);
  bool done = false;
  while (!done) {
    std::string key;
    Setting s = settingOf(plan, at, key);
    if (plan.settingByKey.emplace(key, plan.settings.size()).second) {
      config::Config cfg = plan.base;
      for (const auto& [path, value] : s.overrides) {
        if (Status st = config::applyOverride(cfg, path + "=" + value); !st.isOk()) {
          return invalidArgument("search_space: " + st.message());
        }
      }
      classify(cfg, s);
      s.id = plan.settings.size();
      plan.settings.push_back(std::move(s));
    }
    // The last dimension varies fastest.
    done = true;
    for (std::size_t i = plan.dimensions.size(); i-- > 0;) {
      if (++at[i] < plan.dimensions[i].values.size()) {
        done = false;
        break;
      }
      at[i] = 0;
    }
  }
  if (plan.validSettings() == 0) {
    return invalidArgument(
        "search_space: empty grid: no setting lies in the map of valid thresholds (static "
        "needs U_on > 2*U_off)");
  }
  return Status::ok();
}

}  // namespace ebb::tune
