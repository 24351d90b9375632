#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang++, ASan + UBSan; docs/fuzzing.md)
# in build-fuzz and runs each for SECONDS (default 20), starting from its
# committed seed corpus fuzz/corpus/<target>. Fails on any finding: a crash, a
# sanitizer report, an uncaught exception, a leak, a timeout or running out
# of memory; the input is saved in build-fuzz/fuzz-findings/.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (targets: the folders of fuzz/corpus)
#   EBB_JOBS: targets run at once (default nproc); EBB_FUZZ_SEED: libFuzzer -seed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
shift || true
dir=build-fuzz
jobs=${EBB_JOBS:-$(nproc)}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for c in fuzz/corpus/*/; do targets+=("$(basename "$c")"); done
fi

cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DEBB_FUZZ=ON -DEBB_WERROR=ON -DEBB_BUILD_TESTS=OFF -DEBB_BUILD_BENCH=OFF \
  -DCMAKE_UNITY_BUILD=ON >/dev/null  # unity: see scripts/test.sh
cmake --build "$dir" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"

findings="$dir/fuzz-findings"
logs="$dir/fuzz-logs"
rm -rf "$findings" "$logs"
mkdir -p "$findings" "$logs"
seed=()
[ -n "${EBB_FUZZ_SEED:-}" ] && seed=(-seed="$EBB_FUZZ_SEED")

run() {  # run TARGET: fuzzes one target, its new inputs kept in $dir/fuzz-work/TARGET
  local t=$1 work="$dir/fuzz-work/$1"
  [ -d "fuzz/corpus/$t" ] || { echo "fuzz: no seed corpus fuzz/corpus/$t" >&2; return 1; }
  mkdir -p "$work"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$dir/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$findings/$t-" "${seed[@]}" \
      "$work" "fuzz/corpus/$t" >"$logs/$t.log" 2>&1
}

echo "fuzz: ${#targets[@]} targets, ${seconds} s each, ${jobs} at a time"
declare -A pids
failed=()
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run "$t" &
  pids[$t]=$!
done
for t in "${targets[@]}"; do
  if wait "${pids[$t]}"; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$t.log")
    echo "fuzz: $t: no finding (${execs:-?} inputs)"
  else
    failed+=("$t")
    echo "fuzz: $t: FINDING (log $logs/$t.log)" >&2
    grep -E -A30 "ERROR|runtime error|broken promise|SUMMARY" "$logs/$t.log" | head -60 >&2 || true
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]}; inputs in $findings:" >&2
  ls "$findings" >&2
  echo "reproduce: $dir/fuzz/fuzz_<target> <input>" >&2
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets clean"
