#!/usr/bin/env bash
# Tests scripts/check_layering.sh on small planted trees: a clean tree passes;
# an upward include, a sibling include and an include of a non-layer folder
# each fail with the file, the line and the rule named.
set -euo pipefail
checker="$(cd "$(dirname "$0")/../.." && pwd)/scripts/check_layering.sh"
rules="$(dirname "$checker")/layers.txt"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0

# plant NAME: a tree with the real rules and a few clean files.
plant() {
  local t="$scratch/$1"
  mkdir -p "$t/scripts" "$t/common" "$t/fabric" "$t/agent" "$t/sim_backend" "$t/ib_backend" \
    "$t/tests" "$t/configs/proto"
  cp "$rules" "$t/scripts/layers.txt"
  printf '#pragma once\n' >"$t/common/status.h"
  printf '#include "common/status.h"\n#include <fmt/format.h>\n' >"$t/fabric/topology.h"
  printf '#include "fabric/topology.h"\n#include "configs/proto/neighbor.pb.h"\n' >"$t/agent/backend.h"
  printf '#include "agent/backend.h"\n' >"$t/sim_backend/sim_backend.h"
  echo "$t"
}

expect() {  # expect NAME EXIT PATTERN: the checker on tree NAME exits EXIT, stderr matches
  local name=$1 code=$2 pattern=$3 out rc=0
  out=$(bash "$checker" "$scratch/$name" 2>&1) || rc=$?
  if [ "$rc" != "$code" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name: exit $rc (want $code), output:"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

plant clean >/dev/null
expect clean 0 "files follow the layer order"

t=$(plant upward)
printf '#include "common/status.h"\n\n#include "agent/backend.h"\n' >"$t/fabric/links.cpp"
expect upward 1 'fabric/links.cpp:3: includes "agent/backend.h": fabric/ may not include agent/'

t=$(plant sibling)
printf '#include "sim_backend/sim_backend.h"\n' >"$t/ib_backend/ib.cpp"
expect sibling 1 'ib_backend/ib.cpp:1: .*ib_backend/ may not include sim_backend/'

t=$(plant nonlayer)
printf '#pragma once\n' >"$t/tests/fake.h"
printf '  #  include "tests/fake.h"\n' >"$t/agent/x.cpp"
expect nonlayer 1 'agent/x.cpp:1: includes "tests/fake.h": tests/ is not a layer'

t=$(plant two)
printf '#include "agent/backend.h"\n' >"$t/common/a.h"
printf '#include "sim_backend/sim_backend.h"\n' >"$t/agent/b.h"
expect two 1 'check_layering: 2 include\(s\) against the layer order'

[ "$failures" -eq 0 ] || { echo "$failures case(s) failed"; exit 1; }
echo "check_layering_test: all cases passed"
