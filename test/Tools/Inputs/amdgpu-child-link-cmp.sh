#!/usr/bin/env bash
# amdgpu-child-link-cmp.sh NAME KERNEL OUT HINTS-FILE: the objects of one
# sweep with every link in process against the same sweep with every link in
# a child and with auto (two jobs); one "same NAME" line per
# equal object.
set -euo pipefail
name=$1 kernel=$2 out=$3 hints=$(cat "$4")
FLY_AMDGPU_LINK=in-process fly-tune --no-cache --quiet --hints="$hints" \
  --out-dir="$out/in-process-$name" "$kernel" > /dev/null
FLY_AMDGPU_LINK=child fly-tune --no-cache --quiet --hints="$hints" \
  --out-dir="$out/child-$name" "$kernel" > /dev/null
FLY_AMDGPU_LINK=auto fly-tune --no-cache --quiet --jobs=2 --hints="$hints" \
  --out-dir="$out/auto-$name" "$kernel" > /dev/null
for f in "$out/in-process-$name"/*.hsaco; do
  cmp "$f" "$out/child-$name/${f##*/}"
  cmp "$f" "$out/auto-$name/${f##*/}"
  echo "same $name"
done
