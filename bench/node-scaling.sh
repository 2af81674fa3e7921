#!/usr/bin/env bash
# One bench/scaling.py call on the GPU node with the carried wheel
# (bench/node-carry.sh), its results in OUT (scaling.json, RESULTS.md,
# run.log, node.txt), the scaling.py arguments after OUT:
#   bench/node-scaling.sh OUT --targets rocdl,nvvm --workloads gemm,config \
#     --grid 16:64,16:16 --reps 2 --budget-s 480
# With PATCH=NAME, the carried wheel with its library from .carry/NAME.bsdiff
# (node-carry.sh, carry_patched) runs instead.
# Never past 580 s: a device call ends at 600.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$1
shift
work=/tmp/fly
mkdir -p "$out"
source "$repo/bench/node-carry.sh"
carry_unpack "$work"
tools=$work
if [ -n "${PATCH:-}" ]; then
  tools=/tmp/fly-$PATCH
  carry_patched "$work" "$tools" "$PATCH"
fi
carry_describe "$tools" > "$out/node.txt"
rm -rf "$work/sw"
timeout 580 python3 "$repo/bench/scaling.py" --fly-tune "$tools/fly_snapshot/bin/fly-tune" \
  --rocm-toolkit "$tools/fly_snapshot/rocm-toolkit" --work "$work/sw" \
  --out "$out" "$@" > "$out/run.log" 2>&1 || echo "scaling.py: rc $?"
