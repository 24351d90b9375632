#include "replay/run_spec.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "agent/gating_config.h"
#include "common/file_io.h"
#include "common/units.h"
#include "configs/config_loader.h"
#include "replay/lpi_from_config.h"
#include "replay/present_or.h"
#include "sim_backend/link_preset.h"

namespace ebb::replay {

namespace {

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
    if (Status st = workload::checkOfferedLoad(field + ".rate", p.rate()); !st.isOk()) return st;
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
    case config::WorkloadSpec::kMotif:
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

// The synthetic-only fields given with a pattern that brings its own sizes
// and times.
Status checkSyntheticOnlyFields(const config::WorkloadSpec& w) {
  using W = config::WorkloadSpec;
  static const std::pair<W::PatternCase, const char*> kOthers[] = {
      {W::kTrafficFile, "a traffic file (its lines give each message's size and time)"},
      {W::kTrace, "a trace (its events give the sizes)"},
      {W::kMix, "a job mix (its jobs give the sizes)"},
      {W::kCollective, "a collective loop (workload.collective.bytes is its size)"},
      {W::kMotif, "a motif (workload.motif.bytes_per_cell sets its sizes)"}};
  const auto it = std::find_if(std::begin(kOthers), std::end(kOthers),
                               [&](const auto& o) { return o.first == w.pattern_case(); });
  if (it == std::end(kOthers)) return Status::ok();
  for (const SyntheticOnlyField& f : syntheticOnlyFields()) {
    if (!f.given(w)) continue;
    return invalidArgument(fmt::format(
        "workload.{}: applies to synthetic traffic only (alonso_ramp, uniform, rate_points), "
        "not to {}",
        f.name, it->second));
  }
  return Status::ok();
}

// emulator.switch_model and the input-queued router's fields, which the
// output-queued model refuses (they would be ignored).
Status switchModelFromConfig(const config::EmulatorSpec& e, sim::EmulatorConfig& em) {
  const bool iq = e.switch_model() == config::EmulatorSpec::INPUT_QUEUED;
  em.switchModel = iq ? sim::SwitchModel::kInputQueued : sim::SwitchModel::kOutputQueued;
  const std::tuple<const char*, bool, std::int64_t, std::int64_t*> stages[] = {
      {"emulator.vc_alloc_cycles", e.has_vc_alloc_cycles(), e.vc_alloc_cycles(), &em.vcAllocCycles},
      {"emulator.sw_alloc_cycles", e.has_sw_alloc_cycles(), e.sw_alloc_cycles(), &em.swAllocCycles},
      {"emulator.crossbar_cycles", e.has_crossbar_cycles(), e.crossbar_cycles(),
       &em.crossbarCycles},
      {"emulator.credit_cycles", e.has_credit_cycles(), e.credit_cycles(), &em.creditCycles},
      {"emulator.injection_cycles", e.has_injection_cycles(), e.injection_cycles(),
       &em.injectionCycles},
      {"emulator.speedup", e.has_speedup(), e.speedup(), &em.speedup}};
  for (const auto& [field, has, v, out] : stages) {
    if (!has) continue;
    if (!iq) {
      return invalidArgument(fmt::format(
          "{}: belongs to emulator.switch_model INPUT_QUEUED (the output-queued model has no "
          "such stage)",
          field));
    }
    *out = v;
  }
  if (!iq && (e.allocator() != config::EmulatorSpec::ALLOCATOR_UNSPECIFIED ||
              e.hold_switch_for_packet())) {
    return invalidArgument(
        fmt::format("emulator.{}: belongs to emulator.switch_model INPUT_QUEUED",
                    e.hold_switch_for_packet() ? "hold_switch_for_packet" : "allocator"));
  }
  em.allocator = e.allocator() == config::EmulatorSpec::ROUND_ROBIN ? sim::Allocator::kRoundRobin
                                                                    : sim::Allocator::kIslip;
  em.holdSwitchForPacket = e.hold_switch_for_packet();
  return Status::ok();
}

// emulator.link_preset: the preset, or nullptr when the config leaves it out.
// The fields a preset sets may not be given beside it.
Result<const sim::LinkPreset*> linkPresetFromConfig(const config::Config& cfg) {
  const auto& e = cfg.emulator();
  if (e.link_preset() == config::EmulatorSpec::LINK_PRESET_UNSPECIFIED) return nullptr;
  const std::string& name = config::EmulatorSpec::LinkPreset_Name(e.link_preset());
  const sim::LinkPreset* preset = sim::findLinkPreset(name);
  if (preset == nullptr) {
    // A number without a name (a config built in code; the loader refuses it).
    const auto* type = config::EmulatorSpec::LinkPreset_descriptor();
    return invalidArgument(
        name.empty() ? fmt::format("emulator.link_preset: unknown value {} (expected one of {})",
                                   static_cast<int>(e.link_preset()), config::enumValueNames(*type))
                     : fmt::format("emulator.link_preset: {} has no definition", name));
  }
  for (auto [field, given] : {std::pair{"emulator.cycle_ps", e.has_cycle_ps()},
                              std::pair{"emulator.flit_bytes", e.has_flit_bytes()},
                              std::pair{"emulator.packet_bytes", e.has_packet_bytes()},
                              std::pair{"lpi.link_speed", !cfg.lpi().link_speed().empty()}}) {
    if (given) {
      return invalidArgument(fmt::format(
          "{}: set by emulator.link_preset {} (a preset sets the link rate, flit, MTU and "
          "wake-up times together); leave link_preset out to set it yourself",
          field, name));
    }
  }
  return preset;
}

}  // namespace

std::span<const SyntheticOnlyField> syntheticOnlyFields() {
  using W = config::WorkloadSpec;
  static constexpr SyntheticOnlyField kFields[] = {
      {"message_bytes", [](const W& w) { return w.has_message_bytes(); },
       [](W& w) { w.clear_message_bytes(); }},
      {"message_bytes_min", [](const W& w) { return w.has_message_bytes_min(); },
       [](W& w) { w.clear_message_bytes_min(); }},
      {"message_bytes_max", [](const W& w) { return w.has_message_bytes_max(); },
       [](W& w) { w.clear_message_bytes_max(); }},
      {"arrivals", [](const W& w) { return w.arrivals() != W::ARRIVALS_UNSPECIFIED; },
       [](W& w) { w.clear_arrivals(); }}};
  return kFields;
}

Result<RunSpec> buildRunSpec(const config::Config& cfg, const std::string& baseDir) {
  RunSpec r;
  // The name heads the summary, the report and the plots' titles: one line.
  if (hasControlBytes(cfg.name())) {
    return invalidArgument(fmt::format(
        "name: '{}' has control characters (a newline, a NUL...): it must be one line of text",
        printable(cfg.name())));
  }
  r.name = cfg.name().empty() ? "run" : cfg.name();
  // Emulator.
  const auto& e = cfg.emulator();
  sim::EmulatorConfig& em = r.emulator;
  const sim::EmulatorConfig defaults;
  const std::int64_t defaultCycles = defaults.cyclePs;
  Result<const sim::LinkPreset*> preset = linkPresetFromConfig(cfg);
  if (!preset) return preset.status();
  if (*preset) sim::applyLinkPreset(**preset, em);
  {
    Result<std::int64_t> cyclePs =
        presentOr("emulator.cycle_ps", e.has_cycle_ps(), e.cycle_ps(), em.cyclePs, 1);
    if (!cyclePs) return cyclePs.status();
    em.cyclePs = *cyclePs;
    Result<std::int64_t> flit =
        presentOr("emulator.flit_bytes", e.has_flit_bytes(), e.flit_bytes(), em.flitBytes, 1);
    if (!flit) return flit.status();
    em.flitBytes = *flit;
    Result<std::int64_t> sixteenFlits = checkedProduct("emulator.flit_bytes", 16, em.flitBytes);
    if (!sixteenFlits) return sixteenFlits.status();
    Result<std::int64_t> packet =
        presentOr("emulator.packet_bytes", e.has_packet_bytes(), e.packet_bytes(),
                  *preset ? em.packetBytes : *sixteenFlits, 1);
    if (!packet) return packet.status();
    em.packetBytes = *packet;
    Result<std::int64_t> vcs = presentOr("emulator.vcs", e.has_vcs(), e.vcs(), defaults.vcs, 1);
    if (!vcs) return vcs.status();
    em.vcs = *vcs;
    // Default: one packet in whole flits (a packet occupies flitsOf() flits;
    // a packet size out of range is refused by validate()).
    const std::int64_t onePacket =
        em.packetBytes <= 0xFFFFFF ? em.flitsOf(em.packetBytes) * em.flitBytes : em.packetBytes;
    Result<std::int64_t> buffer = presentOr("emulator.vc_buffer_bytes", e.has_vc_buffer_bytes(),
                                            e.vc_buffer_bytes(), onePacket, 1);
    if (!buffer) return buffer.status();
    em.vcBufferBytes = *buffer;
    Result<std::int64_t> link =
        presentOr("emulator.link_latency_cycles", e.has_link_latency_cycles(),
                  e.link_latency_cycles(), defaults.linkLatencyPs / defaultCycles, 0);
    if (!link) return link.status();
    Result<TimePs> linkPs = cyclesToPs("emulator.link_latency_cycles", *link, em.cyclePs);
    if (!linkPs) return linkPs.status();
    em.linkLatencyPs = *linkPs;
    Result<std::int64_t> routing =
        presentOr("emulator.routing_delay_cycles", e.has_routing_delay_cycles(),
                  e.routing_delay_cycles(), defaults.routingDelayPs / defaultCycles, 0);
    if (!routing) return routing.status();
    Result<TimePs> routingPs = cyclesToPs("emulator.routing_delay_cycles", *routing, em.cyclePs);
    if (!routingPs) return routingPs.status();
    em.routingDelayPs = *routingPs;
  }
  em.upRouting = e.up_routing() == config::EmulatorSpec::RANDOM    ? sim::UpRouting::kRandom
                 : e.up_routing() == config::EmulatorSpec::D_MOD_K ? sim::UpRouting::kDestination
                                                                   : sim::UpRouting::kAdaptive;
  em.seed = cfg.has_seed() ? cfg.seed() : defaults.seed;
  if (Status st = switchModelFromConfig(e, em); !st.isOk()) return st;
  // Gating.
  const auto& g = cfg.gating();
  // Defaults in cycles of the default cycle, from the option structs.
  const agent::AgentConfig agentDefaults;
  Result<std::int64_t> period =
      presentOr("gating.check_period_cycles", g.has_check_period_cycles(), g.check_period_cycles(),
                agentDefaults.checkPeriodPs / defaultCycles, 1);
  if (!period) return period.status();
  Result<std::int64_t> tOn = presentOr("gating.turn_on_cycles", g.has_turn_on_cycles(),
                                       g.turn_on_cycles(), defaults.turnOnPs / defaultCycles, 0);
  if (!tOn) return tOn.status();
  Result<std::int64_t> tOff = presentOr("gating.turn_off_cycles", g.has_turn_off_cycles(),
                                        g.turn_off_cycles(), defaults.turnOffPs / defaultCycles, 0);
  if (!tOff) return tOff.status();
  if (*tOn > *period) {
    return invalidArgument(fmt::format(
        "gating.turn_on_cycles: T_on ({}) must not exceed the check period ({}): the network "
        "must settle between decisions",
        *tOn, *period));
  }
  if (*tOff > *period) {
    return invalidArgument(
        fmt::format("gating.turn_off_cycles: T_off ({}) must not exceed the check "
                    "period ({})",
                    *tOff, *period));
  }
  for (auto [field, cycles, out] :
       {std::tuple{"gating.check_period_cycles", *period, &r.agent.checkPeriodPs},
        std::tuple{"gating.turn_on_cycles", *tOn, &em.turnOnPs},
        std::tuple{"gating.turn_off_cycles", *tOff, &em.turnOffPs},
        std::tuple{"gating.control_latency_cycles", g.control_latency_cycles(),
                   &r.agent.controlLatencyPs}}) {
    Result<TimePs> ps = cyclesToPs(field, cycles, em.cyclePs);
    if (!ps) return ps.status();
    *out = *ps;
  }
  if (g.has_max_check_periods() && g.max_check_periods() == 0)
    return invalidArgument("gating.max_check_periods: must be > 0 (is 0)");
  if (g.has_max_check_periods()) r.maxCheckPeriods = g.max_check_periods();
  if (Status s = agent::checkGatingFields(g); !s.isOk()) return s;
  const agent::GatingChoice gating = agent::gatingFromConfig(g);
  r.gating = gating.gating;
  r.agent.gating = gating.gating;
  r.agent.thresholds = gating.thresholds;
  r.policyName = gating.gating ? gating.policyName : "all links on";
  r.startAllOn = g.start() == config::GatingSpec::FROM_ALL_ON;
  if (r.gating && r.startAllOn) r.policyName += ", from all on";
  if (r.gating) {
    if (Status s = r.agent.thresholds.validate(); !s.isOk()) {
      return invalidArgument("gating: " + s.message());
    }
  }
  r.oracleTarget = r.agent.thresholds.uOn;
  if (cfg.oracle().has_target_utilization()) {
    const double u = cfg.oracle().target_utilization();
    if (!(u > 0 && u <= 1)) {
      return invalidArgument(
          fmt::format("oracle.target_utilization: {} breaks the rule 0 < target <= 1", u));
    }
    r.oracleTarget = u;
  }
  Result<InBandDef> inBand = inBandFromConfig(g.in_band(), r.gating);
  if (!inBand) return inBand.status();
  r.inBand = std::move(*inBand);
  // Low-power idle.
  if (Status st = lpiFromConfig(cfg.lpi(), em.lpi); !st.isOk()) return st;
  const policies::LpiParams& lp = em.lpi;
  if (!r.gating && lp.mode != policies::LpiMode::kOff) {
    r.policyName = fmt::format("all links on, {} idle", policies::toString(lp.mode));
  }
  if (Status s = em.validate(); !s.isOk()) return s;
  // Workload.
  const auto& w = cfg.workload();
  if (Status s = checkSyntheticOnlyFields(w); !s.isOk()) return s;
  Result<std::int64_t> messageBytes = presentOr("workload.message_bytes", w.has_message_bytes(),
                                                w.message_bytes(), em.packetBytes, 1);
  if (!messageBytes) return messageBytes.status();
  r.workload.messageBytes = *messageBytes;
  if (w.has_message_bytes_min() != w.has_message_bytes_max()) {
    return invalidArgument(
        fmt::format("workload.{}: sizes uniform in a range need both message_bytes_min and "
                    "message_bytes_max",
                    w.has_message_bytes_min() ? "message_bytes_max" : "message_bytes_min"));
  }
  if (w.has_message_bytes_max()) {
    if (w.message_bytes_min() <= 0) {
      return invalidArgument(
          fmt::format("workload.message_bytes_min: must be > 0 (is {})", w.message_bytes_min()));
    }
    if (w.message_bytes_min() > w.message_bytes_max()) {
      return invalidArgument(
          fmt::format("workload.message_bytes_max: must be >= message_bytes_min ({}) (is {})",
                      w.message_bytes_min(), w.message_bytes_max()));
    }
    if (w.has_message_bytes()) {
      return invalidArgument(
          "workload.message_bytes: give one size or a range (message_bytes_min, "
          "message_bytes_max), not both");
    }
    r.workload.sizeMin = w.message_bytes_min();
    r.workload.sizeMax = w.message_bytes_max();
    r.workload.messageBytes = r.workload.sizeMin + (r.workload.sizeMax - r.workload.sizeMin) / 2;
  }
  if (w.has_max_message_packets() && w.max_message_packets() == 0)
    return invalidArgument("workload.max_message_packets: must be > 0 (is 0)");
  if (w.has_max_messages() && w.max_messages() == 0)
    return invalidArgument("workload.max_messages: must be > 0 (is 0)");
  if (w.has_max_messages()) r.maxMessages = w.max_messages();
  r.messageLimit.packetBytes = em.packetBytes;
  if (w.has_max_message_packets()) r.messageLimit.maxPackets = w.max_message_packets();
  for (auto [field, bytes] : {std::pair{"workload.message_bytes", r.workload.messageBytes},
                              std::pair{"workload.message_bytes_max", r.workload.sizeMax}}) {
    if (Status st = r.messageLimit.check(bytes, field); !st.isOk()) return st;
  }
  r.workload.arrivals = w.arrivals() == config::WorkloadSpec::POISSON
                            ? workload::Arrivals::kPoisson
                            : workload::Arrivals::kBernoulli;
  r.workload.seed = em.seed;
  Result<JobsDef> jobs = jobsFromWorkload(w, baseDir);
  if (!jobs) return jobs.status();
  r.jobs = std::move(*jobs);
  r.jobs.messageLimit = r.messageLimit;
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
    } else if (j.source == JobDef::Source::kMotif) {
      r.workloadName =
          fmt::format("motif {} on {} ranks: {} iterations, {}^3 cells per rank ({} placement)",
                      workload::motifName(j.motif.motif), j.ranks, j.motif.iterations,
                      j.motif.cells, j.randomRanks ? "random" : "linear");
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
    if (Status st = workload::checkOfferedLoad("workload.uniform.rate", u.rate()); !st.isOk())
      return st;
    if (u.duration_cycles() <= 0) {
      return invalidArgument(fmt::format("workload.uniform.duration_cycles: must be > 0 (is {})",
                                         u.duration_cycles()));
    }
    Result<TimePs> duration =
        cyclesToPs("workload.uniform.duration_cycles", u.duration_cycles(), em.cyclePs);
    if (!duration) return duration.status();
    r.workload.rate = workload::RateProfile::constant(u.rate(), *duration);
    r.workload.includeSelf = u.include_self();
    r.workloadName =
        fmt::format("uniform {} flits/cycle/node for {} cycles{}", u.rate(), u.duration_cycles(),
                    u.include_self() ? ", sources included among the destinations" : "");
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
    const double low = ramp.has_low() ? ramp.low() : 0.01;
    const double high = ramp.has_high() ? ramp.high() : 0.60;
    const double scale = ramp.has_time_scale() ? ramp.time_scale() : 1.0;
    for (auto [field, v] : {std::pair{"workload.alonso_ramp.low", low},
                            std::pair{"workload.alonso_ramp.high", high}}) {
      if (Status st = workload::checkOfferedLoad(field, v); !st.isOk()) return st;
    }
    // The ramp climbs from low to its peak and back (the paper's Figure 4 and
    // power_vs_rate.png split it there): a "peak" below the start is a typo.
    if (low > high) {
      return invalidArgument(fmt::format(
          "workload.alonso_ramp.low: {} is above high ({}): the ramp goes low -> high -> low "
          "(for a valley use rate_points)",
          low, high));
    }
    if (scale <= 0 || !std::isfinite(scale)) {
      return invalidArgument(
          fmt::format("workload.alonso_ramp.time_scale: must be > 0 (is {})", scale));
    }
    constexpr double kRampCycles = 420'000;  // the paper's ramp at time_scale 1
    const double maxCycles =
        static_cast<double>(std::numeric_limits<TimePs>::max() / em.cyclePs) / 2;
    if (kRampCycles * scale > maxCycles) {
      return invalidArgument(fmt::format(
          "workload.alonso_ramp.time_scale: {} x 420000 cycles of {} ps is beyond the time "
          "range of about 106 days",
          scale, em.cyclePs));
    }
    if (kRampCycles * scale < 5) {
      return invalidArgument(fmt::format(
          "workload.alonso_ramp.time_scale: {} makes the ramp shorter than its 5 points "
          "(at least {:g})",
          scale, 5 / kRampCycles));
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
  if (Status s = setRecoveryBound(r.faults, em.turnOnPs, r.agent.checkPeriodPs); !s.isOk())
    return s;
  if (cfg.report().has_timeseries_period_cycles()) {
    const std::int64_t ts = cfg.report().timeseries_period_cycles();
    if (ts < *period || ts % *period != 0) {
      return invalidArgument(fmt::format(
          "report.timeseries_period_cycles: must be a whole number of check periods ({} "
          "cycles) (is {})",
          *period, ts));
    }
    r.timeseriesGroup = ts / *period;
  }
  if (cfg.report().has_latency_warmup_cycles()) {
    Result<TimePs> warmup = cyclesToPs("report.latency_warmup_cycles",
                                       cfg.report().latency_warmup_cycles(), em.cyclePs);
    if (!warmup) return warmup.status();
    r.latencyWarmupPs = *warmup;
  }
  r.baseline = !cfg.report().skip_baseline();
  r.plots = !cfg.report().skip_plots();
  return r;
}

}  // namespace ebb::replay
