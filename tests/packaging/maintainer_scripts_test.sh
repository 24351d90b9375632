#!/usr/bin/env bash
# Runs the package's postinst, prerm and postrm (unpacked by
# build_package.sh) as dpkg would, with systemctl, deb-systemd-invoke and
# deb-systemd-helper replaced by fakes that log their arguments, in a mount
# namespace whose /run and /var/log are empty tmpfs (so "systemd is running"
# can be played and the host's files are never touched), and checks what
# each step asks of systemd: installing never enables or starts the agent,
# an upgrade restarts a running one, removal stops it (its links come back)
# before the binary goes, purge forgets it and removes its logs.
# Needs root (unshare -m); fails, saying so, without it.
# Usage: maintainer_scripts_test.sh SCRATCH
set -uo pipefail
scratch=$1
control=$scratch/control
work=$scratch/maintainer
rm -rf "$work"
mkdir -p "$work/bin"
for tool in systemctl deb-systemd-invoke deb-systemd-helper; do
  printf '#!/bin/sh\necho "%s $*" >>"$FAKE_LOG"\n' "$tool" >"$work/bin/$tool"
  chmod +x "$work/bin/$tool"
done
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}

# run SYSTEMD(yes|no) SCRIPT ARGS...: the calls it made, one per line, and
# "logs: kept|gone" for /var/log/ebb and "state: kept|gone" for the state
# file in /var/lib/ebb (made before the script runs).
run() {
  local systemd=$1 script=$2
  shift 2
  : >"$work/log"
  FAKE_LOG=$work/log PATH="$work/bin:$PATH" unshare -m sh -c '
    mount -t tmpfs tmpfs /run && mount -t tmpfs tmpfs /var/log || exit 99
    mount -t tmpfs tmpfs /var/lib && mkdir -p /var/lib/ebb || exit 99
    [ "$0" = yes ] && mkdir -p /run/systemd/system
    mkdir -p /var/log/ebb
    : >/var/lib/ebb/ebb-agent-any-any.gates
    sh "$@" || echo "exit $?" >>"$FAKE_LOG"
    [ -d /var/log/ebb ] && echo "logs: kept" >>"$FAKE_LOG" || echo "logs: gone" >>"$FAKE_LOG"
    [ -e /var/lib/ebb/ebb-agent-any-any.gates ] && echo "state: kept" >>"$FAKE_LOG" ||
      echo "state: gone" >>"$FAKE_LOG"
  ' "$systemd" "$control/$script" "$@"
  local rc=$?
  [ $rc = 99 ] && echo "cannot make a mount namespace (unshare -m, root needed)"
  cat "$work/log"
}

expect() {  # label output [+line | -line]...
  local label=$1 out=$2 rule
  shift 2
  for rule in "$@"; do
    case $rule in
      +*) grep -qxF -- "${rule#+}" <<<"$out" || fail "$label: expected '${rule#+}'; got: $(echo $out)" ;;
      -*) grep -qF -- "${rule#-}" <<<"$out" && fail "$label: unexpected '${rule#-}'; got: $(echo $out)" ;;
    esac
  done
  [ $fails = 0 ] && echo "ok: $label: $(echo "$out" | paste -sd ';' -)"
}

out=$(run yes postinst configure "")
expect "install" "$out" "+deb-systemd-helper update-state ebb-agent.service" \
  "+systemctl --system daemon-reload" "-try-restart" "-enable" "-start" "-exit" "+logs: kept"
out=$(run yes postinst configure 0.0.9-1)
expect "upgrade (postinst)" "$out" "+deb-systemd-invoke try-restart ebb-agent.service" "-exit"
out=$(run no postinst configure 0.0.9-1)
expect "upgrade without systemd" "$out" "-systemctl" "-deb-systemd-invoke" "-exit"
out=$(run yes prerm upgrade 0.2.0-1)
expect "upgrade (prerm)" "$out" "-stop" "-exit"
out=$(run yes prerm remove)
expect "remove (prerm)" "$out" "+deb-systemd-invoke stop ebb-agent.service" "-exit"
out=$(run yes postrm remove)
expect "remove (postrm)" "$out" "+systemctl --system daemon-reload" "-purge" "+logs: kept" \
  "+state: kept" "-exit"
out=$(run yes postrm purge)
expect "purge" "$out" "+deb-systemd-helper purge ebb-agent.service" \
  "+deb-systemd-helper unmask ebb-agent.service" "+logs: gone" "+state: gone" "-exit"

if [ $fails -gt 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "maintainer scripts: all checks passed"
