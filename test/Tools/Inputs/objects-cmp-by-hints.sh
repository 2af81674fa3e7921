#!/usr/bin/env bash
# objects-cmp-by-hints.sh NAME A B: every object in directory A is the file of
# the same hint set in directory B, byte for byte, whatever its variant index
# there ("v<index>_<hint set>..."): one "same NAME" line per object.
set -euo pipefail
name=$1 a=$2 b=$3
for f in "$a"/*.hsaco; do
  hints=$(basename "$f" | sed -E 's/^v[0-9]+_//')
  match=$(find "$b" -maxdepth 1 -name '*.hsaco' | while read -r g; do
    if [ "$(basename "$g" | sed -E 's/^v[0-9]+_//')" = "$hints" ]; then
      echo "$g"
    fi
  done)
  [ "$(printf '%s\n' "$match" | grep -c .)" = 1 ] || {
    echo "no single match for $hints in $b" >&2
    exit 1
  }
  cmp "$f" "$match"
  echo "same $name"
done
