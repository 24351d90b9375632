#!/usr/bin/env bash
# Checks ebb-agent.service as the package installs it (build_package.sh):
#   1. a lint of the keys the unit must have (always; a planted unit with a key
#      missing must fail it, so the lint itself is tested);
#   2. the stop timeout covers the SIGTERM restore of /etc/ebb/agent.textproto;
#   3. systemd-analyze verify on the unpacked root, and the unit's exposure
#      (systemd-analyze security --offline) at most 2.5 ("OK"). When
#      systemd-analyze is missing this says so and fails: scripts/setup.sh
#      installs systemd.
# Usage: systemd_unit_test.sh SCRATCH
set -uo pipefail
scratch=$1
root=$scratch/root
unit=$root/lib/systemd/system/ebb-agent.service
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
[ -f "$unit" ] || { echo "FAIL: $unit is not in the package"; exit 1; }

# The value of KEY in SECTION of a unit file (the last one wins, as in systemd).
value() {  # file section key
  awk -v s="[$2]" -v k="$3" '
    /^\[/ { in_s = ($0 == s) }
    in_s && index($0, k "=") == 1 { v = substr($0, length(k) + 2); found = 1 }
    END { if (found) print v; else exit 1 }' "$1"
}

# 1. Required keys, with the values that matter.
lint() {  # file; prints one line per problem
  local f=$1
  local -a want=(
    "Unit After opensm.service" "Unit Wants opensm.service"
    "Unit StartLimitIntervalSec ." "Unit StartLimitBurst ."
    "Service ExecStart /usr/bin/ebb agent --config /etc/ebb/agent.textproto"
    "Service Restart on-failure" "Service TimeoutStopSec ." "Service KillSignal SIGTERM"
    "Service ProtectSystem strict" "Service ProtectHome yes" "Service NoNewPrivileges yes"
    "Service PrivateTmp yes" "Service DevicePolicy closed" "Service CapabilityBoundingSet ^$"
    "Service RuntimeDirectory ebb" "Service LogsDirectory ebb" "Service StateDirectory ebb"
    "Service StandardOutput journal" "Service StandardError journal"
    "Install WantedBy multi-user.target")
  local w section key pattern v
  for w in "${want[@]}"; do
    read -r section key pattern <<<"$w"
    if ! v=$(value "$f" "$section" "$key"); then
      echo "[$section] $key= is missing"
    elif ! grep -qE -- "$pattern" <<<"$v"; then
      echo "[$section] $key=$v does not match '$pattern'"
    fi
  done
  # DeviceAllow may be given more than once: the umad class must be among them.
  grep -qx 'DeviceAllow=char-infiniband_mad rw' "$f" || echo "no DeviceAllow for umad"
}
problems=$(lint "$unit")
if [ -n "$problems" ]; then
  fail "lint of ebb-agent.service: $problems"
else
  echo "ok: lint of ebb-agent.service (required keys present)"
fi
planted=$scratch/planted.service
grep -v '^TimeoutStopSec=' "$unit" | grep -v '^ProtectSystem=' >"$planted"
problems=$(lint "$planted")
if grep -q 'TimeoutStopSec' <<<"$problems" && grep -q 'ProtectSystem' <<<"$problems"; then
  echo "ok: the lint fails a unit without TimeoutStopSec and ProtectSystem"
else
  fail "the lint passed a unit without TimeoutStopSec and ProtectSystem: '$problems'"
fi

# 2. TimeoutStopSec (seconds) covers the restore on SIGTERM: restore_timeout_ms
# of the shipped config plus 30 s for the MADs in flight and the exit.
stop=$(value "$unit" Service TimeoutStopSec)
restore_ms=$(sed -n 's/^ *restore_timeout_ms: *\([0-9]*\).*/\1/p' "$root/etc/ebb/agent.textproto")
[ -n "$restore_ms" ] || restore_ms=30000  # ebb's default (docs/ib_agent.md)
if [[ $stop =~ ^[0-9]+$ ]] && [ "$stop" -ge $((restore_ms / 1000 + 30)) ]; then
  echo "ok: TimeoutStopSec=$stop s >= restore_timeout_ms $restore_ms ms + 30 s"
else
  fail "TimeoutStopSec=$stop does not cover restore_timeout_ms $restore_ms ms + 30 s"
fi

# 3. systemd's own checks.
if ! command -v systemd-analyze >/dev/null; then
  fail "systemd-analyze is not installed (scripts/setup.sh installs systemd); only the lint ran"
else
  # verify --root: ExecStart's /usr/bin/ebb is looked up in the unpacked
  # package, the man page of Documentation= through MANPATH; the root gets
  # a copy of this host's systemd units (sysinit.target, ...) beside ours.
  vroot=$scratch/verify_root
  rm -rf "$vroot"
  cp -a "$root" "$vroot"
  cp -an /lib/systemd/system/. "$vroot/lib/systemd/system/"
  if out=$(MANPATH="$vroot/usr/share/man" systemd-analyze verify --root="$vroot" \
    /lib/systemd/system/ebb-agent.service 2>&1) && [ -z "$out" ]; then
    echo "ok: systemd-analyze verify"
  else
    fail "systemd-analyze verify: $out"
  fi
  # It does fail: without the binary it names it.
  rm "$vroot/usr/bin/ebb"
  if out=$(MANPATH="$vroot/usr/share/man" systemd-analyze verify --root="$vroot" \
    /lib/systemd/system/ebb-agent.service 2>&1) || [ -n "$out" ]; then
    echo "ok: systemd-analyze verify fails a root without /usr/bin/ebb"
  else
    fail "systemd-analyze verify passed a root without /usr/bin/ebb"
  fi
  rm -rf "$vroot"
  sec=$(systemd-analyze security --offline=yes --root="$root" \
    /lib/systemd/system/ebb-agent.service 2>&1)
  level=$(sed -n 's/.*Overall exposure level for ebb-agent.service: \([0-9.]*\).*/\1/p' <<<"$sec")
  if [ -z "$level" ]; then
    fail "systemd-analyze security printed no exposure level: $sec"
  elif awk -v l="$level" 'BEGIN { exit !(l <= 2.5) }'; then
    echo "ok: exposure level $level (systemd-analyze security --offline)"
  else
    fail "exposure level $level > 2.5: $(grep '✗' <<<"$sec")"
  fi
fi

if [ $fails -gt 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "systemd unit: all checks passed"
