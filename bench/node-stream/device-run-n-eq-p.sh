#!/usr/bin/env bash
# N = P = 16 on more kernels, `before` and `staged` as in device-run.sh:
# ROCDL GEMMs 32x32 u1 and 128x128 u8, NVVM GEMM 64x64 u4 (sm_90, the
# node's /usr/local/cuda), REPS rounds each (default 10), into OUT/<kernel>.
#   bench/node-stream/device-run-n-eq-p.sh OUT [REPS]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 reps=${2:-10}
mkdir -p "$out"
source "$repo/bench/node-carry.sh"
carry_tools /tmp/fly "$out"
carry_patched /tmp/fly /tmp/fly-rule rule
carry_patched /tmp/fly /tmp/fly-stream stream
tune=/tmp/fly-stream/fly_snapshot/bin/fly-tune
modes=(--mode before: --tool before=/tmp/fly-rule/fly_snapshot/bin/fly-tune
  --mode staged:)
for spec in rocdl:32x32:1 rocdl:128x128:8 nvvm:64x64:4; do
  IFS=: read -r family tile unroll <<< "$spec"
  name=$family-$tile-u$unroll
  kernel=/tmp/fly/$name.mlir
  python3 "$repo/bench/gen_gemm.py" --target "$family" --tiles "$tile" --unroll "$unroll" \
    -o "$kernel"
  if [ "$family" = rocdl ]; then
    args=(--toolkit "$toolkit" --target rocdl:gfx942)
  else
    args=(--toolkit /usr/local/cuda --target nvvm:sm_90)
  fi
  timeout 150 python3 "$repo/bench/env_pairs.py" --fly-tune "$tune" "${args[@]}" \
    --inputs "$kernel" --N 16 --P 16 --reps "$reps" "${modes[@]}" \
    --work "/tmp/fly/$name" --out "$out/$name" > "$out/$name.log" 2>&1 || echo "$name: rc $?"
done
