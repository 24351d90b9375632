#!/usr/bin/env bash
# Installs dependencies, builds ebb, and runs the whole test suite:
#   1. clang-format check of every C++ file, and the layer order of every #include;
#   2. Release-ish build + all tests (unit, ibsim/OpenSM integration, and the Debian
#      package built, unpacked and checked: tests/packaging, docs/operations.md);
#   3. ASan+UBSan build + all tests;
#   4. libFuzzer: every text reader fuzzed briefly (scripts/fuzz.sh, docs/fuzzing.md).
# Usage: scripts/test.sh [--no-sanitize] [--no-fuzz]   (EBB_JOBS sets build parallelism;
#   EBB_FUZZ_SECONDS the fuzzing time per reader, default 15)
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=1
fuzz=1
for arg in "$@"; do
  case $arg in
    --no-sanitize) sanitize=0 ;;
    --no-fuzz) fuzz=0 ;;
    *) echo "usage: scripts/test.sh [--no-sanitize] [--no-fuzz]" >&2; exit 2 ;;
  esac
done

bash scripts/setup.sh

echo "== clang-format check"
bash scripts/format.sh --check

echo "== layering check (scripts/layers.txt)"
bash scripts/check_layering.sh

jobs=${EBB_JOBS:-$(nproc)}
export CTEST_OUTPUT_ON_FAILURE=1

# Unity builds (several .cpp files per compiler run) parse the heavy headers
# (GoogleTest, CLI11, Boost.Asio, protobuf) once per batch instead of once per
# file: the RelWithDebInfo build compiles in about 40 % less time (docs/performance.md).
unity=-DCMAKE_UNITY_BUILD=ON

echo "== build (RelWithDebInfo) and test"
# Explicit: scripts/run.sh configures the same folder without tests.
bash scripts/build.sh build -DEBB_BUILD_TESTS=ON -DEBB_BUILD_BENCH=ON "$unity"
ctest --test-dir build -j "$jobs" --timeout 300

if [ "$sanitize" = 1 ]; then
  echo "== build (ASan + UBSan, -O1) and test"
  EBB_SANITIZE=1 bash scripts/build.sh build-asan -DEBB_BUILD_BENCH=OFF "$unity"
  LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp" \
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -j "$jobs" --timeout 600
fi
if [ "$fuzz" = 1 ]; then
  echo "== fuzz (libFuzzer + ASan + UBSan, clang++)"
  bash scripts/fuzz.sh "${EBB_FUZZ_SECONDS:-15}"
else
  echo "== fuzz: not run (--no-fuzz)"
fi
echo "== all tests passed"
