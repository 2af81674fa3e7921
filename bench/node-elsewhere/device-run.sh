#!/usr/bin/env bash
# What bench/node-elsewhere ran on the 16-core node: the wheel of the change
# (.carry/fly.tar.zst) with ROCDL variants continuing elsewhere (`elsewhere`,
# the default) and with FLY_ROCDL_CONTINUE_ELSEWHERE=0 (`here`: a state
# serves one thread at a time, as before the change).
#   bench/node-elsewhere/device-run.sh OUT [PAIR_REPS [CONFIG_REPS]]
# pairs: bench/env_pairs.py on the ROCDL GEMM 128x256 u16 at P=16, N=64,
# PAIR_REPS rounds (default 5), naive parallel and both modes in a rotating
# order; config: scaling.py's config-space workload (4 GEMMs x 16 hint sets)
# at P=16 and the GEMM at N=P=16, both modes in turn CONFIG_REPS times
# (default 4), each call with its own naive parallel run; objects: the
# config sweep's objects in both modes against FLY_ROCDL_CODEGEN_CUT=0;
# traces: two --time-trace runs of the config sweep per mode, summarised.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 pair_reps=${2:-5} config_reps=${3:-4}
mkdir -p "$out"
source "$repo/bench/node-carry.sh"
carry_tools /tmp/fly "$out"
gemm=/tmp/fly/gemm-128x256-u16.mlir
python3 "$repo/bench/gen_gemm.py" --target rocdl --tiles 128x256 --unroll 16 -o "$gemm"
timeout 200 python3 "$repo/bench/env_pairs.py" --fly-tune "$tune" --toolkit "$toolkit" \
  --target rocdl:gfx942 --inputs "$gemm" --N 64 --P 16 --reps "$pair_reps" \
  --mode here:FLY_ROCDL_CONTINUE_ELSEWHERE=0 --mode elsewhere: \
  --work /tmp/fly/pairs --out "$out/pairs" > "$out/pairs.log" 2>&1 || echo "pairs: rc $?"
for rep in $(seq "$config_reps"); do
  for mode in $(in_turn "$rep" here elsewhere); do
    value=1
    [ "$mode" = here ] && value=0
    for cell in config:16:16 gemm:16:16; do
      workloads=${cell%%:*} grid=${cell#*:}
      env FLY_ROCDL_CONTINUE_ELSEWHERE=$value timeout 100 python3 "$repo/bench/scaling.py" \
        --fly-tune "$tune" --rocm-toolkit "$toolkit" --targets rocdl \
        --workloads "$workloads" --grid "$grid" --reps 1 --budget-s 60 \
        --work /tmp/fly/scaling --out "$out/$mode-$workloads-$rep" \
        > "$out/$mode-$workloads-$rep.log" 2>&1 || echo "$cell $mode: rc $?"
    done
  done
done
config_workload /tmp/fly
sweep() {
  local dir=$1
  shift
  rm -rf "$dir"
  env "$@" "$tune" "${config[@]}" --target=rocdl:gfx942 --toolkit="$toolkit" \
    --hints-file=/tmp/fly/h16.json --jobs=16 --no-cache --quiet --out-dir="$dir" > /dev/null ||
    echo "sweep $dir: rc $?"
}
sweep /tmp/fly/o-whole FLY_ROCDL_CODEGEN_CUT=0
for mode in here elsewhere; do
  value=1
  [ "$mode" = here ] && value=0
  sweep /tmp/fly/o-$mode FLY_ROCDL_CONTINUE_ELSEWHERE=$value
  echo "$mode: $({ diff -r -q /tmp/fly/o-whole /tmp/fly/o-$mode -x manifest.json \
    -x sweep.json -x .fly-outdir || true; } | wc -l) files differ from whole compiles," \
    "$(find /tmp/fly/o-$mode -name '*.hsaco' | wc -l) objects"
done > "$out/objects.txt"
for round in 1 2; do
  for mode in $(in_turn "$round" here elsewhere); do
    value=1
    [ "$mode" = here ] && value=0
    rm -rf /tmp/fly/traced
    env FLY_ROCDL_CONTINUE_ELSEWHERE=$value "$tune" "${config[@]}" --target=rocdl:gfx942 \
      --toolkit="$toolkit" --hints-file=/tmp/fly/h16.json --jobs=16 --no-cache --quiet \
      --out-dir=/tmp/fly/traced --time-trace="$out/config-$mode-$round.trace.json" \
      > /dev/null || true
    python3 "$repo/bench/trace_summary.py" "$out/config-$mode-$round.trace.json" \
      --tail 24 > "$out/config-$mode-$round.summary.md" || true
    gzip -f "$out/config-$mode-$round.trace.json"
  done
done
