#!/usr/bin/env bash
# Variants' files staged while the sweep compiles (issue #22): naive parallel
# beside `before` (the build of 0652764: .carry/rule.bsdiff against the
# carried CAPI library) and `staged` (the build that stages them:
# .carry/stream.bsdiff), side by side in every round (bench/env_pairs.py, the
# order rotating), at P = 16: the ROCDL config sweep (4 kernels x 16 hint
# sets, one sweep), the GEMM 128x256 u16 at N = 16 and the GEMM 64x64 u4 at
# N = 16. Naive parallel runs the staging build (one variant a process).
#   bench/node-stream/device-run.sh OUT [CONFIG_REPS [GEMM_REPS [SMALL_REPS]]]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 config_reps=${2:-8} gemm_reps=${3:-8} small_reps=${4:-10}
mkdir -p "$out"
source "$repo/bench/node-carry.sh"
carry_tools /tmp/fly "$out"
carry_patched /tmp/fly /tmp/fly-rule rule
carry_patched /tmp/fly /tmp/fly-stream stream
sha256sum /tmp/fly-rule/fly_snapshot/lib/libFlySnapshotCAPI.so \
  /tmp/fly-stream/fly_snapshot/lib/libFlySnapshotCAPI.so >> "$out/node.txt"
tune=/tmp/fly-stream/fly_snapshot/bin/fly-tune
modes=(--mode before: --tool before=/tmp/fly-rule/fly_snapshot/bin/fly-tune
  --mode staged:)
config_workload /tmp/fly
pairs_config "$out" 200 "$config_reps" "${modes[@]}"
pairs_gemm "$out" 200 16 16 "$gemm_reps" "${modes[@]}"
small=/tmp/fly/gemm-64x64-u4.mlir
python3 "$repo/bench/gen_gemm.py" --target rocdl --tiles 64x64 --unroll 4 -o "$small"
timeout 100 python3 "$repo/bench/env_pairs.py" --fly-tune "$tune" --toolkit "$toolkit" \
  --target rocdl:gfx942 --inputs "$small" --N 16 --P 16 --reps "$small_reps" \
  "${modes[@]}" --work /tmp/fly/small --out "$out/small" > "$out/small.log" 2>&1 ||
  echo "small: rc $?"
