#!/usr/bin/env bash
# What bench/h200-sched ran on the 16-core node: the wheel of the change
# (.carry/fly.tar.zst, "sched"), the wheel before it ("before": the same tree
# with its libFlySnapshotCAPI.so from .carry/before.bsdiff; bench/
# node-carry.sh) and "sched" with whole code generation
# (FLY_ROCDL_CODEGEN_CUT=0, "whole"), on scaling.py's config-space workload
# at P = 16: four GEMMs x 16 hint sets, one fly-tune sweep.
#   bench/h200-sched/device-run.sh OUT [REPS]
# continued-*: how many variants each wheel continued (config-continued.sh);
# then REPS rounds (default 5) of scaling.py --reps 1 per target and mode,
# the order of the modes reversed every other round (ROCDL: whole, before,
# sched; NVVM, which keeps no code generation: before, sched).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 reps=${2:-5}
mkdir -p "$out"
source "$repo/bench/node-carry.sh"
carry_unpack /tmp/fly
carry_patched /tmp/fly /tmp/fly-before before
sched=/tmp/fly/fly_snapshot/bin/fly-tune before=/tmp/fly-before/fly_snapshot/bin/fly-tune
toolkit=/tmp/fly/fly_snapshot/rocm-toolkit
sha256sum /tmp/fly/fly_snapshot/lib/libFlySnapshotCAPI.so \
  /tmp/fly-before/fly_snapshot/lib/libFlySnapshotCAPI.so > "$out/wheels.txt"
for build in before sched; do
  timeout 120 "$repo/bench/h200-sched/config-continued.sh" "${!build}" "$toolkit" \
    "$out/continued-$build" 16 > /dev/null 2>&1 || echo "continued $build: rc $?"
done
for rep in $(seq "$reps"); do
  for target in rocdl nvvm; do
    for mode in $(in_turn "$rep" whole before sched); do
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
