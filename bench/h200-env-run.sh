#!/usr/bin/env bash
# One fly-tune build on the H200 node in two settings of one FLY_* switch,
# side by side: the wheel of the change carried as .carry/fly.tar.zst (with
# a zstd in .carry/zstd), on four generated gfx942 MFMA GEMMs.
#   bench/h200-env-run.sh VAR OFF-NAME ON-NAME pairs|config|scaling|verify OUT [...]
# pairs: bench/env_pairs.py at P=16 (naive parallel, VAR=0, VAR unset; extra
# arguments go to it); config: scaling.py's config-space workload, three
# repetitions per setting alternating, the order flipped per repetition;
# scaling REPS CELL...: the same for each CELL, WORKLOADS:P:N of scaling.py
# (gemm,config:16:64 is both workloads at P = 16, N = 64), each call with
# its own naive parallel run (FLY_BENCH_TARGETS=rocdl,nvvm: both targets,
# default rocdl); verify: with VAR=verify, what each GEMM's
# 64-variant sweep printed. OUT/node.txt describes the node and the build.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
var=$1 off=$2 on=$3 what=$4 out=$5
shift 5
work=/tmp/fly
mkdir -p "$work" "$out"
source "$repo/bench/node-carry.sh"
carry_unpack "$work"
tune=$work/fly_snapshot/bin/fly-tune toolkit=$work/fly_snapshot/rocm-toolkit
# scaling.py's --targets for config and scaling (nvvm needs /usr/local/cuda).
targets=${FLY_BENCH_TARGETS:-rocdl}
carry_describe "$work" > "$out/node.txt"
# One scaling.py call in setting MODE (VAR=0 for OFF-NAME, 1 for ON-NAME):
# WORKLOADS P:N NAME, into OUT/NAME and OUT/NAME.log; never past 200 s.
scaling_in() {
  local mode=$1 workloads=$2 grid=$3 name=$4 value=0
  [ "$mode" = "$on" ] && value=1
  env "$var=$value" timeout 200 python3 "$repo/bench/scaling.py" \
    --fly-tune "$tune" --rocm-toolkit "$toolkit" --targets "$targets" \
    --workloads "$workloads" --grid "$grid" --reps 1 --budget-s 150 \
    --work "$work/scaling" --out "$out/$name" > "$out/$name.log" 2>&1 ||
    echo "$name: rc $?"
}
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
  python3 "$repo/bench/env_pairs.py" --fly-tune "$tune" --toolkit "$toolkit" \
    --target rocdl:gfx942 --inputs "$(IFS=,; echo "${kernels[*]}")" \
    --P 16 --mode "$off:$var=0" --mode "$on:" \
    --work "$work/pairs" --out "$out" "$@" ;;
config)
  for rep in 1 2 3; do
    for mode in $(in_turn "$rep" "$off" "$on"); do
      scaling_in "$mode" config 16:16 "config-$mode-$rep"
    done
  done ;;
scaling)
  reps=$1
  shift
  for rep in $(seq "$reps"); do
    for cell in "$@"; do
      workloads=${cell%%:*} grid=${cell#*:}
      for mode in $(in_turn "$rep" "$off" "$on"); do
        scaling_in "$mode" "$workloads" "$grid" \
          "$mode-${workloads//,/_}-p${grid%:*}n${grid#*:}-$rep"
      done
    done
  done ;;
verify)
  hints=$(python3 -c "import sys; sys.path.insert(0, '$repo/bench')
from scaling import hint_sets, hint_text
print(';'.join(hint_text(h) for h in hint_sets('rocdl', 64)))")
  for k in "${kernels[@]}"; do
    env "$var=verify" "$tune" --toolkit="$toolkit" --no-cache --quiet \
      --jobs=16 --hints="$hints" --out-dir="$work/verify" "$k" 2>&1 >/dev/null |
      sort | uniq -c | sed "s|^|$(basename "$k"): |"
  done > "$out/verify.txt" ;;
esac
