#!/usr/bin/env bash
# Builds the Debian package of the build folder BUILD (CPack, DEB generator)
# into SCRATCH/out and unpacks it: files into SCRATCH/root (dpkg -x), control
# files into SCRATCH/control (dpkg-deb -e). The package.* tests check them.
# Usage: build_package.sh BUILD SCRATCH
set -euo pipefail
build=$1
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch/out"
if ! cpack -G DEB --config "$build/CPackConfig.cmake" -B "$scratch/out" >"$scratch/cpack.log" 2>&1; then
  cat "$scratch/cpack.log"
  echo "FAIL: cpack -G DEB"
  exit 1
fi
if grep -i "warning" "$scratch/cpack.log"; then
  echo "FAIL: cpack warned (warnings are errors)"
  exit 1
fi
debs=("$scratch"/out/*.deb)
if [ ${#debs[@]} -ne 1 ] || [ ! -f "${debs[0]}" ]; then
  echo "FAIL: expected one .deb in $scratch/out, found: ${debs[*]}"
  exit 1
fi
ln -s "$(basename "${debs[0]}")" "$scratch/out/ebb.deb"
dpkg -x "${debs[0]}" "$scratch/root"
dpkg-deb -e "${debs[0]}" "$scratch/control"
echo "built and unpacked ${debs[0]}"
