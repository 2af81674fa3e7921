#!/usr/bin/env bash
# What bench/node-check-beside ran on the 16-core node: the wheel of the
# change (.carry/fly.tar.zst: variants queued as their ISA is compiled, and
# the check of a target's continuations on a thread of its own) against the
# one before both (`old`, .carry/old.bsdiff; bench/node-carry.sh), and the
# change with FLY_ROCDL_CHECK_BESIDE=0 (`inline`: the first change alone).
#   bench/node-check-beside/device-run.sh OUT [PAIR_REPS [CONFIG_REPS]]
# pairs: bench/env_pairs.py on the ROCDL GEMM 128x256 u16 at P=16, N=64,
# PAIR_REPS rounds (default 5), the modes in a rotating order; config:
# scaling.py's config-space workload (4 GEMMs x 16 hint sets) at P=16, the
# three modes in turn CONFIG_REPS times (default 4), the order reversed
# every other time; traces: two --time-trace runs of the GEMM with the new
# wheel, summarised.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 pair_reps=${2:-5} config_reps=${3:-4}
mkdir -p "$out"
source "$repo/bench/node-carry.sh"
carry_unpack /tmp/fly
carry_patched /tmp/fly /tmp/fly-old old
new=/tmp/fly/fly_snapshot/bin/fly-tune old=/tmp/fly-old/fly_snapshot/bin/fly-tune
toolkit=/tmp/fly/fly_snapshot/rocm-toolkit
{ carry_describe /tmp/fly; "$old" --version | tail -1
  sha256sum /tmp/fly-old/fly_snapshot/lib/libFlySnapshotCAPI.so; } > "$out/node.txt"
gemm=/tmp/fly/gemm-128x256-u16.mlir
python3 "$repo/bench/gen_gemm.py" --target rocdl --tiles 128x256 --unroll 16 -o "$gemm"
timeout 240 python3 "$repo/bench/env_pairs.py" --fly-tune "$new" --toolkit "$toolkit" \
  --target rocdl:gfx942 --inputs "$gemm" --N 64 --P 16 --reps "$pair_reps" \
  --mode old: --tool "old=$old" --mode inline:FLY_ROCDL_CHECK_BESIDE=0 --mode new: \
  --work /tmp/fly/pairs --out "$out/pairs" > "$out/pairs.log" 2>&1 || echo "pairs: rc $?"
for rep in $(seq "$config_reps"); do
  for mode in $(in_turn "$rep" old inline new); do
    tune=$new beside=1
    [ "$mode" = old ] && tune=$old
    [ "$mode" = inline ] && beside=0
    env FLY_ROCDL_CHECK_BESIDE=$beside timeout 100 python3 "$repo/bench/scaling.py" \
      --fly-tune "$tune" --rocm-toolkit "$toolkit" --targets rocdl --workloads config \
      --grid 16:16 --reps 1 --budget-s 60 --work /tmp/fly/config \
      --out "$out/$mode-config-$rep" > "$out/$mode-config-$rep.log" 2>&1 ||
      echo "config $mode: rc $?"
  done
done
python3 -c "import sys, json; sys.path.insert(0, '$repo/bench')
from scaling import hint_sets
json.dump(hint_sets('rocdl', 64), open('/tmp/fly/h64.json', 'w'))"
for round in 1 2; do
  rm -rf /tmp/fly/traced
  "$new" "$gemm" --target=rocdl:gfx942 --toolkit="$toolkit" --hints-file=/tmp/fly/h64.json \
    --jobs=16 --no-cache --quiet --out-dir=/tmp/fly/traced \
    --time-trace="$out/gemm-$round.trace.json" > /dev/null || true
  python3 "$repo/bench/trace_summary.py" "$out/gemm-$round.trace.json" --tail 24 \
    > "$out/gemm-$round.summary.md" || true
done
