#!/usr/bin/env bash
# Sixteen threads on this machine's cores: how many ROCDL variants continue a
# kept code generation and what the sweep costs in CPU, two fly-tune builds
# alternating. Counts and CPU only: with more threads than cores the wall
# says nothing about a 16-core node.
#   bench/node-check-wait/simulate.sh BEFORE AFTER TOOLKIT WORK [REPS]
# BEFORE and AFTER are fly-tune binaries whose --jobs cap (clampJobs in
# lib/Support/ToolOptions.cpp, 4 x hardware threads) was raised to 16 x.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
before=$1 after=$2 toolkit=$3 work=$4 reps=${5:-3}
mkdir -p "$work"
python3 "$repo/bench/gen_gemm.py" --target rocdl --tiles 64x64 --unroll 8 -o "$work/gemm-64x64-u8.mlir"
python3 "$repo/bench/gen_gemm.py" --target rocdl --tiles 128x256 --unroll 16 -o "$work/gemm-128x256-u16.mlir"
python3 -c "
import json, sys; sys.path.insert(0, '$repo/bench'); import scaling
json.dump(scaling.hint_sets('rocdl', 64), open('$work/hints-64.json', 'w'))"
source "$repo/bench/node-carry.sh"
echo "build kernel continued cpu_s wall_s"
for kernel in gemm-64x64-u8 gemm-128x256-u16; do
  for rep in $(seq "$reps"); do
    for build in $(in_turn "$rep" before after); do
      out=$work/out
      rm -rf "$out"
      /usr/bin/time -f "%U %S %e" -o "$work/time.txt" "${!build}" "$work/$kernel.mlir" \
        --target=rocdl:gfx942 --toolkit="$toolkit" --hints-file="$work/hints-64.json" \
        --jobs=16 --out-dir="$out" --no-cache --quiet > /dev/null 2>&1
      read -r user sys wall < "$work/time.txt"
      python3 -c "
import json, sys; sys.path.insert(0, '$repo/bench'); import scaling
n = scaling.codegen_continued(json.load(open('$out/manifest.json'))['variants']) or 0
print('$build $kernel', n, round($user + $sys, 2), $wall)"
    done
  done
done
