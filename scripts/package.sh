#!/usr/bin/env bash
# Builds ebb's Debian package (docs/operations.md): configures and builds
# BUILD_DIR like scripts/build.sh (default: build, the folder scripts/run.sh
# and scripts/test.sh use, so nothing is compiled twice), then runs CPack's
# DEB generator there. Prints the package's path and its control fields.
# Usage: scripts/package.sh [BUILD_DIR] [extra cmake args...]
# Warnings are errors: any CMake, CPack or dpkg-shlibdeps warning fails it.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
bash scripts/build.sh "$dir" "$@"
rm -rf "$dir/package"  # CPACK_PACKAGE_DIRECTORY
log="$dir/package.log"
if ! (cd "$dir" && cpack -G DEB --config CPackConfig.cmake) >"$log" 2>&1; then
  cat "$log"
  echo "package: cpack failed" >&2
  exit 1
fi
if grep -n -i "warning" "$log"; then
  echo "package: warnings while packaging (above; $log)" >&2
  exit 1
fi
debs=("$dir"/package/*.deb)
if [ ${#debs[@]} -ne 1 ] || [ ! -f "${debs[0]}" ]; then
  echo "package: expected one .deb in $dir/package, found: ${debs[*]}" >&2
  exit 1
fi
echo "package: ${debs[0]}"
dpkg-deb --field "${debs[0]}" Package Version Architecture Depends Recommends
