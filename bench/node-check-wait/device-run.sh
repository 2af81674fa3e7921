#!/usr/bin/env bash
# What bench/node-check-wait runs on the 16-core node: the carried wheel
# (.carry/fly.tar.zst; bench/node-carry.sh) as it is ("wait") and with
# FLY_ROCDL_AWAIT_CHECK=0 ("before": a variant that finds its target's check
# running compiles whole, the rule before 0832db8), side by side on
# scaling.py's ROCDL GEMM at N = 64, P = 16 (with the config-space workload)
# and P = 8.
#   bench/node-check-wait/device-run.sh OUT [REPS]
# REPS rounds (default 3) of scaling.py --reps 1 per build and P, the order
# of the builds reversed every other round; each call measures its own naive
# parallel run. OUT/runs.tar.gz holds every call's folder and log.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 reps=${2:-3}
mkdir -p "$out"
source "$repo/bench/node-carry.sh"
carry_unpack /tmp/fly
fly=/tmp/fly/fly_snapshot/bin/fly-tune
await_wait=1 await_before=0
toolkit=/tmp/fly/fly_snapshot/rocm-toolkit
runs=/tmp/check-wait-runs
mkdir -p "$runs"
{
  "$fly" --version | tail -1
  sha256sum /tmp/fly/fly_snapshot/lib/libFlySnapshotCAPI.so
} > "$out/wheels.txt"
{ nproc; lscpu | grep -E "Model name|Thread|Core|Socket"; free -g | head -2
  nvidia-smi -L 2>/dev/null || true; } > "$out/machine.txt"
for rep in $(seq "$reps"); do
  for p in 16 8; do
    workloads=gemm
    [ "$p" = 16 ] && workloads=gemm,config
    for build in $(in_turn "$rep" before wait); do
      await=await_$build
      FLY_ROCDL_AWAIT_CHECK=${!await} timeout 200 python3 "$repo/bench/scaling.py" \
        --fly-tune "$fly" --rocm-toolkit "$toolkit" --targets rocdl \
        --workloads "$workloads" --grid "$p:64" --reps 1 --budget-s 150 \
        --work /tmp/fly/work --out "$runs/$build-p$p-$rep" \
        > "$runs/$build-p$p-$rep.log" 2>&1 || echo "$build p$p $rep: rc $?"
    done
  done
done
tar czf "$out/runs.tar.gz" -C "$runs" .
