#!/usr/bin/env bash
# Checks the unpacked Debian package (build_package.sh) against Debian policy
# and runs what it installs. Usage: package_contents_test.sh SCRATCH VERSION MULTIARCH
set -uo pipefail
scratch=$1
version=$2
multiarch=$3
root=$scratch/root
control=$scratch/control
deb=$scratch/out/ebb.deb
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
ok() { echo "ok: $*"; }

# --- control fields
field() { dpkg-deb --field "$deb" "$1"; }
[ "$(field Package)" = ebb ] || fail "Package is '$(field Package)', not ebb"
[ "$(field Version)" = "$version-1" ] || fail "Version is '$(field Version)', not $version-1"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] ||
  fail "Architecture is '$(field Architecture)'"
for f in Maintainer Description Section Priority Installed-Size Depends; do
  [ -n "$(field "$f")" ] || fail "control field $f is missing"
done
# Description: a summary line, then a long description of several lines.
desc=$(field Description)
[ "$(echo "$desc" | head -1)" = "power-aware link gating for InfiniBand fat trees" ] ||
  fail "Description's summary is '$(echo "$desc" | head -1)'"
[ "$(echo "$desc" | wc -l)" -ge 4 ] || fail "Description has no long description: '$desc'"
if echo "$desc" | grep -q '^ *;'; then fail "Description lines start with ';' (a CMake list)"; fi
[ "$(echo "$desc" | sed -n '2s/^ *//p')" != "$(echo "$desc" | head -1)" ] ||
  fail "Description repeats its summary as the first line of the long description"
depends=$(field Depends)
echo "Depends: $depends"
# Names only: "libc6 (>= 2.34), libfmt9 (>= 9.1.0)" -> "libc6 libfmt9".
dep_names=" $(echo "$depends" | sed -E 's/\([^)]*\)//g; s/[,|]/ /g' | tr -s ' ') "
for d in $dep_names; do
  [[ $d == *-dev ]] && fail "Depends names a -dev package: $d"
done

# --- every library the binaries need comes from a package in Depends
# (NEEDED entries; each resolved by ldd, its package found with dpkg -S).
owner_of() {  # the package that ships library path $1 (usrmerge: /lib and /usr/lib)
  local p=$1 real
  real=$(readlink -f "$p")
  for cand in "$p" "$real" "/usr$p" "/usr$real" "${p#/usr}" "${real#/usr}"; do
    dpkg -S "$cand" 2>/dev/null | head -1 | cut -d: -f1 && return 0
  done
  return 1
}
for bin in usr/bin/ebb "usr/lib/$multiarch/libebb_osm_events.so"; do
  [ -f "$root/$bin" ] || { fail "$bin is not in the package"; continue; }
  lddout=$(ldd "$root/$bin" 2>&1)
  if echo "$lddout" | grep -q "not found"; then
    fail "$bin: ldd finds no library for: $(echo "$lddout" | grep 'not found' | tr -s ' \t' ' ')"
  fi
  needed=$(readelf -d "$root/$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  [ -n "$needed" ] || fail "$bin: readelf shows no NEEDED library"
  for lib in $needed; do
    path=$(echo "$lddout" | awk -v l="$lib" '$1 == l && $3 ~ /^\// {print $3}')
    if [ -z "$path" ]; then
      fail "$bin: ldd does not resolve $lib"
      continue
    fi
    pkg=$(owner_of "$path") || { fail "$bin: no package ships $path (dpkg -S)"; continue; }
    if [[ $dep_names == *" $pkg "* ]]; then
      ok "$bin needs $lib from $pkg, which Depends names"
    else
      fail "$bin needs $lib from $pkg, which Depends does not name"
    fi
  done
done

# --- files where Debian policy puts them
expect_file() {  # path mode
  local p=$1 mode=$2
  if [ ! -f "$root$p" ]; then
    fail "$p is not in the package"
  elif [ "$(stat -c %a "$root$p")" != "$mode" ]; then
    fail "$p has mode $(stat -c %a "$root$p"), not $mode"
  else
    ok "$p ($mode)"
  fi
}
expect_file /usr/bin/ebb 755
expect_file "/usr/lib/$multiarch/libebb_osm_events.so" 644
expect_file /lib/systemd/system/ebb-agent.service 644
expect_file /etc/ebb/agent.textproto 644
expect_file /etc/logrotate.d/ebb-agent 644
expect_file /usr/share/doc/ebb/copyright 644
expect_file /usr/share/doc/ebb/changelog.Debian.gz 644
expect_file /usr/share/doc/ebb/operations.md 644
expect_file /usr/share/doc/ebb/examples/agent_ibsim_4x3.textproto 644
expect_file /usr/share/ebb/grafana/ebb-agent.json 644
expect_file /usr/share/ebb/proto/agent.proto 644
expect_file /usr/share/man/man1/ebb.1.gz 644
for cmd in $("$root/usr/bin/ebb" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && /^  [a-z]/ {print $1}'); do
  expect_file "/usr/share/man/man1/ebb-$cmd.1.gz" 644
done
# Nothing outside the folders a package may use, nothing in /usr/local.
while IFS= read -r f; do
  case $f in
    ./usr/bin/* | ./usr/lib/"$multiarch"/* | ./usr/share/doc/ebb/* | ./usr/share/man/man1/* | \
      ./usr/share/ebb/* | ./usr/share/lintian/overrides/ebb | ./etc/ebb/* | ./etc/logrotate.d/* | \
      ./lib/systemd/system/*) ;;
    *) fail "unexpected file in the package: $f" ;;
  esac
done < <(cd "$root" && find . -type f)
# Every entry owned by root (dpkg-deb --contents: mode owner/group ...).
if dpkg-deb --contents "$deb" | awk '$2 != "root/root"' | grep -q .; then
  fail "entries not owned by root/root: $(dpkg-deb --contents "$deb" | awk '$2 != "root/root"')"
fi
# Binaries stripped (Debian policy 10.1): no symbol table, no debug sections.
for bin in usr/bin/ebb "usr/lib/$multiarch/libebb_osm_events.so"; do
  if readelf -S "$root/$bin" | grep -qE '\.symtab|\.debug_'; then
    fail "$bin is not stripped"
  fi
done
# Compressed with gzip -9n: valid, and no file name or time stamp in the header.
for gz in "$root"/usr/share/man/man1/*.gz "$root/usr/share/doc/ebb/changelog.Debian.gz"; do
  gzip -t "$gz" || fail "$gz is not valid gzip"
  # Header bytes 4-7: MTIME, 0 with -n; byte 3 (FLG) bit 3: FNAME, unset with -n.
  hdr=$(od -An -tx1 -N8 "$gz" | tr -d ' \n')
  [ "${hdr:8:8}" = 00000000 ] || fail "$gz has a time stamp (not gzip -n)"
  [ $((0x${hdr:6:2} & 8)) = 0 ] || fail "$gz has a file name (not gzip -n)"
done
# The changelog's version is the package's.
top=$(gzip -dc "$root/usr/share/doc/ebb/changelog.Debian.gz" | head -1)
[[ $top == "ebb ($version-1) "* ]] || fail "changelog.Debian starts '$top', not ebb ($version-1)"

# --- conffiles and maintainer scripts
if [ "$(sort "$control/conffiles" 2>/dev/null)" = "$(printf '/etc/ebb/agent.textproto\n/etc/logrotate.d/ebb-agent')" ]; then
  ok "conffiles: /etc/ebb/agent.textproto, /etc/logrotate.d/ebb-agent"
else
  fail "conffiles is '$(cat "$control/conffiles" 2>/dev/null)'"
fi
for s in postinst prerm postrm; do
  [ -x "$control/$s" ] || fail "maintainer script $s missing or not executable"
  sh -n "$control/$s" || fail "maintainer script $s: syntax error"
done
grep -q 'deb-systemd-invoke stop ebb-agent.service' "$control/prerm" ||
  fail "prerm does not stop the agent on removal (its links would stay disabled)"

[ "$(cat "$control/triggers" 2>/dev/null)" = "activate-noawait ldconfig" ] ||
  fail "no ldconfig trigger (the plugin is in the library path)"

# --- lintian, Debian's policy checker: no error and no warning (the overrides
# the package ships say why each one left is not one here).
if ! command -v lintian >/dev/null; then
  fail "lintian is not installed (scripts/setup.sh installs it)"
else
  lint=$(lintian --fail-on error,warning --pedantic "$deb" 2>&1)
  rc=$?
  lint=$(echo "$lint" | grep -v '^running with root privileges')
  if [ $rc = 0 ] && ! echo "$lint" | grep -qE '^[EW]: '; then
    ok "lintian: no error, no warning"
  else
    fail "lintian (exit $rc): $(echo "$lint" | grep -E '^[EW]: ')"
  fi
fi

# --- the unpacked ebb runs
ebb=$root/usr/bin/ebb
v=$("$ebb" --version) || fail "ebb --version exits $?"
echo "$v" | sed 's/^/  | /'
[ "$(echo "$v" | head -1)" = "ebb $version" ] || fail "ebb --version's first line is not 'ebb $version'"
echo "$v" | grep -qE '^git revision: [0-9a-zA-Z.+-]+$' || fail "ebb --version has no git revision"
echo "$v" | grep -qE '^build type: [A-Za-z]+' || fail "ebb --version has no build type"
echo "$v" | grep -q '^InfiniBand support: yes' || fail "ebb --version does not say InfiniBand: yes"
h=$("$ebb" agent --help) || fail "ebb agent --help exits $?"
for o in --config --dry-run --check-config --metrics; do
  echo "$h" | grep -q -- "$o" || fail "ebb agent --help does not list $o"
done

# --- /etc/ebb/agent.textproto loads, read-only: checked as ebb agent does
# before it opens the port, on a 4-ary 3-tree standing in for fabric.txt.
"$ebb" topo --k 4 --n 3 --export ibsim >"$scratch/fabric.net" || fail "ebb topo --export ibsim"
cc=$("$ebb" agent --check-config --config "$root/etc/ebb/agent.textproto" \
  fabric.topology_file.path="$scratch/fabric.net" 2>&1)
rc=$?
echo "$cc" | sed 's/^/  | /'
[ $rc = 0 ] || fail "ebb agent --check-config on /etc/ebb/agent.textproto exits $rc"
echo "$cc" | grep -q 'config OK' || fail "--check-config does not say config OK"
echo "$cc" | grep -qE '^  allow-listed: +0 switches' || fail "/etc/ebb/agent.textproto allow-lists switches"
echo "$cc" | grep -qE '^  mode: +read-only' || fail "/etc/ebb/agent.textproto is not read-only"
# Without the fabric file, the error names it.
cc=$("$ebb" agent --check-config --config "$root/etc/ebb/agent.textproto" 2>&1)
rc=$?
[ $rc = 1 ] || fail "--check-config with no fabric.txt exits $rc, not 1"
echo "$cc" | grep -q 'fabric.txt' || fail "--check-config with no fabric.txt does not name it: $cc"

if [ $fails -gt 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "package contents: all checks passed"
