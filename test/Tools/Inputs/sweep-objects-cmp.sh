#!/usr/bin/env bash
# sweep-objects-cmp.sh NAME KERNEL OUT HINTS-FILE RUN...: one fly-tune sweep
# of KERNEL per RUN, "LABEL:ENV:FLAGS" (ENV: one VAR=VALUE or empty; FLAGS:
# more fly-tune flags), into OUT/LABEL-NAME. Every object of the first RUN
# must be the same file in each other RUN, byte for byte: one "same NAME" line
# per object.
set -euo pipefail
name=$1 kernel=$2 out=$3 hints=$(cat "$4")
shift 4
labels=()
for run in "$@"; do
  IFS=: read -r label assignment flags <<< "$run"
  labels+=("$label")
  # FLAGS are split into words on purpose.
  # shellcheck disable=SC2086
  env $assignment fly-tune --no-cache --quiet $flags --hints="$hints" \
    --out-dir="$out/$label-$name" "$kernel" > /dev/null
done
for f in "$out/${labels[0]}-$name"/*.hsaco; do
  for label in "${labels[@]:1}"; do
    cmp "$f" "$out/$label-$name/${f##*/}"
  done
  echo "same $name"
done
