#!/usr/bin/env bash
# Installs dependencies, builds ebb and runs its main job on the built-in default.
# Extra arguments are passed to the ebb command that runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build -DEBB_BUILD_TESTS=OFF -DEBB_BUILD_BENCH=OFF
# Until the emulator replay lands, the main job summarizes the default fabric
# (the 4-ary 4-tree of the paper) and writes its ibsim and dot exports.
mkdir -p out
./build/tools/ebb topo --config configs/kary4x4.textproto "$@"
./build/tools/ebb topo --config configs/kary4x4.textproto --export dot > out/kary4x4.dot
./build/tools/ebb topo --config configs/kary4x4.textproto --export ibsim > out/kary4x4.net
echo "wrote out/kary4x4.dot and out/kary4x4.net"
