#!/usr/bin/env bash
# Configures and builds ebb. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# EBB_SANITIZE=1 builds with ASan+UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
args=(-G Ninja -DCMAKE_BUILD_TYPE=${EBB_BUILD_TYPE:-RelWithDebInfo} -DEBB_WERROR=ON)
if [ "${EBB_SANITIZE:-0}" = 1 ]; then args+=(-DEBB_SANITIZE=ON); fi
cmake -S . -B "$dir" "${args[@]}" "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
