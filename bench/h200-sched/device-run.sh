#!/usr/bin/env bash
# What bench/h200-sched ran on the 16-core node: the wheel of the change
# (.carry/fly.tar.zst, "sched"), the wheel before it ("before": the same tree
# with its libFlySnapshotCAPI.so rebuilt by bspatch from .carry/before.bsdiff,
# bspatch and its libbz2 in .carry/bsdiff) and "sched" with whole code
# generation (FLY_ROCDL_CODEGEN_CUT=0, "whole"), on scaling.py's config-space
# workload at P = 16: four GEMMs x 16 hint sets, one fly-tune sweep.
#   bench/h200-sched/device-run.sh OUT [REPS]
# continued-*: how many variants each wheel continued (config-continued.sh);
# then REPS rounds (default 5) of scaling.py --reps 1 per target and mode,
# the order of the modes reversed every other round (ROCDL: whole, before,
# sched; NVVM, which keeps no code generation: before, sched).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 reps=${2:-5}
mkdir -p "$out" /tmp/fly /tmp/fly-before
if [ ! -x /tmp/fly-before/fly_snapshot/bin/fly-tune ]; then
  LD_LIBRARY_PATH="$repo/.carry/zstd" "$repo/.carry/zstd/zstd" -q -d --long=31 \
    -c "$repo/.carry/fly.tar.zst" | tar xf - -C /tmp/fly
  cp -a /tmp/fly/fly_snapshot /tmp/fly-before/
  LD_LIBRARY_PATH="$repo/.carry/bsdiff" "$repo/.carry/bsdiff/bspatch" \
    /tmp/fly/fly_snapshot/lib/libFlySnapshotCAPI.so \
    /tmp/fly-before/fly_snapshot/lib/libFlySnapshotCAPI.so "$repo/.carry/before.bsdiff"
fi
sched=/tmp/fly/fly_snapshot/bin/fly-tune before=/tmp/fly-before/fly_snapshot/bin/fly-tune
toolkit=/tmp/fly/fly_snapshot/rocm-toolkit
sha256sum /tmp/fly/fly_snapshot/lib/libFlySnapshotCAPI.so \
  /tmp/fly-before/fly_snapshot/lib/libFlySnapshotCAPI.so > "$out/wheels.txt"
for build in before sched; do
  timeout 120 "$repo/bench/h200-sched/config-continued.sh" "${!build}" "$toolkit" \
    "$out/continued-$build" 16 > /dev/null 2>&1 || echo "continued $build: rc $?"
done
for rep in $(seq "$reps"); do
  modes="whole before sched"; [ $((rep % 2)) = 0 ] && modes="sched before whole"
  for target in rocdl nvvm; do
    for mode in $modes; do
      [ "$target" = nvvm ] && [ "$mode" = whole ] && continue
      tune=$sched cut=1
      [ "$mode" = before ] && tune=$before
      [ "$mode" = whole ] && cut=0
      env FLY_ROCDL_CODEGEN_CUT=$cut timeout 100 python3 "$repo/bench/scaling.py" \
        --fly-tune "$tune" --rocm-toolkit "$toolkit" --targets "$target" \
        --workloads config --P 16 --N 16 --reps 1 --budget-s 60 \
        --work /tmp/fly/config --out "$out/$target-$mode-$rep" \
        > "$out/$target-$mode-$rep.log" 2>&1 || echo "$target $mode $rep: rc $?"
    done
  done
done
