#include "replay/run_spec.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "agent/gating_config.h"

namespace ebb::replay {

namespace {

template <class T>
T orDefault(T v, T def) {
  return v == T{} ? def : v;
}

Status checkPositive(const char* field, std::int64_t v) {
  if (v < 0) return invalidArgument(fmt::format("{}: must be > 0 (is {})", field, v));
  return Status::ok();
}

// workload.rate_points: at least two points, times never decreasing.
Result<workload::RateProfile> rateFromPoints(const config::RatePointsSpec& spec, TimePs cyclePs) {
  if (spec.point_size() < 2) {
    return invalidArgument(
        fmt::format("workload.rate_points: needs at least 2 points (has {})", spec.point_size()));
  }
  std::vector<std::pair<TimePs, double>> points;
  for (int i = 0; i < spec.point_size(); ++i) {
    const config::RatePoint& p = spec.point(i);
    const std::string field = fmt::format("workload.rate_points.point[{}]", i);
    if (p.at_cycles() < 0 || p.at_cycles() > std::numeric_limits<TimePs>::max() / cyclePs) {
      return invalidArgument(fmt::format("{}.at_cycles: must be in 0..{} (is {})", field,
                                         std::numeric_limits<TimePs>::max() / cyclePs,
                                         p.at_cycles()));
    }
    if (i > 0 && p.at_cycles() < spec.point(i - 1).at_cycles()) {
      return invalidArgument(fmt::format("{}.at_cycles: times must not decrease ({} after {})",
                                         field, p.at_cycles(), spec.point(i - 1).at_cycles()));
    }
    if (!(p.rate() >= 0) || !std::isfinite(p.rate())) {
      return invalidArgument(fmt::format("{}.rate: must be >= 0 (is {})", field, p.rate()));
    }
    points.emplace_back(p.at_cycles() * cyclePs, p.rate());
  }
  if (points.back().first == 0) {
    return invalidArgument("workload.rate_points: the last point must come after 0 cycles");
  }
  return workload::RateProfile(std::move(points));
}

// workload.hotspot, checked without the topology (names are resolved against
// it when the traffic starts: workload::resolveHotspot).
Result<workload::Hotspot> hotspotFromConfig(const config::WorkloadSpec& w) {
  const config::HotspotSpec& h = w.hotspot();
  switch (w.pattern_case()) {
    case config::WorkloadSpec::kTrafficFile:
    case config::WorkloadSpec::kTrace:
    case config::WorkloadSpec::kMix:
    case config::WorkloadSpec::kCollective:
      return invalidArgument(
          "workload.hotspot: applies to synthetic traffic only (alonso_ramp, uniform, "
          "rate_points), not to traffic files, traces or jobs");
    default:
      break;
  }
  if (!(h.fraction() > 0) || h.fraction() > 1) {
    return invalidArgument(
        fmt::format("workload.hotspot.fraction: must be in (0, 1] (is {})", h.fraction()));
  }
  if (h.hosts() > 0 && h.host_size() > 0) {
    return invalidArgument("workload.hotspot: give hosts (a count) or host (names), not both");
  }
  if (h.hosts() == 0 && h.host_size() == 0) {
    return invalidArgument(
        "workload.hotspot: needs hosts (how many hot hosts) or host (their names)");
  }
  workload::Hotspot spot;
  spot.fraction = h.fraction();
  spot.count = h.hosts();
  spot.hostNames.assign(h.host().begin(), h.host().end());
  return spot;
}

}  // namespace

Result<RunSpec> buildRunSpec(const config::Config& cfg, const std::string& baseDir) {
  RunSpec r;
  r.name = cfg.name().empty() ? "run" : cfg.name();
  // Emulator.
  const auto& e = cfg.emulator();
  for (auto [field, v] :
       {std::pair{"emulator.cycle_ps", e.cycle_ps()},
        std::pair{"emulator.flit_bytes", e.flit_bytes()},
        std::pair{"emulator.packet_bytes", e.packet_bytes()}, std::pair{"emulator.vcs", e.vcs()},
        std::pair{"emulator.vc_buffer_bytes", e.vc_buffer_bytes()},
        std::pair{"emulator.link_latency_cycles", e.link_latency_cycles()},
        std::pair{"emulator.routing_delay_cycles", e.routing_delay_cycles()}}) {
    if (Status s = checkPositive(field, v); !s.isOk()) return s;
  }
  sim::EmulatorConfig& em = r.emulator;
  const sim::EmulatorConfig defaults;
  em.cyclePs = orDefault<std::int64_t>(e.cycle_ps(), defaults.cyclePs);
  em.flitBytes = orDefault<std::int64_t>(e.flit_bytes(), defaults.flitBytes);
  em.packetBytes = orDefault<std::int64_t>(e.packet_bytes(), 16 * em.flitBytes);
  em.vcs = orDefault<std::int64_t>(e.vcs(), defaults.vcs);
  em.vcBufferBytes = orDefault<std::int64_t>(e.vc_buffer_bytes(), em.packetBytes);
  em.linkLatencyPs =
      orDefault<std::int64_t>(e.link_latency_cycles(), defaults.linkLatencyPs / defaults.cyclePs) *
      em.cyclePs;
  em.routingDelayPs = orDefault<std::int64_t>(e.routing_delay_cycles(),
                                              defaults.routingDelayPs / defaults.cyclePs) *
                      em.cyclePs;
  em.upRouting = e.up_routing() == config::EmulatorSpec::RANDOM ? sim::UpRouting::kRandom
                                                                : sim::UpRouting::kAdaptive;
  em.seed = orDefault<std::uint64_t>(cfg.seed(), defaults.seed);
  // Gating.
  const auto& g = cfg.gating();
  for (auto [field, v] : {std::pair{"gating.check_period_cycles", g.check_period_cycles()},
                          std::pair{"gating.turn_on_cycles", g.turn_on_cycles()},
                          std::pair{"gating.turn_off_cycles", g.turn_off_cycles()},
                          std::pair{"gating.control_latency_cycles", g.control_latency_cycles()}}) {
    if (Status s = checkPositive(field, v); !s.isOk()) return s;
  }
  // Defaults in cycles of the default cycle, from the option structs.
  const agent::AgentConfig agentDefaults;
  const std::int64_t period = orDefault<std::int64_t>(
      g.check_period_cycles(), agentDefaults.checkPeriodPs / defaults.cyclePs);
  const std::int64_t tOn =
      orDefault<std::int64_t>(g.turn_on_cycles(), defaults.turnOnPs / defaults.cyclePs);
  const std::int64_t tOff =
      orDefault<std::int64_t>(g.turn_off_cycles(), defaults.turnOffPs / defaults.cyclePs);
  if (tOn > period) {
    return invalidArgument(fmt::format(
        "gating.turn_on_cycles: T_on ({}) must not exceed the check period ({}): the network "
        "must settle between decisions",
        tOn, period));
  }
  if (tOff > period) {
    return invalidArgument(
        fmt::format("gating.turn_off_cycles: T_off ({}) must not exceed the check "
                    "period ({})",
                    tOff, period));
  }
  em.turnOnPs = tOn * em.cyclePs;
  em.turnOffPs = tOff * em.cyclePs;
  r.agent.checkPeriodPs = period * em.cyclePs;
  r.agent.controlLatencyPs = g.control_latency_cycles() * em.cyclePs;
  const agent::GatingChoice gating = agent::gatingFromConfig(g);
  r.gating = gating.gating;
  r.agent.gating = gating.gating;
  r.agent.thresholds = gating.thresholds;
  r.policyName = gating.gating ? gating.policyName : "all links on";
  if (r.gating) {
    if (Status s = r.agent.thresholds.validate(); !s.isOk()) {
      return invalidArgument("gating: " + s.message());
    }
  }
  Result<InBandDef> inBand = inBandFromConfig(g.in_band(), r.gating);
  if (!inBand) return inBand.status();
  r.inBand = std::move(*inBand);
  // Low-power idle.
  const auto& l = cfg.lpi();
  policies::LpiParams& lp = em.lpi;
  switch (l.mode()) {
    case config::LpiSpec::DEEP_SLEEP:
      lp.mode = policies::LpiMode::kDeepSleep;
      break;
    case config::LpiSpec::FAST_WAKE:
      lp.mode = policies::LpiMode::kFastWake;
      break;
    case config::LpiSpec::HYBRID:
      lp.mode = policies::LpiMode::kHybrid;
      break;
    default:
      lp.mode = policies::LpiMode::kOff;
      break;
  }
  if (!l.link_speed().empty()) {
    if (Status s = lp.setLinkSpeed(l.link_speed()); !s.isOk())
      return invalidArgument("lpi." + s.message());
  }
  if (l.sleep_signal_ps() != 0) lp.sleepSignal = l.sleep_signal_ps();
  if (l.quiet_ps() != 0) lp.quiet = l.quiet_ps();
  if (l.refresh_ps() != 0) lp.refresh = l.refresh_ps();
  if (l.hold_ts() < 0 || !std::isfinite(l.hold_ts())) {
    return invalidArgument(fmt::format("lpi.hold_ts: must be >= 0 (is {})", l.hold_ts()));
  }
  lp.hold = static_cast<TimePs>(l.hold_ts() * static_cast<double>(lp.sleepSignal));
  lp.hybridFastWake = lp.hold;
  if (Status s = em.validate(); !s.isOk()) return s;
  // Workload.
  const auto& w = cfg.workload();
  if (w.message_bytes() < 0) {
    return invalidArgument(
        fmt::format("workload.message_bytes: must be > 0 (is {})", w.message_bytes()));
  }
  r.workload.messageBytes = orDefault<std::int64_t>(w.message_bytes(), em.packetBytes);
  if (w.message_bytes_max() > 0) {
    if (w.message_bytes_min() <= 0 || w.message_bytes_min() > w.message_bytes_max()) {
      return invalidArgument(
          fmt::format("workload.message_bytes_min: must be in 1..message_bytes_max ({}) (is {})",
                      w.message_bytes_max(), w.message_bytes_min()));
    }
    r.workload.sizeMin = w.message_bytes_min();
    r.workload.sizeMax = w.message_bytes_max();
    r.workload.messageBytes = (r.workload.sizeMin + r.workload.sizeMax) / 2;
  }
  r.workload.arrivals = w.arrivals() == config::WorkloadSpec::POISSON
                            ? workload::Arrivals::kPoisson
                            : workload::Arrivals::kBernoulli;
  r.workload.seed = em.seed;
  Result<JobsDef> jobs = jobsFromWorkload(w, baseDir);
  if (!jobs) return jobs.status();
  r.jobs = std::move(*jobs);
  if (!r.jobs.jobs.empty()) {
    const JobDef& j = r.jobs.jobs.front();
    if (w.pattern_case() == config::WorkloadSpec::kMix) {
      std::string names;
      for (const JobDef& x : r.jobs.jobs)
        names += (names.empty() ? "" : ", ") + x.name + (x.repeat ? " (repeats)" : "");
      r.workloadName = fmt::format("mix of {} jobs: {} ({} host blocks)", r.jobs.jobs.size(), names,
                                   r.jobs.randomHosts ? "random" : "linear");
    } else if (j.source == JobDef::Source::kTrace) {
      r.workloadName =
          fmt::format("MPI trace {} ({}, {} placement)", j.path,
                      w.trace().format() == config::TraceSpec::SIMGRID_TI ? "simgrid-ti"
                      : w.trace().format() == config::TraceSpec::OTF2     ? "otf2"
                                                                          : "amg-csv",
                      j.randomRanks ? "random" : "linear");
    } else {
      r.workloadName = fmt::format("collective loop: {} {} x {} B on {} ranks", j.iterations, j.op,
                                   j.bytes, j.ranks);
    }
  } else if (w.pattern_case() == config::WorkloadSpec::kTrafficFile) {
    if (w.traffic_file().empty()) return invalidArgument("workload.traffic_file: must name a file");
    std::filesystem::path p(w.traffic_file());
    if (p.is_relative() && !baseDir.empty()) p = std::filesystem::path(baseDir) / p;
    r.trafficFile = p.string();
    r.workloadName = "traffic file " + r.trafficFile;
  } else if (w.has_uniform()) {
    const auto& u = w.uniform();
    if (!(u.rate() >= 0) || !std::isfinite(u.rate())) {
      return invalidArgument(fmt::format("workload.uniform.rate: must be >= 0 (is {})", u.rate()));
    }
    if (u.duration_cycles() <= 0) {
      return invalidArgument("workload.uniform.duration_cycles: must be > 0");
    }
    r.workload.rate = workload::RateProfile::constant(u.rate(), u.duration_cycles() * em.cyclePs);
    r.workloadName =
        fmt::format("uniform {} flits/cycle/node for {} cycles", u.rate(), u.duration_cycles());
  } else if (w.pattern_case() == config::WorkloadSpec::kRatePoints) {
    Result<workload::RateProfile> rate = rateFromPoints(w.rate_points(), em.cyclePs);
    if (!rate) return rate.status();
    r.workload.rate = std::move(*rate);
    r.workloadName =
        fmt::format("rate points: {} points, up to {} flits/cycle/node over {} cycles",
                    w.rate_points().point_size(), r.workload.rate.max(),
                    w.rate_points().point(w.rate_points().point_size() - 1).at_cycles());
  } else {
    const auto& ramp = w.alonso_ramp();
    const double low = ramp.low() == 0 ? 0.01 : ramp.low();
    const double high = ramp.high() == 0 ? 0.60 : ramp.high();
    const double scale = ramp.time_scale() == 0 ? 1.0 : ramp.time_scale();
    if (low < 0 || high < 0 || !std::isfinite(low) || !std::isfinite(high)) {
      return invalidArgument(
          fmt::format("workload.alonso_ramp: rates must be >= 0 (low {}, high {})", low, high));
    }
    if (scale <= 0 || !std::isfinite(scale)) {
      return invalidArgument(
          fmt::format("workload.alonso_ramp.time_scale: must be > 0 (is {})", scale));
    }
    r.workload.rate = workload::RateProfile::alonsoRamp(em.cyclePs, scale, low, high);
    r.workloadName = fmt::format("alonso-ramp {}..{} flits/cycle/node over {} cycles", low, high,
                                 static_cast<std::int64_t>(420'000 * scale));
  }
  if (Status s = r.workload.rate.validate(); !s.isOk())
    return invalidArgument("workload: " + s.message());
  if (w.has_hotspot()) {
    Result<workload::Hotspot> spot = hotspotFromConfig(w);
    if (!spot) return spot.status();
    r.workload.hotspot = std::move(*spot);
    r.workloadName +=
        fmt::format(", {:g}% to {} hot hosts", 100 * r.workload.hotspot.fraction,
                    r.workload.hotspot.hostNames.empty() ? r.workload.hotspot.count
                                                         : r.workload.hotspot.hostNames.size());
  }
  Result<FaultsDef> faults = faultsFromConfig(cfg.faults(), em.cyclePs, em.seed);
  if (!faults) return faults.status();
  r.faults = std::move(*faults);
  em.faultDetectionPs = r.faults.detectionPs;
  r.baseline = !cfg.report().skip_baseline();
  r.plots = !cfg.report().skip_plots();
  return r;
}

}  // namespace ebb::replay
