#!/usr/bin/env bash
# Installs dependencies, builds ebb and runs its main job on the built-in
# default: the emulated 4-ary 4-tree replaying the alonso-ramp workload with
# the per-switch agents on (dynamic thresholds), then with all links on for
# comparison. Prints the report and writes out/report.json, out/timeseries.csv,
# out/decisions.jsonl and out/plots/*.png|svg.
# Extra arguments go to `ebb replay` (e.g. a config file, or key=value overrides
# after one: scripts/run.sh configs/alonso_ramp_static_0.03_0.15.textproto).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build -DEBB_BUILD_TESTS=OFF -DEBB_BUILD_BENCH=OFF
./build/tools/ebb replay --out out "$@"
