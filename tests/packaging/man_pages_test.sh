#!/usr/bin/env bash
# Every page lists exactly the options and positionals that `--help` lists:
# ebb.1 against `ebb --help`, ebb-<command>.1 against `ebb <command> --help`,
# for every command `ebb --help` names; every page renders without a groff
# warning. A page with an option taken out must fail the comparison, so the
# comparison itself is tested.
# Usage: man_pages_test.sh EBB MAN1_DIR   (the unpacked package's)
set -uo pipefail
ebb=$1
man1=$2
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}

# The names in the first column of --help's Options: and Positionals:
# sections, one per line ("-h", "--help", "config").
help_names() {  # help text on stdin
  awk '
    /^[A-Za-z].*:$/ { sec = $0; next }
    /^[^ ]/ { sec = "" }
    (sec == "Options:" || sec == "Positionals:") && /^  [^ ]/ {
      n = split($1, parts, ",")
      for (i = 1; i <= n; i++) print parts[i]
    }' | sort -u
}

# The names a page lists: the first line of each .TP item in OPTIONS and
# ARGUMENTS, roff escapes undone ("\fB\-\-out\fR \fITEXT\fR" -> "--out").
page_names() {  # roff on stdin
  sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\&//g' -e 's/\\e/\\/g' | awk '
    /^\.SH / { sec = $2; next }
    (sec == "OPTIONS" || sec == "ARGUMENTS") && /^\.TP/ { item = 1; next }
    item {
      item = 0
      if (sec == "ARGUMENTS") { print $1; next }
      gsub(/,/, " ")
      for (i = 1; i <= NF; i++) if ($i ~ /^--?[A-Za-z0-9]/) print $i
    }' | sort -u
}

compare() {  # label help-names page-names; prints differences
  local missing extra
  missing=$(comm -23 <(echo "$2") <(echo "$3"))
  extra=$(comm -13 <(echo "$2") <(echo "$3"))
  [ -z "$missing" ] || echo "$1: --help lists, the page does not: $(echo $missing)"
  [ -z "$extra" ] || echo "$1: the page lists, --help does not: $(echo $extra)"
}

commands=$("$ebb" --help | awk '/^Subcommands:/ { s = 1; next } s && /^  [a-z]/ { print $1 }')
[ -n "$commands" ] || { echo "FAIL: ebb --help lists no command"; exit 1; }
checked=0
for cmd in "" $commands; do
  page=$man1/ebb${cmd:+-$cmd}.1.gz
  label="ebb${cmd:+ $cmd}"
  if [ ! -f "$page" ]; then
    fail "$label: no page $page"
    continue
  fi
  # shellcheck disable=SC2086  # $cmd is empty for ebb itself
  hn=$("$ebb" $cmd --help | help_names)
  pn=$(gzip -dc "$page" | page_names)
  [ -n "$hn" ] || fail "$label --help: no option found (has its format changed?)"
  diff=$(compare "$label" "$hn" "$pn")
  if [ -n "$diff" ]; then
    fail "$diff"
  else
    echo "ok: $(basename "$page" .gz) lists the $(echo "$hn" | wc -l) names of '$label --help'"
  fi
  checked=$((checked + 1))
  if ! command -v groff >/dev/null; then
    fail "groff is not installed (scripts/setup.sh installs groff-base): $label not rendered"
  else
    warnings=$(gzip -dc "$page" | groff -man -Tutf8 -ww -z 2>&1)
    [ -z "$warnings" ] || fail "$label: groff warns: $warnings"
  fi
done
[ "$checked" -ge 7 ] || fail "only $checked pages checked (ebb and its six commands expected)"

# The comparison fails a page with an option taken out (ebb-agent.1 without
# --dry-run) and one with an option --help does not have.
hn=$("$ebb" agent --help | help_names)
pn=$(gzip -dc "$man1/ebb-agent.1.gz" | grep -v 'dry\\-run' | page_names)
if compare planted "$hn" "$pn" | grep -q -- '--dry-run'; then
  echo "ok: a page without --dry-run fails the comparison"
else
  fail "the comparison passed a page without --dry-run"
fi
pn=$(printf '%s\n.SH OPTIONS\n.TP\n\\fB\\-\\-frobnicate\\fR\nx\n' "$(gzip -dc "$man1/ebb-agent.1.gz")" | page_names)
if compare planted "$hn" "$pn" | grep -q -- '--frobnicate'; then
  echo "ok: a page with an option --help lacks fails the comparison"
else
  fail "the comparison passed a page with --frobnicate"
fi

if [ $fails -gt 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "man pages: all checks passed"
