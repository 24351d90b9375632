#include "tune/plots.h"

#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/file_io.h"
#include "common/gnuplot.h"

namespace ebb::tune {

namespace fs = std::filesystem;

namespace {

// Status codes of the data files: 0 within budget, 1 over budget, 2 outside
// the threshold map (never run).
std::string pointsData(const TuneResult& r) {
  std::string s = "# saving_pct penalty_pct status setting\n";
  for (const SettingResult& x : r.final()) {
    if (x.failed) continue;
    s += fmt::format("{:.4f} {:.4f} {} {}\n", 100 * x.saving, x.penaltyPct, x.feasible ? 0 : 1,
                     x.setting);
  }
  return s;
}

std::string frontData(const TuneResult& r) {
  std::string s = "# saving_pct penalty_pct setting\n";
  for (const SettingResult* x : paretoFront(r.final()))
    s += fmt::format("{:.4f} {:.4f} {}\n", 100 * x->saving, x->penaltyPct, x->setting);
  return s;
}

std::string bestData(const TuneResult& r) {
  std::string s = "# saving_pct penalty_pct setting\n";
  for (const SettingResult& x : r.final()) {
    if (r.best && x.setting == *r.best) {
      s += fmt::format("{:.4f} {:.4f} {}\n", 100 * x.saving, x.penaltyPct, x.setting);
    }
  }
  return s;
}

// One cell per (policy, U_off, U_on) over the other dimensions: the best
// saving within budget, or the best saving when none is within it.
std::string heatmapData(const TunePlan& plan, const TuneResult& r) {
  struct Cell {
    double saving = -1;
    int status = 2;
  };
  std::map<std::tuple<int, double, double>, Cell> cells;
  std::map<std::size_t, const SettingResult*> final;
  for (const SettingResult& x : r.final())
    final[x.setting] = &x;
  for (const Setting& s : plan.settings) {
    if (!s.gates) continue;
    auto it = final.find(s.id);
    if (s.mapValid() && it == final.end()) continue;  // dropped by halving
    Cell& c = cells[{s.isStatic ? 0 : 1, s.uOff, s.uOn}];
    if (!s.mapValid()) continue;
    const SettingResult& x = *it->second;
    const int status = x.feasible ? 0 : 1;
    if (status < c.status || (status == c.status && x.saving > c.saving)) {
      c.status = status;
      c.saving = x.saving;
    }
  }
  std::string s = "# u_off u_on saving_pct status dynamic\n";
  for (const auto& [key, c] : cells) {
    s += fmt::format("{} {} {:.4f} {} {}\n", std::get<1>(key), std::get<2>(key),
                     c.status == 2 ? 0.0 : 100 * c.saving, c.status, std::get<0>(key));
  }
  return s;
}

std::string script(const TunePlan& plan, const std::string& term, const std::string& ext) {
  std::string s =
      fmt::format("set terminal {}\nset key outside bottom center horizontal\nset grid\n", term);
  s += fmt::format(
      "set output 'plots/pareto.{}'\nset title 'Link power saved versus penalty ({} links)'\n"
      "set xlabel 'largest penalty the budget bounds, over the workloads (%)'\n"
      "set ylabel 'link power saved (%)'\nset autoscale\nunset colorbox\n",
      ext, plan.allLinksObjective ? "all" : "switch");
  std::set<double> bounds;
  for (const auto& b :
       {plan.budget.meanLatencyPct, plan.budget.p99LatencyPct, plan.budget.appSlowdownPct}) {
    if (b) bounds.insert(*b);
  }
  int arrow = 1;
  for (double b : bounds)
    s += fmt::format("set arrow {} from {}, graph 0 to {}, graph 1 nohead dt 2 lc rgb 'gray40'\n",
                     arrow++, b, b);
  s += "plot 'plots/points.dat' using 2:($3==0?$1:1/0) with points pt 7 ps 0.8 lc rgb '#1a9850' "
       "title 'within budget', '' using 2:($3==1?$1:1/0) with points pt 2 ps 0.8 lc rgb '#d73027' "
       "title 'over budget', 'plots/front.dat' using 2:1 with linespoints pt 6 ps 1.4 lw 2 lc rgb "
       "'#4575b4' title 'Pareto front', 'plots/best.dat' using 2:1 with points pt 3 ps 2.5 lc "
       "rgb 'black' title 'recommended'\n";
  for (int a = 1; a < arrow; ++a)
    s += fmt::format("unset arrow {}\n", a);
  s += fmt::format(
      "set output 'plots/thresholds.{}'\nset title 'Link power saved over the threshold map "
      "(dynamic at U_{{off}} = 0)'\nset xlabel 'U_{{off}}'\nset ylabel 'U_{{on}}'\nset xrange "
      "[-0.02:0.52]\n"
      "set yrange [0:1.05]\nset colorbox\nset cblabel 'link power saved (%)'\n"
      "set palette defined (0 '#ffffcc', 1 '#41b6c4', 2 '#0c2c84')\n"
      "plot 2*x with lines dt 2 lc rgb 'gray' title 'U_{{on}} = 2 U_{{off}}', "
      "'plots/heatmap.dat' using 1:($5==0&&$4<2?$2:1/0):3 with points pt 5 ps 3 lc palette "
      "title 'static', '' using 1:($5==1&&$4<2?$2:1/0):3 with points pt 9 ps 3 lc palette title "
      "'dynamic', '' using 1:($4==1?$2:1/0) with points pt 2 ps 2 lc rgb '#d73027' title 'over "
      "budget', '' using 1:($4==2?$2:1/0) with points pt 1 ps 2 lc rgb 'gray40' title 'outside "
      "the map (U_{{on}} <= 2 U_{{off}})'\n",
      ext);
  return s;
}

}  // namespace

Status writeTunePlots(const std::string& dir, const TunePlan& plan, const TuneResult& result) {
  const fs::path d(dir);
  std::error_code ec;
  fs::create_directories(d / "plots", ec);
  if (ec) return {ErrorCode::kIo, fmt::format("cannot create {}/plots: {}", dir, ec.message())};
  for (const auto& [name, text] : {std::pair{"plots/points.dat", pointsData(result)},
                                   std::pair{"plots/front.dat", frontData(result)},
                                   std::pair{"plots/best.dat", bestData(result)},
                                   std::pair{"plots/heatmap.dat", heatmapData(plan, result)}}) {
    if (Status s = writeFile(d / name, text); !s.isOk()) return s;
  }
  return renderGnuplot(
      dir, "tune.gp", 900, 650,
      [&](const std::string& term, const std::string& ext) { return script(plan, term, ext); });
}

}  // namespace ebb::tune
