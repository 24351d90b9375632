#include "replay/report_writer.h"

#include <filesystem>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include "common/gnuplot.h"
#include "common/output_set.h"
#include "replay/period_rows.h"

namespace ebb::replay {

namespace fs = std::filesystem;

namespace {

std::string csv(const std::vector<PeriodRow>& rows, int levelPairs) {
  std::string s =
      "time_cycles,injected_rate,rising,offered,accepted,power_switch_links,power_all_links,mean_"
      "latency_cycles,delivered,oracle_power_switch_links,span_cycles,drain";
  for (int l = 0; l < levelPairs; ++l)
    s += fmt::format(",links_on_l{}_l{}", l, l + 1);
  s += "\n";
  for (const PeriodRow& r : rows) {
    // No message delivered: no latency, an empty field (0 would read as one).
    const std::string latency =
        r.delivered == 0 ? std::string() : fmt::format("{:.3f}", r.meanLatencyCycles);
    // A one-level tree has no switch links: no such power (report.json has
    // none either), an empty field, not 0.
    const auto switchLinks = [levelPairs](double v) {
      return levelPairs == 0 ? std::string() : fmt::format("{:.6f}", v);
    };
    s += fmt::format("{:.0f},{:.6f},{},{:.6f},{:.6f},{},{:.6f},{},{},{},{:.0f},{}", r.timeCycles,
                     r.injectedRate, r.rising ? 1 : 0, r.offered, r.accepted,
                     switchLinks(r.powerSwitchLinks), r.powerAllLinks, latency, r.delivered,
                     switchLinks(r.oraclePowerSwitchLinks), r.spanCycles, r.drain ? 1 : 0);
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

constexpr const char* kFigures[] = {"power_vs_rate", "latency_vs_rate", "power_over_time"};
constexpr std::size_t kPlotRows = 4'000;

// Which curves of the figures have points: gnuplot refuses a plot whose
// every point is undefined (a run that delivered nothing), so such a figure
// says so instead.
struct Curves {
  bool ramp = false;     // rows of the workload (not the drain)
  bool rising = false;   // with a latency, on the increasing ramp
  bool falling = false;  // ... on the decreasing one
  bool baseline = false;
  bool switchLinks = true;  // false: a one-level tree (those columns are empty)
};

Curves curvesOf(const RunOutput& run, const std::optional<RunOutput>& baseline) {
  Curves c;
  for (const PeriodRow& r : run.rows) {
    if (r.drain) continue;
    c.ramp = true;
    if (r.meanLatencyCycles > 0) (r.rising ? c.rising : c.falling) = true;
  }
  if (baseline) {
    for (const PeriodRow& r : baseline->rows)
      c.baseline = c.baseline || (!r.drain && r.meanLatencyCycles > 0);
  }
  return c;
}

// A figure with nothing to draw: its axes and why.
std::string emptyPlot(const char* why) {
  return fmt::format(
      "set label 1 '{}' at graph 0.5,0.5 center\nset xrange [0:1]\nset yrange [0:1]\n"
      "plot NaN notitle\nunset label 1\nset autoscale x\n",
      why);
}

// Figures 4 and 5 of Alonso et al.: power and latency versus injected rate,
// increasing and decreasing ramp as separate curves (the drain's rows, whose
// rate is the workload's end, left out), plus power over time.
std::string gnuplotScript(const Curves& c, const std::string& data, const std::string& baselineData,
                          const std::string& term, const std::string& ext) {
  std::string s = fmt::format(
      "set datafile separator ','\nset terminal {}\nset key outside bottom center horizontal\n"
      "set grid\n",
      term);
  // Without switch links (a one-level tree) the figures show all links.
  const int power = c.switchLinks ? 6 : 7;
  s += fmt::format(
      "set output 'plots/power_vs_rate.{}'\nset title 'Relative link power ({})'\n"
      "set xlabel 'injected rate (flits/cycle/node)'\nset ylabel 'relative power'\n"
      "set yrange [0:1.05]\n",
      ext, c.switchLinks ? "switch links" : "all links: the fabric has no switch links");
  s += c.ramp ? fmt::format(
                    "plot '{0}' every ::1 using 2:($3==1&&$12==0?${1}:1/0) with points pt 7 ps "
                    "0.5 title 'increasing', '' every ::1 using 2:($3==0&&$12==0?${1}:1/0) with "
                    "points pt 5 ps 0.5 title 'decreasing'{2}\n",
                    data, power,
                    c.switchLinks ? ", '' every ::1 using 2:($12==0?$10:1/0) with points pt 1 ps "
                                    "0.5 title 'oracle bound'"
                                  : "")
              : emptyPlot("no check period within the workload");
  s += "set output 'plots/latency_vs_rate." + ext +
       "'\nset title 'Mean message latency'\nset ylabel 'latency (cycles)'\nset autoscale y\n";
  std::vector<std::string> curves;
  if (c.rising) {
    curves.push_back(
        fmt::format("'{}' every ::1 using 2:($3==1&&$12==0&&$8>0?$8:1/0) with "
                    "points pt 7 ps 0.5 title 'increasing'",
                    data));
  }
  if (c.falling) {
    curves.push_back(
        fmt::format("'{}' every ::1 using 2:($3==0&&$12==0&&$8>0?$8:1/0) with "
                    "points pt 5 ps 0.5 title 'decreasing'",
                    data));
  }
  if (c.baseline) {
    curves.push_back(
        fmt::format("'{}' every ::1 using 2:($12==0&&$8>0?$8:1/0) with points pt 1 "
                    "ps 0.5 title 'all links on'",
                    baselineData));
  }
  if (curves.empty()) {
    s += emptyPlot("no message delivered");
  } else {
    s += "set logscale y\nplot ";
    for (std::size_t i = 0; i < curves.size(); ++i)
      s += (i ? ", " : "") + curves[i];
    s += "\nunset logscale y\n";
  }
  s += fmt::format(
      "set output 'plots/power_over_time.{}'\nset title 'Relative link power and load over "
      "time'\nset xlabel 'time (cycles)'\nset ylabel 'relative power / load'\n"
      "set yrange [0:1.05]\n"
      "plot '{}' every ::1 {}using 1:7 with lines title 'all links', '' every ::1 using 1:2 "
      "with lines title 'injected rate'\n",
      ext, data,
      c.switchLinks ? "using 1:6 with lines title 'switch links', '' every ::1 using 1:10 with "
                      "lines dt 2 title 'oracle (switch links)', '' every ::1 "
                    : "");
  return s;
}

// Every name writeReport may write: a new run removes the earlier run's files
// it does not write itself (e.g. baseline_timeseries.csv after skip_baseline).
std::set<std::string> ownedOutputs() {
  std::set<std::string> names = {"report.json", "timeseries.csv", "baseline_timeseries.csv",
                                 "decisions.jsonl", "plots.gp"};
  for (const char* figure : kFigures) {
    for (const char* ext : {"png", "svg"})
      names.insert(fmt::format("plots/{}.{}", figure, ext));
  }
  for (const char* data : {"plots/timeseries.csv", "plots/baseline_timeseries.csv"})
    names.insert(data);
  return names;
}

// The figures; a plotting problem is a warning (returned), never a failed run:
// the results are written all the same. Long series are merged to at most
// kPlotRows rows in plots/ (a picture shows no more), so gnuplot stays quick.
std::string drawPlots(OutputSet& set, const RunOutput& run,
                      const std::optional<RunOutput>& baseline, int levelPairs) {
  std::error_code ec;
  fs::create_directories(set.staging() / "plots", ec);
  if (ec) return fmt::format("plots: cannot create the plots folder: {}", ec.message());
  std::string data = "timeseries.csv";
  std::string baselineData = "baseline_timeseries.csv";
  const bool merge = run.rows.size() > kPlotRows || (baseline && baseline->rows.size() > kPlotRows);
  Curves curves = curvesOf(run, baseline);
  curves.switchLinks = levelPairs > 0;
  if (merge) {
    data = "plots/timeseries.csv";
    baselineData = "plots/baseline_timeseries.csv";
    if (Status s = set.write(data, csv(downsample(run.rows, kPlotRows), levelPairs)); !s.isOk())
      return s.toString();
    if (baseline) {
      if (Status s =
              set.write(baselineData, csv(downsample(baseline->rows, kPlotRows), levelPairs));
          !s.isOk()) {
        return s.toString();
      }
    }
  }
  const Status s = renderGnuplot(set.staging().string(), "plots.gp", 900, 600,
                                 [&](const std::string& term, const std::string& ext) {
                                   return gnuplotScript(curves, data, baselineData, term, ext);
                                 });
  if (s.isOk()) return {};
  // A figure gnuplot left half-drawn is not kept.
  for (const char* figure : kFigures) {
    for (const char* ext : {"png", "svg"})
      fs::remove(set.staging() / fmt::format("plots/{}.{}", figure, ext), ec);
  }
  return s.message();
}

}  // namespace

Result<std::string> writeReport(const std::string& dir, const results::Report& report,
                                const RunOutput& run, const std::optional<RunOutput>& baseline,
                                bool plots, int levelPairs) {
  Result<OutputSet> set = OutputSet::begin(dir, ownedOutputs());
  if (!set) return set.status();
  std::string json;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;
  if (!google::protobuf::util::MessageToJsonString(report, &json, opts).ok()) {
    return Status(ErrorCode::kInternal, "cannot render report.json");
  }
  if (Status s = set->write("report.json", json); !s.isOk()) return s;
  if (Status s = set->write("timeseries.csv", csv(run.rows, levelPairs)); !s.isOk()) return s;
  if (baseline) {
    if (Status s = set->write("baseline_timeseries.csv", csv(baseline->rows, levelPairs));
        !s.isOk()) {
      return s;
    }
  }
  if (Status s = set->write("decisions.jsonl", decisionsJsonl(run)); !s.isOk()) return s;
  std::string warning;
  if (plots) warning = drawPlots(*set, run, baseline, levelPairs);
  if (Status s = set->commit(); !s.isOk()) return s;
  return warning;
}

std::string formatSummary(const results::Report& r) {
  const auto line = [](const results::RunSummary& s) {
    // No message measured: no latency (0 would read as a measurement).
    const bool measured = s.latency_messages() > 0;
    const auto cycles = [&](double v, int width) {
      return measured ? fmt::format("{:{}.1f}", v, width) : fmt::format("{:>{}}", "n/a", width);
    };
    // A fabric without switch links (a one-level tree) has no such share.
    const std::string switchPower =
        s.has_relative_power_switch_links()
            ? fmt::format("{:6.1f}%", 100 * s.relative_power_switch_links())
            : fmt::format("{:>7}", "n/a");
    std::string text = fmt::format(
        "  {:<28} power {} (switch links) {:6.1f}% (all links)   latency mean {} "
        "p50 {} p99 {} cycles   delivered {}/{}   transitions {}\n",
        s.policy(), switchPower, 100 * s.relative_power_all_links(),
        cycles(s.mean_latency_cycles(), 8), cycles(s.p50_latency_cycles(), 7),
        cycles(s.p99_latency_cycles(), 8), s.messages_delivered(), s.messages_generated(),
        s.link_transitions());
    if (s.messages_generated() == 0) {
      text +=
          "    ! the workload created no message (a rate of 0, or too low to fill one message of "
          "its size in its duration): these are the figures of an idle fabric\n";
    }
    const std::uint64_t lost =
        s.messages_generated() - std::min(s.messages_generated(), s.messages_delivered());
    if (lost > 0) {
      text += fmt::format(
          "    ! {} of {} messages not delivered: dropped (by faults, or by in-band gating: see "
          "those lines) or still in the network when the drain ended\n",
          lost, s.messages_generated());
    }
    if (s.latency_warmup_cycles() > 0) {
      text += fmt::format("    latency over the {} messages created from cycle {} on (warm-up)\n",
                          s.latency_messages(), s.latency_warmup_cycles());
    }
    if (s.packets_stranded() > 0) {
      text += fmt::format(
          "    ! {} packets still in the network when the drain ended (power and latency "
          "count the drain; a saturated network, or packets stuck): {}\n",
          s.packets_stranded(), s.stranded_where());
    }
    return text;
  };
  std::string out = fmt::format("ebb replay: {}\n  fabric:   {}\n  workload: {}\n", r.name(),
                                r.fabric(), r.workload());
  out += line(r.run());
  if (r.has_baseline()) {
    out += line(r.baseline());
    // No saving: a fabric without switch links, or (the run summary has a
    // switch-link share) faults that left all links on no power to save.
    const auto none = [&](bool switchLinks) {
      return switchLinks && !r.baseline().has_relative_power_switch_links()
                 ? std::string("no switch links to save on")
                 : fmt::format("n/a of {} links (no power to save: faults took every one all run)",
                               switchLinks ? "switch" : "all");
    };
    out += fmt::format(
        "  => link power saved: {}, {}; {}\n",
        r.has_power_saving_switch_links()
            ? fmt::format("{:.1f}% of switch links", 100 * r.power_saving_switch_links())
            : none(true),
        r.has_power_saving_all_links()
            ? fmt::format("{:.1f}% of all links", 100 * r.power_saving_all_links())
            : none(false),
        r.has_mean_latency_increase()
            ? fmt::format("mean latency {:+.1f}%, p99 {:+.1f}%", 100 * r.mean_latency_increase(),
                          100 * r.p99_latency_increase())
            : std::string("latency: nothing to compare (no message measured in one of "
                          "the runs: none delivered, or none created after the warm-up)"));
  }
  if (r.run().ranks() > 0) {
    out += fmt::format(
        "  application runtime: {:.1f} us with {}{}\n", r.run().app_runtime_us(), r.run().policy(),
        !r.has_baseline()      ? ""
        : r.has_app_slowdown() ? fmt::format(", {:.1f} us with all links on: slowdown {:+.2f}%{}",
                                             r.baseline().app_runtime_us(), 100 * r.app_slowdown(),
                                             r.jobs_size() > 1 ? " (the worst job)" : "")
                               : fmt::format(", {:.1f} us with all links on: slowdown not measured",
                                             r.baseline().app_runtime_us()));
  }
  if (r.run().jobs_size() > 1) {
    for (const results::JobResult& j : r.run().jobs()) {
      std::string base;
      for (const results::JobComparison& c : r.jobs()) {
        if (c.name() == j.name() && c.not_measured()) {
          base = "; all links on it completed no run either: slowdown not measured";
        } else if (c.name() == j.name()) {
          base =
              fmt::format("; all links on {:.1f} us: slowdown {}{:+.2f}%", c.baseline_runtime_us(),
                          c.lower_bound() ? "at least " : "", 100 * c.slowdown());
        }
      }
      out +=
          fmt::format("    job {}: {} ranks, {:.1f} us{}{}\n", j.name(), j.ranks(), j.runtime_us(),
                      j.incomplete()  ? " (no complete run: its run so far)"
                      : j.runs() == 1 ? ""
                                      : fmt::format(" (mean of {} runs)", j.runs()),
                      base);
    }
  }
  if (r.run().has_oracle()) {
    const results::OracleReport& o = r.run().oracle();
    if (!r.run().has_relative_power_switch_links()) {
      out += "  oracle bound: no switch links to gate\n";
    } else if (!o.unavailable().empty()) {
      out += fmt::format("  oracle bound: not available ({})\n", o.unavailable());
    } else {
      out += fmt::format(
          "  oracle bound (at most {:.0f}% utilization): switch links {:.1f}% ({:.1f}% with every "
          "direction free), all links {:.1f}% of all on; {}\n",
          100 * o.target_utilization(), 100 * o.switch_link_power(),
          100 * o.free_directions_power(), 100 * o.all_link_power(),
          o.has_efficiency()
              ? fmt::format("efficiency of {} {:.2f} (its switch-link saving / the bound's)",
                            r.run().policy(), o.efficiency())
          : !o.no_efficiency().empty() ? fmt::format("no efficiency ({})", o.no_efficiency())
                                       : std::string("the bound saves nothing on this workload"));
    }
  }
  if (r.run().has_lpi()) {
    const results::LpiReport& l = r.run().lpi();
    out += fmt::format(
        "  low-power idle: {} wake-ups for {} packets, {:.1f} ns added per packet{}; hold {:.0f} "
        "ns mean, {:.0f} ns max\n",
        l.wakeups(), l.packets(), l.added_delay_ns_per_packet(),
        l.delay_budget_ns() > 0
            ? fmt::format(
                  " (adaptive, budget {:.1f} ns: {} wake-ups after idling max_hold or more, {} "
                  "idle periods begun in debt)",
                  l.delay_budget_ns(), l.long_idle_wakeups(), l.over_budget_idles())
            : std::string(),
        l.mean_hold_ns(), l.max_hold_ns());
  }
  if (r.run().actions_refused() > 0) {
    out += fmt::format("  safety guard refused {} actions (see decisions.jsonl)\n",
                       r.run().actions_refused());
  }
  if (r.run().has_in_band()) {
    const results::InBandReport& b = r.run().in_band();
    out += fmt::format(
        "  in-band: whole-link gating managed from {}, resilience {}: the guard checked {} "
        "turn-offs and refused {}{}\n",
        b.management_switch(), b.resilience(), b.guard_checks(), b.guard_refused(),
        b.packets_reascended() + b.packets_dropped() == 0
            ? ""
            : fmt::format("; packets whose way down was off when they got there: {} climbed "
                          "on, {} dropped ({} message(s))",
                          b.packets_reascended(), b.packets_dropped(), b.messages_dropped()));
  }
  if (r.run().has_faults()) {
    const results::FaultsReport& f = r.run().faults();
    std::uint64_t disconnecting = 0;
    for (const results::FaultEventReport& e : f.events())
      disconnecting += e.disconnected();
    out += fmt::format(
        "  faults: {} events ({} left a pair without a path), longest recovery {:.3f} us (bound "
        "{:.3f} "
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
    if (f.events_not_reached() > 0) {
      out += fmt::format(
          "    ! {} fault events were scheduled after the run ended and never happened\n",
          f.events_not_reached());
    }
  }
  return out;
}

std::set<std::string> reportOutputNames() {
  return ownedOutputs();
}

}  // namespace ebb::replay
