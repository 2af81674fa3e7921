#!/usr/bin/env bash
# What bench/node-threads runs on the 16-core node: the carried wheel's
# fly-tune on scaling.py's ROCDL GEMM (128x256, unroll 16) with its 64 hint
# sets, all compiled (FLY_DEDUPE_DEFAULTS=0), at --jobs 4, 8 and 16 in turn
# (bench/threads_cpu.py): CPU, system time and context switches per thread
# count.
#   bench/node-threads/device-run.sh OUT [ROUNDS (3)]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 rounds=${2:-3} work=/tmp/fly
source "$repo/bench/node-carry.sh"
carry_unpack "$work"
kernel=$work/k/x-rocdl-128x256-u16.mlir
mkdir -p "$work/k"
[ -f "$kernel" ] || python3 "$repo/bench/gen_gemm.py" --target rocdl \
  --tiles 128x256 --unroll 16 -o "$kernel"
python3 "$repo/bench/threads_cpu.py" --fly-tune "$work/fly_snapshot/bin/fly-tune" \
  --toolkit "$work/fly_snapshot/rocm-toolkit" --kernel "$kernel" --n 64 \
  --jobs 4,8,16 --rounds "$rounds" --env FLY_DEDUPE_DEFAULTS=0 --out "$out"
