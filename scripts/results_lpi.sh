#!/usr/bin/env bash
# Seed 004's low-power-idle study on its own machine (docs/results_lpi.md):
# the Table V fat tree (XGFT) at 100GBASE-R with 1500-byte packets, a
# 4 096-rank motif mix (configs/mix_fill_4096.textproto) and single jobs of
# each motif at 256-4 096 ranks, under deep-sleep, fast-wake and hybrid
# low-power idle at holds of 0, 1, 2 and 4 x T_s, links otherwise all on (as
# the paper); sparse uniform cross-traffic (what keeps hybrid links in
# fast-wake); and dynamic gating combined with each mode. Writes OUT/runs.csv,
# OUT/results_lpi.md (the tables of docs/results_lpi.md) and OUT/plots/.
# Not part of the test command. Run with --help for the options.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/results_lpi.sh [options]

  --ebb PATH        the ebb binary (default build/tools/ebb)
  --out DIR         output folder (default out/results_lpi)
  --compute-us US   compute per iteration of every job, the paper-like
                    setting (default 10000: seed 004's traced iterations
                    compute for milliseconds to seconds)
  --sizes "N ..."   ranks of the single-job runs (default "256 1024 4096")
  --studies "S ..." which studies, of: multi compute single holds cross gated
                    (default all, cheapest first)
  --shard K/N       run only runs K, K+N, K+2N, ... (K from 0): one of N
                    machines; then concatenate the shards' runs.csv files
                    and make the tables with --tables-only
  --tables-only     only (re)make OUT/results_lpi.md and OUT/plots from
                    OUT/runs.csv
  --set K=V         an override for every run (repeatable), e.g.
                    --set workload.mix.fill.iterations=10

Every run is `ebb replay` with its baseline (links on, active), so each
row's saving and slowdown compare like with like. About an hour on one
core for every study at the defaults (docs/results_lpi.md).
EOF
}

die() {
  echo "results_lpi: $*" >&2
  exit 2
}

cd "$(dirname "$0")/.."
ebb=build/tools/ebb
out=out/results_lpi
compute=10000
sizes="256 1024 4096"
studies="multi compute single holds cross gated"
shard=0
shards=1
tablesOnly=0
extra=()
while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --ebb) (($# >= 2)) || die "--ebb needs a value"; ebb=$2; shift 2 ;;
    --out) (($# >= 2)) || die "--out needs a value"; out=$2; shift 2 ;;
    --compute-us)
      (($# >= 2)) || die "--compute-us needs a value"
      [[ $2 =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--compute-us: must be a number >= 0 (is '$2')"
      compute=$2; shift 2 ;;
    --sizes)
      (($# >= 2)) || die "--sizes needs a value"
      for n in $2; do
        [[ $n =~ ^[0-9]+$ ]] && ((n >= 2 && n <= 4096)) ||
          die "--sizes: each must be a whole number in [2, 4096] (is '$n')"
      done
      sizes=$2; shift 2 ;;
    --studies)
      (($# >= 2)) || die "--studies needs a value"
      for s in $2; do
        [[ $s =~ ^(multi|compute|single|holds|cross|gated)$ ]] ||
          die "--studies: unknown study '$s' (multi, compute, single, holds, cross, gated)"
      done
      studies=$2; shift 2 ;;
    --shard)
      (($# >= 2)) || die "--shard needs K/N"
      [[ $2 =~ ^([0-9]+)/([0-9]+)$ ]] && ((BASH_REMATCH[2] >= 1 && BASH_REMATCH[1] < BASH_REMATCH[2])) ||
        die "--shard: must be K/N with 0 <= K < N (is '$2')"
      shard=${BASH_REMATCH[1]}; shards=${BASH_REMATCH[2]}; shift 2 ;;
    --tables-only) tablesOnly=1; shift ;;
    --set) (($# >= 2)) || die "--set needs K=V"; extra+=("$2"); shift 2 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done
config=configs/mix_fill_4096.textproto
csv=$out/runs.csv
header="study,workload,gating,mode,hold_ts,compute_us,ranks,saving_all_links,saving_switch_links,slowdown_worst,slowdown_mean,wall_s"

# run STUDY WORKLOAD RANKS GATING MODE HOLD COMPUTE_US [overrides...]
index=0
run() {
  local study=$1 workload=$2 ranks=$3 gating=$4 mode=$5 hold=$6 cus=$7
  shift 7
  local mine=$((index % shards == shard))
  index=$((index + 1))
  ((mine)) || return 0
  local dir=$out/$study/$workload-$ranks-$gating-$mode-$hold-$cus
  mkdir -p "$(dirname "$dir")"
  local t0 t1
  t0=$(date +%s.%N)
  "$ebb" replay "$config" "gating.policy=$gating" "lpi.mode=$mode" "lpi.hold_ts=$hold" \
    report.skip_plots=true "$@" "${extra[@]+"${extra[@]}"}" --out "$dir" --quiet >"$dir.log" 2>&1 ||
    { cat "$dir.log" >&2; die "ebb replay failed ($study $workload $ranks $gating $mode $hold)"; }
  t1=$(date +%s.%N)
  python3 - "$dir/report.json" "$study" "$workload" "$gating" "$mode" "$hold" "$cus" "$ranks" \
    "$t0" "$t1" >>"$csv" <<'PY'
import json, sys
path, study, workload, gating, mode, hold, cus, ranks, t0, t1 = sys.argv[1:]
r = json.load(open(path))
slow = [j.get("slowdown", 0.0) for j in r.get("jobs", [])]
mean = sum(slow) / len(slow) if slow else r.get("app_slowdown", 0.0)
print("%s,%s,%s,%s,%s,%s,%s,%.4f,%.4f,%.5f,%.5f,%.1f" % (
    study, workload, gating, mode, hold, cus, ranks, r.get("power_saving_all_links", 0.0),
    r.get("power_saving_switch_links", 0.0), r.get("app_slowdown", 0.0), mean,
    float(t1) - float(t0)))
PY
  echo "results_lpi: $study $workload $ranks $gating $mode hold $hold compute $cus done" >&2
}

has() { [[ " $studies " == *" $1 "* ]]; }

if ((!tablesOnly)); then
  [[ -x $ebb ]] || die "--ebb: '$ebb' is not an executable (build ebb: scripts/build.sh build)"
  mkdir -p "$out"
  echo "$header" >"$csv"
  modes=(DEEP_SLEEP FAST_WAKE HYBRID)
  fill=(workload.mix.fill.iterations=2 workload.mix.fill.cells=16)
  # Cheapest first, so that an interrupted study still has whole tables.
  if has cross; then
    # Sparse uniform traffic of 1500-byte messages: every link sees packets
    # a few microseconds apart, the cross-traffic of seed 004's mixes.
    for rate in 0.003 0.01 0.03; do
      for mode in "${modes[@]}"; do
        run cross "uniform-$rate" 4096 ALL_ON "$mode" 1 0 "workload.uniform.rate=$rate" \
          workload.uniform.duration_cycles=1000000 workload.message_bytes=1500
      done
    done
  fi
  if has multi; then
    for mode in "${modes[@]}"; do
      for hold in 0 1 2 4; do
        [[ $mode == HYBRID && $hold == 0 ]] && continue # deep-sleep exactly (seed 004)
        run multi mix 4096 ALL_ON "$mode" "$hold" "$compute" "${fill[@]}" \
          "workload.mix.fill.compute_us=$compute"
      done
    done
  fi
  if has compute; then
    # The same mix at other compute per iteration (model: the flops model's
    # 25-492 us at 16^3 cells), hold 1 x T_s.
    for cus in model 1000 100000; do
      set -- "${fill[@]}"
      [[ $cus == model ]] || set -- "$@" "workload.mix.fill.compute_us=$cus"
      for mode in "${modes[@]}"; do
        run compute mix 4096 ALL_ON "$mode" 1 "$cus" "$@"
      done
    done
  fi
  # singles STUDY "SIZES" "HOLDS": each motif alone at each size, mode and hold.
  singles() {
    local study=$1 n motif mode hold
    for n in $2; do
      for motif in halo3d halo3d26 sweep3d multigrid fft3d particles; do
        for mode in "${modes[@]}"; do
          for hold in $3; do
            [[ $mode == HYBRID && $hold == 0 ]] && continue # deep-sleep exactly (seed 004)
            run "$study" "$motif" "$n" ALL_ON "$mode" "$hold" "$compute" \
              "workload.motif.name=$motif" "workload.motif.ranks=$n" workload.motif.iterations=2 \
              workload.motif.cells=16 "workload.motif.compute_us=$compute"
          done
        done
      done
    done
  }
  has single && singles single "$sizes" 1
  # The other holds on the smallest size.
  has holds && singles holds "$(tr ' ' '\n' <<<"$sizes" | sort -n | head -1)" "0 2 4"
  if has gated; then
    # Agents tick every check period through the whole run: the longest rows.
    for mode in FAST_WAKE HYBRID DEEP_SLEEP; do
      run gated mix 4096 DYNAMIC "$mode" 1 "$compute" "${fill[@]}" \
        "workload.mix.fill.compute_us=$compute"
    done
  fi
fi

[[ -f $csv ]] || die "no $csv to make the tables from (run the studies first)"
[[ $(head -1 "$csv") == "$header" ]] || die "$csv: not a runs.csv of this script (header differs)"
mkdir -p "$out/plots"
python3 - "$csv" "$out" <<'PY'
import csv, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
out = sys.argv[2]
pct = lambda x: "%.1f%%" % (100 * float(x))
spct = lambda x: "%+.2f%%" % (100 * float(x))
name = {"DEEP_SLEEP": "deep-sleep", "FAST_WAKE": "fast-wake", "HYBRID": "hybrid"}
by = defaultdict(list)
for r in rows:
    by[r["study"]].append(r)
# Shards finish in any order: the tables go by mode, hold and size.
order = {"DEEP_SLEEP": 0, "FAST_WAKE": 1, "HYBRID": 2}
for k in by:
    by[k].sort(key=lambda r: (r["workload"], int(r["ranks"]), order[r["mode"]], int(r["hold_ts"])))
md = []
if by["multi"]:
    md.append("Multi-job (the 4 096-rank mix, %s us of compute per iteration):\n" %
              by["multi"][0]["compute_us"])
    md.append("| mode | hold (x T_s) | link power saved | worst job slowdown | mean job slowdown |")
    md.append("|---|---:|---:|---:|---:|")
    for r in by["multi"]:
        md.append("| %s | %s | %s | %s | %s |" % (name[r["mode"]], r["hold_ts"],
                  pct(r["saving_all_links"]), spct(r["slowdown_worst"]), spct(r["slowdown_mean"])))
    md.append("")
if by["compute"] or by["multi"]:
    md.append("Compute per iteration (the mix, hold 1 x T_s):\n")
    md.append("| compute per iteration (us) | mode | link power saved | worst job slowdown | mean job slowdown |")
    md.append("|---|---|---:|---:|---:|")
    pts = by["compute"] + [r for r in by["multi"] if r["hold_ts"] == "1"]
    key = lambda r: (-1 if r["compute_us"] == "model" else float(r["compute_us"]), r["mode"])
    for r in sorted(pts, key=key):
        md.append("| %s | %s | %s | %s | %s |" % (r["compute_us"], name[r["mode"]],
                  pct(r["saving_all_links"]), spct(r["slowdown_worst"]), spct(r["slowdown_mean"])))
    md.append("")
def by_mode(rows, second, label):
    """A table of saved / slowdown per mode, one row per (motif, `second`)."""
    md.append("| motif | %s | deep-sleep | fast-wake | hybrid |" % label)
    md.append("|---|---:|---|---|---|")
    cells = defaultdict(dict)
    for r in rows:
        cells[(r["workload"], int(r[second]))][r["mode"]] = r
    for (motif, v) in sorted(cells):
        c = cells[(motif, v)]
        f = lambda m: ("%s / %s" % (pct(c[m]["saving_all_links"]), spct(c[m]["slowdown_worst"]))
                       if m in c else "-")
        md.append("| %s | %d | %s | %s | %s |" % (motif, v, f("DEEP_SLEEP"), f("FAST_WAKE"), f("HYBRID")))
    md.append("")
if by["single"]:
    md.append("Single jobs (hold 1 x T_s, %s us of compute per iteration): saved / slowdown\n" %
              by["single"][0]["compute_us"])
    by_mode(by["single"], "ranks", "ranks")
if by["holds"]:
    md.append("Single jobs at other holds (%s ranks, %s us of compute per iteration): saved / slowdown\n" %
              (by["holds"][0]["ranks"], by["holds"][0]["compute_us"]))
    by_mode(by["holds"], "hold_ts", "hold (x T_s)")
if by["cross"]:
    md.append("Sparse uniform cross-traffic (1500-byte messages, hold 1 x T_s): link power saved\n")
    md.append("| load (flits/cycle/node) | deep-sleep | fast-wake | hybrid |")
    md.append("|---:|---:|---:|---:|")
    cells = defaultdict(dict)
    for r in by["cross"]:
        cells[r["workload"].split("-", 1)[1]][r["mode"]] = pct(r["saving_all_links"])
    for load in sorted(cells, key=float):
        c = cells[load]
        md.append("| %s | %s | %s | %s |" % (load, c.get("DEEP_SLEEP", "-"), c.get("FAST_WAKE", "-"),
                                          c.get("HYBRID", "-")))
    md.append("")
if by["gated"]:
    md.append("Dynamic gating with low-power idle (the mix, hold 1 x T_s):\n")
    md.append("| mode | link power saved | worst job slowdown | mean job slowdown |")
    md.append("|---|---:|---:|---:|")
    for r in by["gated"]:
        md.append("| %s | %s | %s | %s |" % (name[r["mode"]], pct(r["saving_all_links"]),
                  spct(r["slowdown_worst"]), spct(r["slowdown_mean"])))
    md.append("")
open(out + "/results_lpi.md", "w").write("\n".join(md))
# Data for the plots: one file per figure, one block per mode.
import os
# Data for the plots, only of the studies that ran (no file: no figure).
for dat, study in (("multi.dat", "multi"), ("single.dat", "single")):
    if not by[study] and os.path.exists(out + "/plots/" + dat):
        os.remove(out + "/plots/" + dat)
if by["multi"]:
    with open(out + "/plots/multi.dat", "w") as f:
        for m in ("DEEP_SLEEP", "FAST_WAKE", "HYBRID"):
            f.write("# %s\n" % name[m])
            for r in by["multi"]:
                if r["mode"] == m:
                    f.write("%s %.4f %.6f %.6f\n" % (r["hold_ts"], 100 * float(r["saving_all_links"]),
                                                     100 * float(r["slowdown_worst"]),
                                                     100 * float(r["slowdown_mean"])))
            f.write("\n\n")
if by["single"]:
    with open(out + "/plots/single.dat", "w") as f:
        for m in ("DEEP_SLEEP", "FAST_WAKE", "HYBRID"):
            f.write("# %s\n" % name[m])
            for i, r in enumerate(x for x in by["single"] if x["mode"] == m):
                f.write("%d \"%s-%s\" %.4f %.6f\n" % (i, r["workload"], r["ranks"],
                                                       100 * float(r["saving_all_links"]),
                                                       max(1e-3, 100 * float(r["slowdown_worst"]))))
            f.write("\n\n")
PY

titles='title (i==0?"deep-sleep":i==1?"fast-wake":"hybrid")'
if command -v gnuplot >/dev/null; then
  gp=$out/plots/plots.gp
  {
    for term in "pngcairo size 900,560" "svg size 900,560"; do
      ext=png
      [[ $term == svg* ]] && ext=svg
      printf "set terminal %s\nset grid\nset key outside bottom center horizontal\n" "$term"
      if [[ -f $out/plots/multi.dat ]]; then
        cat <<EOF
set output '$out/plots/multi_saving.$ext'
set title 'Seed 004 multi-job mix: link power saved'
set xlabel 'hold (x T_s)'
set ylabel 'saved (%)'
set yrange [0:100]
plot for [i=0:2] '$out/plots/multi.dat' index i using 1:2 with linespoints lw 2 $titles
set output '$out/plots/multi_slowdown.$ext'
set title 'Seed 004 multi-job mix: worst job slowdown'
set ylabel 'slowdown (%)'
set autoscale y
plot for [i=0:2] '$out/plots/multi.dat' index i using 1:3 with linespoints lw 2 $titles
EOF
      fi
      if [[ -f $out/plots/single.dat ]]; then
        cat <<EOF
set output '$out/plots/single_slowdown.$ext'
set title 'Single jobs: slowdown (log scale)'
set xlabel ''
set ylabel 'slowdown (%)'
set autoscale y
set logscale y
set xtics rotate by -60 font ',8'
set offsets 0.5, 0.5, 0, 0
plot for [i=0:2] '$out/plots/single.dat' index i using 1:4:xtic(2) with points pt 7 ps 1 $titles
unset logscale y
unset offsets
set xtics norotate
EOF
      fi
    done
  } >"$gp"
  gnuplot "$gp" 2>"$out/plots/plots.log" ||
    echo "results_lpi: warning: gnuplot failed (see $out/plots/plots.log); the tables are written" >&2
else
  echo "results_lpi: warning: gnuplot not found; no plots (the tables are written)" >&2
fi
echo "results_lpi: wrote $csv, $out/results_lpi.md and $out/plots/" >&2
