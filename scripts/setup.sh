#!/usr/bin/env bash
# Installs every build, test and run dependency of ebb from Debian 12 packages.
# Idempotent: re-running it only installs what is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  clang-format
  clang libclang-rt-14-dev
  libprotobuf-dev protobuf-compiler
  libboost-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev libcli11-dev
  rdma-core libibverbs-dev libibumad-dev libibmad-dev libibnetdisc-dev
  opensm libopensm-dev ibsim-utils libumad2sim0 infiniband-diags
  gnuplot-nox
  dpkg-dev systemd groff-base lintian
  libotf2-trace-dev otf2-tools
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
