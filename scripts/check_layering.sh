#!/usr/bin/env bash
# Fails when a source file includes a folder its layer may not include
# (scripts/layers.txt; docs/design.md, section 1). Checks every .h, .c and
# .cpp below each layer folder; tests/, bench/ and fuzz/ are not layers.
# Usage: scripts/check_layering.sh [ROOT]   (ROOT defaults to the repository)
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
rules="$root/scripts/layers.txt"
[ -f "$rules" ] || { echo "check_layering: $rules: no such file" >&2; exit 2; }

declare -A allowed=()
while read -r folder deps; do
  [[ -z "$folder" || "$folder" == \#* ]] && continue
  allowed[$folder]=" $folder $deps "
done <"$rules"

# The layer an include path belongs to: configs/proto/* is `proto`.
layer_of() {
  case $1 in
    configs/proto/*) echo proto ;;
    */*) echo "${1%%/*}" ;;
    *) echo "" ;;
  esac
}

violations=0
files=0
for folder in "${!allowed[@]}"; do
  [ "$folder" = proto ] && continue
  [ -d "$root/$folder" ] || continue
  while IFS= read -r -d '' file; do
    files=$((files + 1))
    self=$folder
    rel=${file#"$root/"}
    [[ $rel == configs/proto/* ]] && self=proto
    line=0
    while IFS= read -r text; do
      line=$((line + 1))
      [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]] || continue
      inc=${BASH_REMATCH[1]}
      target=$(layer_of "$inc")
      [ -n "$target" ] || continue
      # Only folders of the repository count (not <fmt/...> style paths).
      [ -d "$root/${inc%%/*}" ] || continue
      if [ -z "${allowed[$target]+x}" ]; then
        echo "$rel:$line: includes \"$inc\": $target/ is not a layer; $self/ may include only:${allowed[$self]}" >&2
        violations=$((violations + 1))
      elif [[ ${allowed[$self]} != *" $target "* ]]; then
        echo "$rel:$line: includes \"$inc\": $self/ may not include $target/ (a higher or sibling layer; allowed:${allowed[$self]})" >&2
        violations=$((violations + 1))
      fi
    done <"$file"
  done < <(find "$root/$folder" -type f \( -name '*.h' -o -name '*.c' -o -name '*.cpp' \) -print0)
done

if [ "$violations" -gt 0 ]; then
  echo "check_layering: $violations include(s) against the layer order of scripts/layers.txt" >&2
  exit 1
fi
echo "check_layering: $files files follow the layer order"
