#!/usr/bin/env bash
# rocdl-shared-opt-cmp.sh NAME KERNEL OUT HINTS-FILE: the objects of one
# sweep with FLY_ROCDL_SHARE_OPT=0 against the same sweep with sharing on
# (isolated and batch executors); one "same NAME" line per equal object.
set -euo pipefail
name=$1 kernel=$2 out=$3 hints=$(cat "$4")
FLY_ROCDL_SHARE_OPT=0 fly-tune --no-cache --quiet --hints="$hints" \
  --out-dir="$out/plain-$name" "$kernel" > /dev/null
fly-tune --no-cache --quiet --hints="$hints" \
  --out-dir="$out/shared-$name" "$kernel" > /dev/null
fly-tune --no-cache --quiet --executor=batch --jobs=2 --hints="$hints" \
  --out-dir="$out/batch-$name" "$kernel" > /dev/null
for f in "$out/plain-$name"/*.hsaco; do
  cmp "$f" "$out/shared-$name/${f##*/}"
  cmp "$f" "$out/batch-$name/${f##*/}"
  echo "same $name"
done
