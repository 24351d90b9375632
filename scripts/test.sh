#!/usr/bin/env bash
# Installs dependencies, builds ebb, and runs the whole test suite:
#   1. clang-format check of every C++ file;
#   2. Release-ish build + all tests (unit and ibsim/OpenSM integration);
#   3. ASan+UBSan build + all tests.
# Usage: scripts/test.sh [--no-sanitize]   (EBB_JOBS sets build parallelism)
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=1
[ "${1:-}" = "--no-sanitize" ] && sanitize=0

bash scripts/setup.sh

echo "== clang-format check"
bash scripts/format.sh --check

jobs=${EBB_JOBS:-$(nproc)}
export CTEST_OUTPUT_ON_FAILURE=1

echo "== build (RelWithDebInfo) and test"
# Explicit: scripts/run.sh configures the same folder without tests.
bash scripts/build.sh build -DEBB_BUILD_TESTS=ON -DEBB_BUILD_BENCH=ON
ctest --test-dir build -j "$jobs" --timeout 300

if [ "$sanitize" = 1 ]; then
  echo "== build (ASan + UBSan) and test"
  EBB_SANITIZE=1 bash scripts/build.sh build-asan -DEBB_BUILD_BENCH=OFF
  LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp" \
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -j "$jobs" --timeout 600
fi
echo "== all tests passed"
