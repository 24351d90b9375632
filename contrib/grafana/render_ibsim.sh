#!/usr/bin/env bash
# Draws the panels of the Grafana dashboard (ebb-agent.json, next to this
# file) from metrics scraped off a real `ebb agent`, with gnuplot: a rendering
# of the dashboard's queries, not a Grafana screenshot (Grafana is not a
# Debian 12 package). The samples come from the integration test
# tests/ib/dashboard_run_test.cpp, which runs ebb agent on ibsim + OpenSM and
# scrapes /metrics every 250 ms into BUILD/test_scratch/dashboard_ibsim.tsv.
#
# Usage: contrib/grafana/render_ibsim.sh TSV OUT.png
#   e.g. ctest --test-dir build -R DashboardRun &&
#        contrib/grafana/render_ibsim.sh build/test_scratch/dashboard_ibsim.tsv \
#            docs/figures/dashboard_ibsim.png
#
# The queries are those of ebb-agent.json, with the windows of increase() and
# rate() shortened from 1 and 5 minutes to 2 s: the run lasts about 20 s.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: render_ibsim.sh TSV OUT.png" >&2; exit 2; }
tsv=$1
out=$2
[ -s "$tsv" ] || { echo "render_ibsim: $tsv: no samples (run ctest -R DashboardRun)" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "render_ibsim: gnuplot is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# query NAME FILTER GROUP MODE [LEGEND]: one PromQL-like query over the TSV,
# written to $work/NAME.dat as a table (time, then one column per group):
#   FILTER  label=value,... that a series must have ("" for any)
#   GROUP   labels to sum by, comma-separated ("" sums everything)
#   MODE    value | increase | rate (over the last 2 s of samples)
#   LEGEND  the column title when GROUP is ""
query() {
  local file=$1 metric=$2 filter=$3 group=$4 mode=$5 legend=${6:-$2}
  awk -F'\t' -v metric="$metric" -v filter="$filter" -v group="$group" -v mode="$mode" \
    -v legend="$legend" -v window=2 '
    function label(labels, key,   m) {
      if (match(labels, "(^|,)" key "=\"[^\"]*\"")) {
        m = substr(labels, RSTART, RLENGTH); sub(/^,/, "", m); sub(/^[^=]*="/, "", m)
        sub(/"$/, "", m); return m
      }
      return ""
    }
    /^#/ { next }
    {
      t = $1; series = $2; v = $3 + 0
      name = series; labels = ""
      if (index(series, "{")) {
        name = substr(series, 1, index(series, "{") - 1)
        labels = substr(series, index(series, "{") + 1); sub(/}$/, "", labels)
      }
      if (!(t in seen)) { seen[t] = 1; times[++nt] = t }
      if (name != metric) next
      nf = split(filter, fs, ",")
      for (i = 1; i <= nf; i++) {
        split(fs[i], kv, "=")
        if (label(labels, kv[1]) != kv[2]) next
      }
      g = ""
      ng = split(group, gs, ",")
      for (i = 1; i <= ng; i++) g = g (i > 1 ? " " : "") label(labels, gs[i])
      if (g == "") g = legend
      if (!(g in gi)) { gi[g] = ++ngroups; gname[ngroups] = g }
      if (!(series in si)) { si[series] = ++nseries; sgroup[nseries] = g }
      s = si[series]; n = ++cnt[s]; st[s, n] = t; sv[s, n] = v; at[s, t] = n
    }
    END {
      if (ngroups == 0) { gname[1] = legend; ngroups = 1 }
      printf "t"
      for (k = 1; k <= ngroups; k++) printf "\t\"%s\"", gname[k]
      printf "\n"
      for (j = 1; j <= nt; j++) {
        t = times[j]
        delete sum; delete have
        for (s = 1; s <= nseries; s++) {
          if (!((s, t) in at)) continue
          n = at[s, t]; g = sgroup[s]
          if (mode == "value") { sum[g] += sv[s, n]; have[g] = 1; continue }
          b = n
          while (b > 1 && st[s, b] > t - window) b--
          if (b == n) continue
          d = sv[s, n] - sv[s, b]
          if (mode == "rate") d = d / (st[s, n] - st[s, b])
          sum[g] += d; have[g] = 1
        }
        printf "%s", t
        for (k = 1; k <= ngroups; k++) {
          g = gname[k]
          if (g in have) printf "\t%g", sum[g] + 0; else printf "\tNaN"
        }
        printf "\n"
      }
    }' "$tsv" >"$work/$file.dat"
}

query levels_on ebb_links state=on level value
query levels_off ebb_links state=off level value
query power ebb_link_power_relative "" "" value "link power"
query decisions ebb_decisions_total refused=no source,action increase
query refusals ebb_decisions_total refused=yes source increase
query held ebb_links_held_on "" "" value "links held on (flapping)"
query mad_failed ebb_mads_failed_total "" "" rate "failed/s"
query mad_timeouts ebb_mads_timeouts_total "" "" rate "timeouts/s"
query mad_malformed ebb_mads_malformed_total "" "" rate "malformed/s"
query mad_reroutes ebb_smp_reroutes_total "" "" rate "rerouted/s"
query mad_outstanding ebb_mads_outstanding "" "" value "in flight"
query latency ebb_period_seconds "" "" value "counter read of one switch"
query failed_safe ebb_agents_failed_safe "" "" value "agents failed safe"
query failsafe_decisions ebb_decisions_total source=fail-safe "" increase "fail-safe decisions"
query rehomings ebb_rehomings_total "" "" value "re-homings (total)"
query restored ebb_links_restored_total "" "" value "links restored (total)"
query recoveries ebb_recoveries_total "" outcome value
query last_recovery ebb_last_recovery_seconds "" "" value "last recovery (s)"
query sets ebb_port_sets_total "" "" increase "Sets"
query osm ebb_osm_events_total "" event,trap increase

# The y range of a panel over these tables: from 0, and 0 to 1 when every
# value is 0 (gnuplot warns on an empty range otherwise).
yr() {
  local f
  for f in "$@"; do
    if awk -F'\t' 'NR > 1 { for (i = 2; i <= NF; i++) if ($i != "NaN" && $i + 0 != 0) found = 1 }
                    END { exit !found }' "$work/$f.dat"; then
      echo "[0:*]"
      return
    fi
  done
  echo "[0:1]"
}

cat >"$work/plot.gp" <<EOF
set terminal pngcairo size 1600,1900 font ",10" noenhanced
set output "$out"
set datafile separator "\t"
set key top right font ",8" samplen 2
set grid
set xlabel "seconds"
set style data lines
set xrange [0:*]
set offsets 0, 0, graph 0.08, 0
set multiplot layout 5,2 title "ebb agent on ibsim + OpenSM (4-ary 3-tree): the dashboard's queries over /metrics scraped every 250 ms\\nnot a Grafana screenshot; increase() and rate() over 2 s" font ",12"
set title "Links on per level"
set yrange $(yr levels_on levels_off)
plot for [i=2:*] "$work/levels_on.dat" using 1:i title "level ".columnhead(i)." on" lw 2, \
     for [i=2:*] "$work/levels_off.dat" using 1:i title "level ".columnhead(i)." off" dt 2
set title "Estimated link power"
set format y "%g%%"
set yrange [0:105]
plot "$work/power.dat" using 1:(\$2*100) title columnhead(2) lw 2
set format y "%g"
set title "Decisions by reason (accepted, per 2 s)"
set yrange $(yr decisions)
plot for [i=2:*] "$work/decisions.dat" using 1:i title columnhead(i)
set title "Refusals (per 2 s)"
set yrange $(yr refusals held)
plot for [i=2:*] "$work/refusals.dat" using 1:i title columnhead(i)." refused", \
     "$work/held.dat" using 1:2 title columnhead(2)
set title "MAD errors"
set yrange $(yr mad_failed mad_timeouts mad_malformed mad_reroutes mad_outstanding)
plot "$work/mad_failed.dat" using 1:2 title columnhead(2), \
     "$work/mad_timeouts.dat" using 1:2 title columnhead(2), \
     "$work/mad_malformed.dat" using 1:2 title columnhead(2), \
     "$work/mad_reroutes.dat" using 1:2 title columnhead(2), \
     "$work/mad_outstanding.dat" using 1:2 title columnhead(2)
set title "MAD latency (the last counter read of one switch)"
set yrange $(yr latency)
set ylabel "ms"
plot "$work/latency.dat" using 1:(\$2*1000) title columnhead(2)
set ylabel ""
set title "Fail-safe events"
set yrange $(yr failed_safe failsafe_decisions)
plot "$work/failed_safe.dat" using 1:2 title columnhead(2) lw 2, \
     "$work/failsafe_decisions.dat" using 1:2 title columnhead(2)
set title "Re-homing and recovery"
set key top left
set yrange $(yr rehomings restored recoveries)
set y2tics
set y2label "last recovery (s)"
set y2range $(yr last_recovery)
plot "$work/rehomings.dat" using 1:2 title columnhead(2), \
     "$work/restored.dat" using 1:2 title columnhead(2), \
     for [i=2:*] "$work/recoveries.dat" using 1:i title "recoveries ".columnhead(i), \
     "$work/last_recovery.dat" using 1:2 axes x1y2 title columnhead(2)." (right axis)" lw 2
unset y2tics
unset y2label
set key top right
set title "Port Sets (per 2 s)"
set yrange $(yr sets)
plot "$work/sets.dat" using 1:2 title columnhead(2)
set title "OpenSM events (per 2 s)"
set yrange $(yr osm)
plot for [i=2:*] "$work/osm.dat" using 1:i title columnhead(i)
unset multiplot
EOF
gnuplot "$work/plot.gp"
echo "render_ibsim: wrote $out"
