#!/usr/bin/env bash
# Seed 004's low-power-idle study on its own machine (docs/results_lpi.md):
# the Table V fat tree (XGFT) at 100GBASE-R with 1500-byte packets, a
# 4 096-rank motif mix (configs/mix_fill_4096.textproto) and single jobs of
# each motif, under deep-sleep, fast-wake and hybrid low-power idle at holds
# of 0, 1, 2 and 4 x T_s, links otherwise all on (as the paper), and dynamic
# gating combined with each mode. Writes OUT/runs.csv and OUT/results_lpi.md
# (the tables of docs/results_lpi.md). Not part of the test command: about
# ten minutes on one core at the config's sizes.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/results_lpi.sh [--ebb PATH] [--out DIR] [--ranks N] [--set K=V ...]

  --ebb PATH   the ebb binary (default build/tools/ebb)
  --out DIR    output folder (default out/results_lpi)
  --ranks N    ranks of each single-job run (default 256)
  --set K=V    an override for every run (repeatable), e.g.
               --set workload.mix.fill.iterations=10
EOF
}

die() {
  echo "results_lpi: $*" >&2
  exit 2
}

cd "$(dirname "$0")/.."
ebb=build/tools/ebb
out=out/results_lpi
ranks=256
extra=()
while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --ebb) (($# >= 2)) || die "--ebb needs a value"; ebb=$2; shift 2 ;;
    --out) (($# >= 2)) || die "--out needs a value"; out=$2; shift 2 ;;
    --ranks)
      (($# >= 2)) || die "--ranks needs a value"
      [[ $2 =~ ^[0-9]+$ ]] && (($2 >= 2)) || die "--ranks: must be a whole number >= 2 (is '$2')"
      ranks=$2; shift 2 ;;
    --set) (($# >= 2)) || die "--set needs K=V"; extra+=("$2"); shift 2 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done
[[ -x $ebb ]] || die "--ebb: '$ebb' is not an executable (build ebb: scripts/build.sh build)"
config=configs/mix_fill_4096.textproto
mkdir -p "$out"
csv=$out/runs.csv
echo "study,workload,gating,mode,hold_ts,saving_all_links,saving_switch_links,slowdown_worst,slowdown_mean,wall_s" >"$csv"

# run STUDY WORKLOAD GATING MODE HOLD [overrides...]
run() {
  local study=$1 workload=$2 gating=$3 mode=$4 hold=$5
  shift 5
  local dir=$out/$study/$workload-$gating-$mode-$hold
  local t0 t1
  t0=$(date +%s.%N)
  "$ebb" replay "$config" "gating.policy=$gating" "lpi.mode=$mode" "lpi.hold_ts=$hold" \
    report.skip_plots=true "$@" "${extra[@]+"${extra[@]}"}" --out "$dir" --quiet >"$dir.log" 2>&1 ||
    { cat "$dir.log" >&2; die "ebb replay failed ($study $workload $gating $mode $hold)"; }
  t1=$(date +%s.%N)
  python3 - "$dir/report.json" "$study" "$workload" "$gating" "$mode" "$hold" "$t0" "$t1" >>"$csv" <<'PY'
import json, sys
path, study, workload, gating, mode, hold, t0, t1 = sys.argv[1:]
r = json.load(open(path))
slow = [j.get("slowdown", 0.0) for j in r.get("jobs", [])]
mean = sum(slow) / len(slow) if slow else r.get("app_slowdown", 0.0)
print("%s,%s,%s,%s,%s,%.4f,%.4f,%.5f,%.5f,%.1f" % (
    study, workload, gating, mode, hold, r.get("power_saving_all_links", 0.0),
    r.get("power_saving_switch_links", 0.0), r.get("app_slowdown", 0.0), mean,
    float(t1) - float(t0)))
PY
  echo "results_lpi: $study $workload $gating $mode hold $hold done" >&2
}

# Cheapest first, so that an interrupted study still has whole tables (the
# runs with gating take longest: the agents tick through every slowed run).
modes=(DEEP_SLEEP FAST_WAKE HYBRID)
mkdir -p "$out/multi" "$out/single"
for mode in "${modes[@]}"; do
  for hold in 0 1 2 4; do
    run multi mix ALL_ON "$mode" "$hold"
  done
done
for motif in halo3d halo3d26 sweep3d multigrid fft3d particles; do
  for mode in "${modes[@]}"; do
    run single "$motif" ALL_ON "$mode" 1 "workload.motif.name=$motif" "workload.motif.ranks=$ranks" \
      workload.motif.iterations=2 workload.motif.cells=16
  done
done
for mode in FAST_WAKE HYBRID DEEP_SLEEP; do
  run multi mix DYNAMIC "$mode" 1
done

python3 - "$csv" "$out/results_lpi.md" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
pct = lambda x: "%.1f%%" % (100 * float(x))
with open(sys.argv[2], "w") as f:
    f.write("Multi-job (4 096-rank motif mix, %s):\n\n" % "configs/mix_fill_4096.textproto")
    f.write("| gating | mode | hold (x T_s) | link power saved (all links) | worst job slowdown | mean job slowdown |\n")
    f.write("|---|---|---:|---:|---:|---:|\n")
    for r in rows:
        if r["study"] == "multi":
            f.write("| %s | %s | %s | %s | %s | %s |\n" % (
                r["gating"], r["mode"], r["hold_ts"], pct(r["saving_all_links"]),
                pct(r["slowdown_worst"]), pct(r["slowdown_mean"])))
    f.write("\nSingle jobs (each motif alone, hold 1 x T_s, all links on):\n\n")
    f.write("| motif | mode | link power saved (all links) | slowdown |\n|---|---|---:|---:|\n")
    for r in rows:
        if r["study"] == "single":
            f.write("| %s | %s | %s | %s |\n" % (r["workload"], r["mode"],
                                              pct(r["saving_all_links"]), pct(r["slowdown_worst"])))
PY
echo "results_lpi: wrote $csv and $out/results_lpi.md" >&2
