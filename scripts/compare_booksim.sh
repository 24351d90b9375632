#!/usr/bin/env bash
# Runs the same synthetic experiment on BookSim2 and on ebb's emulator, load by
# load, and compares mean packet latency, accepted load and speed
# (docs/emulator.md, "Comparison with BookSim2").
# Run with --help for the options.
set -euo pipefail

prog=compare_booksim
repo=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  cat <<EOF
Usage: scripts/compare_booksim.sh BOOKSIM_BINARY [options]

Runs BookSim2 (router iq, topology fattree, routing nca, 3 VCs, 16-flit
packets, Bernoulli injection, stock defaults otherwise) and ebb's emulator
(every link on) on the same k-ary n-tree, traffic pattern and offered loads,
and compares them point by point.

Options:
  -k K                 arity of the k-ary n-tree (integer >= 2; default 4)
  -n N                 levels of the tree (integer >= 1; default 4)
  --buf FLITS          VC buffer size in flits, 16 or 4 (default 16); ebb gets
                       emulator.vc_buffer_bytes = FLITS * 4
  --pattern NAME       BookSim traffic pattern: uniform (default), bitcomp,
                       transpose, bitrev or shuffle. ebb runs uniform natively
                       and the permutations from a generated traffic file.
                       Like for like: BookSim's uniform sends 1 packet in
                       N (N hosts) to the source itself, through its leaf
                       switch and back, so ebb runs uniform with
                       workload.uniform.include_self = true (the same
                       destinations, the same load on every host link).
                       A permutation's fixed points send only to
                       themselves, over ports nothing else uses; ebb's
                       traffic file leaves them out: its accepted load is
                       compared with BookSim's less the load times F/N (F
                       fixed points; BookSim accepts all they send even
                       past saturation), and BookSim's latency is its mean
                       over packets between distinct hosts (a second,
                       untimed BookSim run with pair_stats = 1)
  --loads "R1 R2 ..."  offered loads in flits/cycle/node, each in (0, 1]
                       (default "0.02 0.1 0.2 0.3 0.4 0.5 0.55")
  --cycles C           ebb: cycles of traffic per point (integer > 0; default
                       30000). BookSim keeps its own warm-up and sampling
                       (warmup_periods, sample_period, max_samples)
  --config FILE        ebb config (default
                       configs/fidelity/booksim_iq_vc<FLITS>.textproto if it
                       exists, else ebb's built-in default); gating.policy=ALL_ON
                       and the geometry (k, n, 4-byte flits, 64-byte packets,
                       3 VCs, the VC buffer) are always set on the command line
  --out DIR            output folder (default out/compare, relative to the
                       current directory)
  --ebb PATH           the ebb binary (default <repo>/build/tools/ebb)
  --ebb-warmup W       ebb: latency over the messages created from cycle W on
                       (report.latency_warmup_cycles; integer >= 0, less
                       than --cycles; default a quarter of --cycles), as
                       BookSim measures after its warm-up: from a cold
                       start the first messages find the network empty,
                       which lowers the mean near saturation by 2-3%
  --seed S             ebb's seed and the traffic file's (integer >= 0;
                       default 1). BookSim keeps its stock seed 0
  --booksim-set K=V    add the line "K = V;" to every BookSim config
                       (repeatable; e.g. --booksim-set sample_period=10000)
  --ebb-set K=V        add the override K=V to every ebb run (repeatable)
  --booksim-only       run BookSim alone (ebb's columns are NA), e.g. to
                       collect reference points once
  -h, --help           this text

For each load: OUT/booksim/load_<R>.cfg (+ .log), and when BookSim prints
"Simulation unstable" (saturated) a rerun with sim_type = throughput
(load_<R>_throughput.cfg/.log) for the accepted rate; OUT/ebb/load_<R>/
(ebb's report.json, timeseries.csv). Results: OUT/compare.csv, OUT/compare.md
and, with gnuplot, OUT/compare.png and OUT/compare.svg.

BookSim: "Packet latency average" and "Accepted packet rate average" x 16 of
the overall statistics. ebb: run.mean_latency_cycles of report.json (over
the messages created after --ebb-warmup) and the accepted load over the second half of the run (timeseries.csv). Times are
CPU seconds (user + system) of each process, so other load on the machine
moves them little; booksim_s includes the throughput rerun. booksim_cycles is
the length of the BookSim run ("Time taken": warm-up, samples and drain; of
the throughput rerun when saturated). speedup compares whole points;
speedup_per_cycle compares CPU time per simulated cycle (BookSim: its run's
cycles; ebb: the given cycles, its drain counted against it), the measure of
the 50x target (docs/performance.md). BookSim exits with status 255 on
success; 0 and 255 are accepted.
EOF
}

die() {
  echo "$prog: error: $*" >&2
  exit 2
}
fail() {
  echo "$prog: error: $*" >&2
  exit 1
}
log() { echo "$prog: $*" >&2; }

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
is_load() {
  python3 - "$1" <<'PY'
import math, sys
try:
    v = float(sys.argv[1])
except ValueError:
    sys.exit(1)
sys.exit(0 if math.isfinite(v) and 0 < v <= 1 else 1)
PY
}
abspath() {
  case $1 in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s\n' "$PWD/$1" ;;
  esac
}

# ---- arguments ------------------------------------------------------------
for a in "$@"; do
  if [[ $a == -h || $a == --help ]]; then
    usage
    exit 0
  fi
done
[[ $# -ge 1 ]] || die "BOOKSIM_BINARY is missing (usage: scripts/compare_booksim.sh BOOKSIM_BINARY [options]; --help)"
booksim=$1
shift
[[ $booksim != -* ]] || die "BOOKSIM_BINARY must come first (got the option '$booksim'; --help)"
[[ -f $booksim && -x $booksim ]] || die "BOOKSIM_BINARY: '$booksim' is not an executable file"
booksim=$(abspath "$booksim")

k=4
n=4
buf=16
pattern=uniform
loads="0.02 0.1 0.2 0.3 0.4 0.5 0.55"
cycles=30000
config=""
out=out/compare
ebb=$repo/build/tools/ebb
seed=1
warmup=""
booksim_extra=()
ebb_extra=()
booksim_only=0

need_value() { [[ $# -ge 2 ]] || die "$1: needs a value"; }
while [[ $# -gt 0 ]]; do
  opt=$1
  case $opt in
    -k) need_value "$@"; k=$2; shift 2 ;;
    -n) need_value "$@"; n=$2; shift 2 ;;
    --buf) need_value "$@"; buf=$2; shift 2 ;;
    --pattern) need_value "$@"; pattern=$2; shift 2 ;;
    --loads) need_value "$@"; loads=$2; shift 2 ;;
    --cycles) need_value "$@"; cycles=$2; shift 2 ;;
    --config) need_value "$@"; config=$2; shift 2 ;;
    --out) need_value "$@"; out=$2; shift 2 ;;
    --ebb) need_value "$@"; ebb=$2; shift 2 ;;
    --seed) need_value "$@"; seed=$2; shift 2 ;;
    --ebb-warmup) need_value "$@"; warmup=$2; shift 2 ;;
    --booksim-set) need_value "$@"; booksim_extra+=("$2"); shift 2 ;;
    --ebb-set) need_value "$@"; ebb_extra+=("$2"); shift 2 ;;
    --booksim-only) booksim_only=1; shift ;;
    *) die "unknown argument '$opt' (--help lists the options)" ;;
  esac
done

{ is_uint "$k" && ((10#$k >= 2 && 10#$k <= 64)); } || die "-k: must be an integer from 2 to 64 (is '$k')"
{ is_uint "$n" && ((10#$n >= 1 && 10#$n <= 8)); } || die "-n: must be an integer from 1 to 8 (is '$n')"
k=$((10#$k))
n=$((10#$n))
[[ $buf == 16 || $buf == 4 ]] || die "--buf: must be 16 or 4 flits (is '$buf')"
{ is_uint "$cycles" && ((${#cycles} <= 12 && 10#$cycles > 0)); } ||
  die "--cycles: must be an integer > 0 (is '$cycles')"
cycles=$((10#$cycles))
if [[ -z $warmup ]]; then
  warmup=$((cycles / 4))
else
  { is_uint "$warmup" && ((${#warmup} <= 12 && 10#$warmup < cycles)); } ||
    die "--ebb-warmup: must be an integer from 0 to --cycles - 1 = $((cycles - 1)) (is '$warmup')"
  warmup=$((10#$warmup))
fi
{ is_uint "$seed" && ((${#seed} <= 18)); } || die "--seed: must be an integer >= 0 (is '$seed')"
read -r -a load_list <<<"$loads"
[[ ${#load_list[@]} -gt 0 ]] || die "--loads: needs at least one load"
for r in "${load_list[@]}"; do
  is_load "$r" || die "--loads: each load must be a number in (0, 1] flits/cycle/node (is '$r')"
done
for kv in "${booksim_extra[@]+"${booksim_extra[@]}"}"; do
  [[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*=[^\;]+$ ]] ||
    die "--booksim-set: must be KEY=VALUE, KEY a BookSim option name, VALUE without ';' (is '$kv')"
done
for kv in "${ebb_extra[@]+"${ebb_extra[@]}"}"; do
  [[ $kv =~ ^[A-Za-z_][A-Za-z0-9_.]*=.*$ ]] || die "--ebb-set: must be KEY=VALUE, KEY a config field path (is '$kv')"
done

hosts=$((k ** n))
((hosts <= 1048576)) || die "-k/-n: the tree must have at most 1048576 hosts (k^n = $k^$n)"
case $pattern in
  uniform) ;;
  bitcomp | transpose | bitrev | shuffle)
    ((hosts & (hosts - 1))) && die "--pattern: $pattern needs a power-of-two number of hosts (k^n = $hosts)"
    if [[ $pattern == transpose ]]; then
      bits=0
      for ((h = hosts; h > 1; h >>= 1)); do bits=$((bits + 1)); done
      ((bits % 2 == 0)) || die "--pattern: transpose needs an even power of two hosts (k^n = $hosts = 2^$bits)"
    fi
    ;;
  *) die "--pattern: must be uniform, bitcomp, transpose, bitrev or shuffle (is '$pattern')" ;;
esac

((booksim_only)) || [[ -f $ebb && -x $ebb ]] || die "--ebb: '$ebb' is not an executable file (build ebb: scripts/build.sh build)"
ebb=$(abspath "$ebb")
if [[ -z $config ]]; then
  if [[ -f $repo/configs/fidelity/booksim_iq_vc$buf.textproto ]]; then
    config=$repo/configs/fidelity/booksim_iq_vc$buf.textproto
  fi
else
  [[ -f $config ]] || die "--config: '$config' is not a file"
  config=$(abspath "$config")
fi
command -v python3 >/dev/null || fail "python3 is needed to read the results"

[[ $out != *[\'\"]* ]] || die "--out: the path may not contain quotes (the gnuplot script names it) (is '$out')"
out=$(abspath "$out")
mkdir -p "$out/booksim" "$out/ebb" 2>/dev/null || die "--out: cannot create '$out'"
# BookSim's bit permutations, one definition for the traffic files and the
# tables (imported by the Python steps below through PYTHONPATH).
cat > "$out/pattern_dest.py" <<'PY'
def destination(s, pattern, hosts):
    """BookSim2's destination of source s, or None for an unknown pattern."""
    bits = hosts.bit_length() - 1
    if pattern == "bitcomp":
        return ~s & (hosts - 1)
    if pattern == "transpose":
        h = bits // 2
        lo = (1 << h) - 1
        return ((s >> h) & lo) | ((s << h) & (lo << h))
    if pattern == "bitrev":
        return int(format(s, "0%db" % bits)[::-1], 2) if bits else 0
    if pattern == "shuffle":
        t = s << 1
        return (t & (hosts - 1)) | (1 if t & hosts else 0)
    return None
PY
export PYTHONPATH="$out${PYTHONPATH:+:$PYTHONPATH}"
# Hosts a permutation maps onto themselves: BookSim sends them packets that
# never leave their leaf switch, ebb none.
fixed=0
if [[ $pattern != uniform ]]; then
  fixed=$(python3 -c 'import sys; from pattern_dest import destination; p, h = sys.argv[1], int(sys.argv[2]); print(sum(1 for s in range(h) if destination(s, p, h) == s))' "$pattern" "$hosts")
fi
[[ -w $out ]] || die "--out: '$out' is not writable"

if ((booksim_only)); then
  log "BookSim only (--booksim-only): no ebb runs"
elif [[ -n $config ]]; then
  log "ebb config: $config"
else
  log "ebb config: the built-in default (no configs/fidelity/booksim_iq_vc$buf.textproto)"
fi
log "$k-ary $n-tree ($hosts hosts), pattern $pattern, VC buffer $buf flits, loads: ${load_list[*]}, ebb $cycles cycles"

# Runs CMD in DIR with its output to LOG and prints "EXIT_STATUS CPU_SECONDS"
# (user + system time of the command, from bash's time).
timed() { # LOG DIR CMD...
  local log=$1 dir=$2 rc=0 t TIMEFORMAT='%3U %3S'
  shift 2
  t=$({ time (cd "$dir" && "$@" </dev/null >"$log" 2>&1); } 2>&1) || rc=$?
  # $t is two numbers: user and system seconds
  echo "$rc $(python3 -c 'import sys; print("%.3f" % (float(sys.argv[1]) + float(sys.argv[2])))' $t)"
}

# ---- BookSim ----------------------------------------------------------------
write_booksim_config() { # FILE LOAD SIM_TYPE
  {
    echo "// written by scripts/compare_booksim.sh: BookSim2 stock defaults plus these"
    echo "topology = fattree;"
    echo "k = $k;"
    echo "n = $n;"
    echo "routing_function = nca;"
    echo "num_vcs = 3;"
    echo "packet_size = 16;"
    echo "traffic = $pattern;"
    echo "injection_process = bernoulli;"
    echo "injection_rate_uses_flits = 1;"
    echo "sim_type = $3;"
    echo "router = iq;"
    echo "vc_buf_size = $buf;"
    echo "injection_rate = $2;"
    for kv in "${booksim_extra[@]+"${booksim_extra[@]}"}"; do
      echo "${kv%%=*} = ${kv#*=};"
    done
  } >"$1"
}

# Runs BookSim on CONFIG writing LOG, its CPU seconds in booksim_cpu; exit 0
# and 255 are success.
run_booksim() { # CONFIG LOG
  local rc
  read -r rc booksim_cpu < <(timed "$2" "$(dirname "$1")" nice -n 5 "$booksim" "$1")
  if [[ $rc != 0 && $rc != 255 ]]; then
    fail "BookSim failed on $1 (exit status $rc; see $2)"
  fi
}

# Prints "LATENCY PACKET_RATE CYCLES" from the overall statistics of a BookSim
# log (CYCLES: "Time taken", warm-up + samples + drain), or "unstable
# LAST_PACKET_RATE NA" when the run was unstable (the accepted rate of the last
# sample printed, averaged since the end of the warm-up).
parse_booksim() { # LOG
  python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
num = r"([-+0-9.eE]+|nan|-?inf)"
if "Simulation unstable" in text:
    acc = re.findall(r"Accepted packet rate average = " + num, text)
    print("unstable", acc[-1] if acc else "NA", "NA")
    sys.exit(0)
i = text.find("====== Overall Traffic Statistics ======")
if i < 0:
    sys.exit("no overall statistics and no 'Simulation unstable' in " + sys.argv[1])
tail = text[i:]
lat = re.search(r"Packet latency average = " + num, tail)
acc = re.search(r"Accepted packet rate average = " + num, tail)
if not lat or not acc:
    sys.exit("no packet latency / accepted packet rate in the overall statistics of " + sys.argv[1])
cyc = re.search(r"Time taken is (\d+) cycles", text)
print(lat.group(1), acc.group(1), cyc.group(1) if cyc else "NA")
PY
}

# Prints BookSim's mean latency over the packets whose source and destination
# differ, from a log written with pair_stats = 1 and stats_out = - (the last
# pair_sent/pair_plat matrices printed: the overall statistics).
parse_booksim_pairs() { # LOG
  python3 - "$1" <<'PY'
import math, re, sys
text = open(sys.argv[1], errors="replace").read()
sent = re.findall(r"pair_sent\(1,:\) = \[ ([^\]]*)\]", text)
plat = re.findall(r"pair_plat\(1,:\) = \[ ([^\]]*)\]", text)
if not sent or not plat:
    sys.exit("no pair statistics (pair_sent, pair_plat) in " + sys.argv[1])
n = [float(x) for x in sent[-1].split()]
lat = [0.0 if "nan" in x else float(x) for x in plat[-1].split()]
hosts = int(round(math.sqrt(len(n))))
if hosts * hosts != len(n) or len(lat) != len(n):
    sys.exit("pair statistics of " + sys.argv[1] + " are not a square matrix")
pairs = [(n[i], lat[i]) for i in range(len(n)) if i // hosts != i % hosts]
count = sum(c for c, _ in pairs)
if count == 0:
    sys.exit("no packet between distinct hosts in " + sys.argv[1])
print("%.6g" % (sum(c * l for c, l in pairs) / count))
PY
}

# ---- ebb ----------------------------------------------------------------------
# A native traffic file of a BookSim bit permutation: Bernoulli arrivals of
# 16-flit packets per host and cycle, as BookSim's bernoulli process; messages
# a pattern maps to their own source are left out (ebb refuses them).
write_traffic_file() { # FILE LOAD
  python3 - "$1" "$2" "$pattern" "$hosts" "$cycles" "$seed" <<'PY'
import math, random, sys
path, rate, pattern, hosts, cycles, seed = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
from pattern_dest import destination
def dest(s):
    d = destination(s, pattern, hosts)
    if d is None:
        raise SystemExit("unknown pattern " + pattern)
    return d
p = rate / 16.0  # packets per cycle per host
rng = random.Random(seed)
msgs = []
for s in range(hosts):
    d = dest(s)
    if d == s:
        continue
    t = -1
    if p >= 1:
        times = range(cycles)
    else:
        times = []
        lq = math.log1p(-p)
        while True:
            u = 1.0 - rng.random()
            t += int(math.log(u) / lq) + 1  # geometric gap: Bernoulli(p) per cycle
            if t >= cycles:
                break
            times.append(t)
    for t in times:
        msgs.append((t, s, d))
msgs.sort()
with open(path, "w") as f:
    f.write("# %s, %g flits/cycle/node, %d cycles, seed %d (scripts/compare_booksim.sh)\n" % (pattern, rate, cycles, seed))
    for t, s, d in msgs:
        f.write("%d %d %d 64\n" % (t, s, d))
PY
}

# Prints "MEAN_LATENCY ACCEPTED_SECOND_HALF OFFERED" of an ebb output folder.
parse_ebb() { # DIR
  python3 - "$1" "$cycles" <<'PY'
import csv, json, sys
d, cycles = sys.argv[1], int(sys.argv[2])
run = json.load(open(d + "/report.json"))["run"]
lat = run.get("mean_latency_cycles", 0.0)
if int(run.get("messages_delivered", "0")) == 0:
    lat = "NA"
rows = list(csv.DictReader(open(d + "/timeseries.csv")))
num = den = 0.0
prev = 0.0
for r in rows:
    t = float(r["time_cycles"])
    start, prev = prev, t
    if start >= cycles / 2 and t <= cycles:
        num += float(r["accepted"]) * (t - start)
        den += t - start
acc = num / den if den > 0 else run.get("accepted_load", 0.0)
print(lat, acc, run.get("offered_load", 0.0))
PY
}

# ---- the points ----------------------------------------------------------------
results=$out/.points.tsv
: >"$results"
for r in "${load_list[@]}"; do
  tag=$(python3 -c 'import sys; print("%g" % float(sys.argv[1]))' "$r")

  # BookSim
  bcfg=$out/booksim/load_$tag.cfg
  blog=$out/booksim/load_$tag.log
  write_booksim_config "$bcfg" "$r" latency
  run_booksim "$bcfg" "$blog"
  b_s=$booksim_cpu
  read -r b_lat b_pkt b_cyc < <(parse_booksim "$blog") || fail "cannot read BookSim's results from $blog"
  saturated=no
  if [[ $b_lat == unstable ]]; then
    saturated=yes
    b_lat=NA
    log "load $tag: BookSim unstable (saturated); rerunning with sim_type = throughput"
    tcfg=$out/booksim/load_${tag}_throughput.cfg
    tlog=$out/booksim/load_${tag}_throughput.log
    write_booksim_config "$tcfg" "$r" throughput
    run_booksim "$tcfg" "$tlog"
    b_s=$(python3 -c 'import sys; print("%.3f" % (float(sys.argv[1]) + float(sys.argv[2])))' "$b_s" "$booksim_cpu")
    read -r _ b_pkt b_cyc < <(parse_booksim "$tlog") || fail "cannot read BookSim's results from $tlog"
  fi
  b_cyc_s=$booksim_cpu # the CPU time of the run that b_cyc counts
  # Like for like: with fixed points, the latency over packets between
  # distinct hosts, from a rerun with per-pair statistics (the same seed, the
  # same packets; not timed: the statistics cost BookSim extra).
  b_lat_all=$b_lat
  if ((fixed > 0)) && [[ $saturated == no ]]; then
    pcfg=$out/booksim/load_${tag}_pairs.cfg
    plog=$out/booksim/load_${tag}_pairs.log
    write_booksim_config "$pcfg" "$r" latency
    printf 'pair_stats = 1;\nstats_out = -;\n' >>"$pcfg"
    run_booksim "$pcfg" "$plog"
    b_lat=$(parse_booksim_pairs "$plog") || fail "cannot read BookSim's pair statistics from $plog"
  fi

  # ebb
  e_lat=NA e_acc=NA e_off=NA e_s=NA
  if ((!booksim_only)); then
  edir=$out/ebb/load_$tag
  eargs=()
  [[ -n $config ]] && eargs+=("$config")
  eargs+=(gating.policy=ALL_ON "fabric.kary_n_tree.k=$k" "fabric.kary_n_tree.n=$n"
    emulator.flit_bytes=4 emulator.packet_bytes=64 emulator.vcs=3
    "emulator.vc_buffer_bytes=$((buf * 4))"
    report.skip_baseline=true report.skip_plots=true "seed=$seed"
    "report.latency_warmup_cycles=$warmup")
  if [[ $pattern == uniform ]]; then
    # BookSim's uniform sends 1 packet in N to the source itself, through
    # its leaf switch: so does ebb's with include_self.
    eargs+=("workload.uniform.rate=$r" "workload.uniform.duration_cycles=$cycles"
      workload.uniform.include_self=true workload.message_bytes=64)
  else
    tfile=$out/ebb/traffic_$tag.txt
    write_traffic_file "$tfile" "$r"
    eargs+=(--traffic "$tfile")
  fi
  eargs+=("${ebb_extra[@]+"${ebb_extra[@]}"}" --out "$edir" --quiet)
  read -r rc e_s < <(timed "$out/ebb/load_$tag.log" "$PWD" nice -n 5 "$ebb" replay "${eargs[@]}")
  if [[ $rc != 0 ]]; then
    cat "$out/ebb/load_$tag.log" >&2
    fail "ebb replay failed at load $tag (exit status $rc; see $out/ebb/load_$tag.log; --booksim-only runs BookSim alone)"
  fi
  read -r e_lat e_acc e_off < <(parse_ebb "$edir") || fail "cannot read ebb's results from $edir"
  fi

  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
    "$r" "$b_lat" "$b_pkt" "$saturated" "$b_s" "$e_lat" "$e_acc" "$e_off" "$e_s" "$b_cyc" "$b_cyc_s" \
    "$b_lat_all" >>"$results"
  python3 - "$tag" "$b_lat" "$b_pkt" "$b_s" "$e_lat" "$e_acc" "$e_s" "$saturated" <<'PY' >&2
import sys
tag, bl, bp, bs, el, ea, es, sat = sys.argv[1:]
f = lambda x, p: "n/a" if x == "NA" else ("%." + str(p) + "f") % float(x)
ba = "NA" if bp == "NA" else str(float(bp) * 16)
line = "compare_booksim: load %s: booksim latency %s accepted %s (%ss%s)" % (
    tag, f(bl, 1), f(ba, 3), bs, ", saturated" if sat == "yes" else "")
if el != "NA" or es != "NA":
    line += " | ebb latency %s accepted %s (%ss)" % (f(el, 1), f(ea, 3), es)
print(line)
PY
done

# ---- tables -------------------------------------------------------------------------
python3 - "$results" "$out" "$k" "$n" "$buf" "$pattern" "$cycles" "${config:-built-in default}" "$booksim_only" "$warmup" <<'PY'
import sys
src, out, k, n, buf, pattern, cycles, config, booksim_only, warmup = sys.argv[1:]
hosts = int(k) ** int(n)
from pattern_dest import destination
def dest(s):
    return destination(s, pattern, hosts)
fixed = sum(1 for s in range(hosts) if dest(s) == s)
# BookSim's accepted load as ebb's traffic has it. Uniform: the same traffic,
# self-addressed packets included (workload.uniform.include_self). A
# permutation's fixed point only ever sends to itself, through a port nothing
# else uses, so BookSim accepts all it offers, also past saturation: ebb's
# traffic file leaves it out, so the rest is BookSim's total less that.
def distinct(accepted, load):
    if accepted is None:
        return None
    if pattern == "uniform":
        return accepted
    return max(0.0, accepted - load * fixed / hosts)
def num(x):
    return None if x == "NA" else float(x)
def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b
def fmt(x, p=4):
    return "NA" if x is None else ("%." + str(p) + "f") % x
rows = []
for line in open(src):
    load, bl, bp, sat, bs, el, ea, eo, es, bc, bcs, bla = line.rstrip("\n").split("\t")
    bl, bp, bs, el, ea, es, bcs, bla = map(num, (bl, bp, bs, el, ea, es, bcs, bla))
    ba = None if bp is None else bp * 16
    # CPU time per simulated cycle, BookSim's over ebb's.
    per_cycle = (None if bc == "NA" or bcs is None or es is None or es == 0
                 else (bcs / float(bc)) / (es / float(cycles)))
    rows.append(dict(load=float(load), bl=bl, el=el, lr=ratio(el, bl), ba=ba, ea=ea,
                     ar=ratio(ea, distinct(ba, float(load))), bs=bs, es=es,
                     sp=ratio(bs, es), pc=per_cycle, sat=sat, bc=bc, bla=bla))
with open(out + "/compare.csv", "w") as f:
    f.write("load,booksim_latency,ebb_latency,latency_ratio,booksim_accepted,ebb_accepted,"
            "accepted_ratio,booksim_s,ebb_s,speedup,booksim_saturated,booksim_cycles,"
            "speedup_per_cycle,booksim_latency_all_packets\n")
    for r in rows:
        f.write(",".join([("%g" % r["load"]), fmt(r["bl"]), fmt(r["el"]), fmt(r["lr"]), fmt(r["ba"]),
                          fmt(r["ea"]), fmt(r["ar"]), fmt(r["bs"], 3), fmt(r["es"], 3), fmt(r["sp"], 2),
                          r["sat"], r["bc"], fmt(r["pc"], 1), fmt(r["bla"])]) + "\n")
with open(out + "/compare.md", "w") as f:
    f.write("# BookSim2 vs ebb: %s-ary %s-tree, %s traffic, VC buffer %s flits\n\n" % (k, n, pattern, buf))
    ebb = ("ebb: not run (--booksim-only)" if booksim_only == "1" else
           "ebb: all links on, %s cycles (latency over the messages created from cycle %s on), "
           "config %s" % (cycles, warmup, config))
    f.write("BookSim2: router iq, fattree/nca, 3 VCs, 16-flit packets, stock defaults otherwise. "
            "%s. Latency in cycles (ebb/BookSim ratio), "
            "accepted load in flits/cycle/node, CPU time in seconds (speedup = BookSim/ebb, per point: "
            "BookSim simulates its own warm-up, samples and drain, 'BookSim cycles', ebb the given cycles; "
            "per cycle = BookSim's CPU time per simulated cycle over ebb's).\n\n"
            % ebb)
    if pattern == "uniform":
        f.write("BookSim's uniform pattern sends 1 packet in %d to the source itself, through its "
                "leaf switch and back; so does ebb's (workload.uniform.include_self = true): the "
                "same traffic, compared as it is.\n\n" % hosts)
    elif fixed:
        f.write("%s maps %d of the %d hosts onto themselves: BookSim sends their packets to the source "
                "itself (they never leave the leaf switch), ebb leaves them out. Like for like, "
                "BookSim's latency is its mean over the packets between distinct hosts (a rerun with "
                "pair_stats = 1, same seed, not timed; the mean over all packets is "
                "booksim_latency_all_packets in compare.csv), and ebb's accepted load is compared "
                "with BookSim's less what the fixed points send themselves (the load times %d/%d; "
                "below saturation that is %.4g of BookSim's accepted load).\n\n"
                % (pattern, fixed, hosts, fixed, hosts, (hosts - fixed) / hosts))
    f.write("| load | BookSim latency | ebb latency | ratio | BookSim accepted | ebb accepted | ratio "
            "| BookSim s | ebb s | speedup | BookSim cycles | per cycle |\n")
    f.write("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    for r in rows:
        bl = "unstable" if r["sat"] == "yes" else fmt(r["bl"], 1)
        f.write("| %g | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
            r["load"], bl, fmt(r["el"], 1), fmt(r["lr"], 3), fmt(r["ba"], 3), fmt(r["ea"], 3),
            fmt(r["ar"], 3), fmt(r["bs"], 1), fmt(r["es"], 2), fmt(r["sp"], 1), r["bc"],
            fmt(r["pc"], 1)))
    if any(r["sat"] == "yes" for r in rows):
        f.write("\n\"unstable\": BookSim printed \"Simulation unstable\" (past saturation); its accepted "
                "load there is from a rerun with sim_type = throughput, and its time includes the rerun.\n")
PY
rm -f "$results"

# ---- plot -------------------------------------------------------------------------------
if command -v gnuplot >/dev/null; then
  gp=$out/compare.gp
  title="$k-ary $n-tree, $pattern, VC buffer $buf flits"
  rm -f "$out/compare.png" "$out/compare.svg"
  ebb_lat=", '' using 1:3 skip 1 with linespoints title 'ebb'"
  ebb_acc=", '' using 1:6 skip 1 with linespoints title 'ebb'"
  if ((booksim_only)); then
    ebb_lat=""
    ebb_acc=""
  fi
  cat >"$gp" <<EOF
set datafile separator ","
set datafile missing "NA"
set key top left
set grid
set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05
set pointsize 1.2
set xlabel "offered load (flits/cycle/node)"
plot_all = "set multiplot layout 1,2 title '$title'; \
set ylabel 'mean packet latency (cycles)'; \
plot '$out/compare.csv' using 1:2 skip 1 with linespoints title 'BookSim2'$ebb_lat; \
set ylabel 'accepted load (flits/cycle/node)'; \
plot '$out/compare.csv' using 1:5 skip 1 with linespoints title 'BookSim2'$ebb_acc, \
     x with lines dt 2 title 'offered'; \
unset multiplot"
set terminal pngcairo size 1200,500
set output '$out/compare.png'
eval plot_all
set terminal svg size 1200,500
set output '$out/compare.svg'
eval plot_all
EOF
  if ! gnuplot "$gp" 2>"$out/compare.gp.log"; then
    log "warning: gnuplot failed (see $out/compare.gp.log); the tables are written"
  fi
else
  log "warning: gnuplot not found; no plot (the tables are written)"
fi
log "wrote $out/compare.csv, $out/compare.md$([[ -f $out/compare.png ]] && echo ", $out/compare.png, $out/compare.svg")"
