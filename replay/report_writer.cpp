#include "replay/report_writer.h"

#include <filesystem>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include "common/file_io.h"
#include "common/gnuplot.h"

namespace ebb::replay {

namespace fs = std::filesystem;

namespace {

std::string csv(const RunOutput& run, int levelPairs) {
  std::string s =
      "time_cycles,injected_rate,rising,offered,accepted,power_switch_links,power_all_links,mean_"
      "latency_cycles,delivered";
  for (int l = 0; l < levelPairs; ++l)
    s += fmt::format(",links_on_l{}_l{}", l, l + 1);
  s += "\n";
  for (const PeriodRow& r : run.rows) {
    s += fmt::format("{:.0f},{:.6f},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.3f},{}", r.timeCycles,
                     r.injectedRate, r.rising ? 1 : 0, r.offered, r.accepted, r.powerSwitchLinks,
                     r.powerAllLinks, r.meanLatencyCycles, r.delivered);
    for (double share : r.linksOnShare)
      s += fmt::format(",{:.4f}", share);
    s += "\n";
  }
  return s;
}

std::string decisionsJsonl(const RunOutput& run) {
  std::string s;
  for (const agent::DecisionRecord& d : run.decisions)
    s += agent::toJsonLine(d) + "\n";
  return s;
}

// Figures 4 and 5 of Alonso et al.: power and latency versus injected rate,
// increasing and decreasing ramp as separate curves, plus power over time.
std::string gnuplotScript(bool baseline, const std::string& term, const std::string& ext) {
  std::string s = fmt::format(
      "set datafile separator ','\nset terminal {}\nset key outside bottom center horizontal\n"
      "set grid\n",
      term);
  s += fmt::format(
      "set output 'plots/power_vs_rate.{}'\nset title 'Relative link power (switch links)'\n"
      "set xlabel 'injected rate (flits/cycle/node)'\nset ylabel 'relative power'\n"
      "set yrange [0:1.05]\n"
      "plot 'timeseries.csv' every ::1 using 2:($3==1?$6:1/0) with points pt 7 ps 0.5 title "
      "'increasing', '' every ::1 using 2:($3==0?$6:1/0) with points pt 5 ps 0.5 title "
      "'decreasing'\n",
      ext);
  s += fmt::format(
      "set output 'plots/latency_vs_rate.{}'\nset title 'Mean message latency'\n"
      "set ylabel 'latency (cycles)'\nset autoscale y\nset logscale y\n"
      "plot 'timeseries.csv' every ::1 using 2:($3==1&&$8>0?$8:1/0) with points pt 7 ps 0.5 "
      "title 'increasing', '' every ::1 using 2:($3==0&&$8>0?$8:1/0) with points pt 5 ps 0.5 "
      "title 'decreasing'{}\nunset logscale y\n",
      ext,
      baseline ? ", 'baseline_timeseries.csv' every ::1 using 2:($8>0?$8:1/0) with points pt 1 "
                 "ps 0.5 title 'all links on'"
               : "");
  s += fmt::format(
      "set output 'plots/power_over_time.{}'\nset title 'Relative link power and load over "
      "time'\nset xlabel 'time (cycles)'\nset ylabel 'relative power / load'\n"
      "set yrange [0:1.05]\n"
      "plot 'timeseries.csv' every ::1 using 1:6 with lines title 'switch links', '' every ::1 "
      "using 1:7 with lines title 'all links', '' every ::1 using 1:2 with lines title "
      "'injected rate'\n",
      ext);
  return s;
}

}  // namespace

Status writeReport(const std::string& dir, const results::Report& report, const RunOutput& run,
                   const std::optional<RunOutput>& baseline, bool plots, int levelPairs) {
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "plots", ec);
  if (ec) return {ErrorCode::kIo, fmt::format("cannot create {}: {}", dir, ec.message())};
  std::string json;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;
  if (!google::protobuf::util::MessageToJsonString(report, &json, opts).ok()) {
    return {ErrorCode::kInternal, "cannot render report.json"};
  }
  if (Status s = writeFile(fs::path(dir) / "report.json", json); !s.isOk()) return s;
  if (Status s = writeFile(fs::path(dir) / "timeseries.csv", csv(run, levelPairs)); !s.isOk())
    return s;
  if (baseline) {
    if (Status s = writeFile(fs::path(dir) / "baseline_timeseries.csv", csv(*baseline, levelPairs));
        !s.isOk()) {
      return s;
    }
  }
  if (Status s = writeFile(fs::path(dir) / "decisions.jsonl", decisionsJsonl(run)); !s.isOk())
    return s;
  if (!plots) return Status::ok();
  return renderGnuplot(dir, "plots.gp", 900, 600,
                       [&](const std::string& term, const std::string& ext) {
                         return gnuplotScript(baseline.has_value(), term, ext);
                       });
}

std::string formatSummary(const results::Report& r) {
  const auto line = [](const results::RunSummary& s) {
    return fmt::format(
        "  {:<28} power {:6.1f}% (switch links) {:6.1f}% (all links)   latency mean {:8.1f} "
        "p50 {:7.1f} p99 {:8.1f} cycles   delivered {}/{}   transitions {}\n",
        s.policy(), 100 * s.relative_power_switch_links(), 100 * s.relative_power_all_links(),
        s.mean_latency_cycles(), s.p50_latency_cycles(), s.p99_latency_cycles(),
        s.messages_delivered(), s.messages_generated(), s.link_transitions());
  };
  std::string out = fmt::format("ebb replay: {}\n  fabric:   {}\n  workload: {}\n", r.name(),
                                r.fabric(), r.workload());
  out += line(r.run());
  if (r.has_baseline()) {
    out += line(r.baseline());
    out += fmt::format(
        "  => link power saved: {:.1f}% of switch links, {:.1f}% of all links; {}\n",
        100 * r.power_saving_switch_links(), 100 * r.power_saving_all_links(),
        r.has_mean_latency_increase()
            ? fmt::format("mean latency {:+.1f}%, p99 {:+.1f}%", 100 * r.mean_latency_increase(),
                          100 * r.p99_latency_increase())
            : std::string("latency: nothing to compare (no message was "
                          "delivered in one of the runs)"));
  }
  if (r.run().ranks() > 0) {
    out += fmt::format(
        "  application runtime: {:.1f} us with {}{}\n", r.run().app_runtime_us(), r.run().policy(),
        r.has_baseline() ? fmt::format(", {:.1f} us with all links on: slowdown {:+.2f}%{}",
                                       r.baseline().app_runtime_us(), 100 * r.app_slowdown(),
                                       r.jobs_size() > 1 ? " (the worst job)" : "")
                         : "");
  }
  if (r.run().jobs_size() > 1) {
    for (const results::JobResult& j : r.run().jobs()) {
      std::string base;
      for (const results::JobComparison& c : r.jobs()) {
        if (c.name() == j.name()) {
          base =
              fmt::format("; all links on {:.1f} us: slowdown {}{:+.2f}%", c.baseline_runtime_us(),
                          c.lower_bound() ? "at least " : "", 100 * c.slowdown());
        }
      }
      out +=
          fmt::format("    job {}: {} ranks, {:.1f} us{}{}\n", j.name(), j.ranks(), j.runtime_us(),
                      j.runs() == 1 ? "" : fmt::format(" (mean of {} runs)", j.runs()), base);
    }
  }
  if (r.run().actions_refused() > 0) {
    out += fmt::format("  safety guard refused {} actions (see decisions.jsonl)\n",
                       r.run().actions_refused());
  }
  if (r.run().has_in_band()) {
    const results::InBandReport& b = r.run().in_band();
    out += fmt::format(
        "  in-band: whole-link gating managed from {}, resilience {}: the guard checked {} "
        "turn-offs and refused {}\n",
        b.management_switch(), b.resilience(), b.guard_checks(), b.guard_refused());
  }
  if (r.run().has_faults()) {
    const results::FaultsReport& f = r.run().faults();
    std::uint64_t disconnecting = 0;
    for (const results::FaultEventReport& e : f.events())
      disconnecting += e.disconnected();
    out += fmt::format(
        "  faults: {} events ({} disconnected a pair), longest recovery {:.3f} us (bound {:.3f} "
        "us), violations {}; packets rerouted {}, dropped {}; messages retransmitted {}, lost {}\n",
        f.events_size(), disconnecting, static_cast<double>(f.max_recovery_ps()) / 1e6,
        static_cast<double>(f.recovery_bound_ps()) / 1e6, f.violations(), f.packets_rerouted(),
        f.packets_dropped(), f.retransmitted_messages(), f.lost_messages());
    if (f.cut_off_hosts_size() > 0) {
      std::string hosts;
      for (const std::string& h : f.cut_off_hosts())
        hosts += (hosts.empty() ? "" : " ") + h;
      out += fmt::format("  physically cut off (not counted against ebb): {}\n", hosts);
    }
  }
  return out;
}

}  // namespace ebb::replay
