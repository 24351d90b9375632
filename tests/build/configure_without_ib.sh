#!/usr/bin/env bash
# -DEBB_WITH_IB=OFF configures a build with no InfiniBand part: the emulator,
# replay, tune and their tests are there; nothing links libibumad, libibmad,
# libibverbs or needs OpenSM's headers. (A full build of that configuration
# is recorded in docs/building.md.) Usage: configure_without_ib.sh SRC SCRATCH
set -euo pipefail
src=$1
dir=$2
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
cmake -S "$src" -B "$dir" -G Ninja -DEBB_WITH_IB=OFF -DEBB_BUILD_TESTS=ON -DEBB_BUILD_BENCH=ON \
  >"$dir.log" 2>&1 || { cat "$dir.log"; echo "FAIL: configure with EBB_WITH_IB=OFF"; exit 1; }
ninja_file="$dir/build.ninja"
fail=0
for absent in ibumad ibmad ibverbs opensm ebb_osm_events ebb_ib_backend ebb_daemon \
  ib_backend_test daemon_test conformance_test agent_daemon_test; do
  if grep -q -- "$absent" "$ninja_file"; then
    echo "FAIL: '$absent' is part of a build configured with EBB_WITH_IB=OFF"
    grep -n -m3 -- "$absent" "$ninja_file"
    fail=1
  fi
done
for present in ebb_sim_backend ebb_replay ebb_tune ebb_workload sim_backend_test replay_test \
  tune_test tools_test agent_unavailable.cpp; do
  if ! grep -q -- "$present" "$ninja_file"; then
    echo "FAIL: '$present' is missing from a build configured with EBB_WITH_IB=OFF"
    fail=1
  fi
done
rm -rf "$dir" "$dir.log"
[ "$fail" = 0 ] && echo "configure_without_ib: no InfiniBand part, emulator/replay/tune present"
exit "$fail"
