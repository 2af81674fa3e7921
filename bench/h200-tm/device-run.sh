#!/usr/bin/env bash
# What bench/h200-tm ran on the H200 node: the wheel of this change carried
# as .carry/fly.tar.zst, one binary with FLY_ROCDL_REUSE_TM=0 ("tm-off",
# a new TargetMachine per variant as before) against the default ("kept").
#   bench/h200-tm/device-run.sh pairs|config OUT
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
what=$1 out=$2
work=/tmp/fly
mkdir -p "$work" "$out"
if [ ! -x "$work/fly_snapshot/bin/fly-tune" ]; then
  LD_LIBRARY_PATH="$repo/.carry/zstd" "$repo/.carry/zstd/zstd" -d --long=31 \
    -c "$repo/.carry/fly.tar.zst" | tar xf - -C "$work"
fi
tune=$work/fly_snapshot/bin/fly-tune toolkit=$work/fly_snapshot/rocm-toolkit
kernels=()
for spec in 32x32:1 64x64:4 128x128:8 128x256:16; do
  tile=${spec%:*} unroll=${spec#*:}
  k=$work/k/x-rocdl-$tile-u$unroll.mlir
  mkdir -p "$work/k"
  [ -f "$k" ] || python3 "$repo/bench/gen_gemm.py" --target rocdl --tiles "$tile" \
    --unroll "$unroll" -o "$k"
  kernels+=("$k")
done
case $what in
pairs)
  shift 2
  python3 "$repo/bench/env_pairs.py" --fly-tune "$tune" --toolkit "$toolkit" \
    --target rocdl:gfx942 --inputs "$(IFS=,; echo "${kernels[*]}")" \
    --P 16 --mode tm-off:FLY_ROCDL_REUSE_TM=0 --mode kept: \
    --work "$work/pairs" --out "$out" "$@" ;;
config)
  # Alternating, the order flipped per repetition.
  for rep in 1 2 3; do
    modes="off on"; [ $((rep % 2)) = 0 ] && modes="on off"
    for mode in $modes; do
      reuse=0; [ "$mode" = on ] && reuse=1
      FLY_ROCDL_REUSE_TM=$reuse python3 "$repo/bench/scaling.py" \
        --fly-tune "$tune" --rocm-toolkit "$toolkit" --targets rocdl \
        --workloads config --P 16 --N 16 --reps 1 --budget-s 120 \
        --work "$work/config" --out "$out/config-$mode-$rep" > "$out/config-$mode-$rep.log" 2>&1
    done
  done ;;
esac
