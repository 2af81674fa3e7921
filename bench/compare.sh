#!/usr/bin/env bash
# Before/after, side by side in one run:
#
#   bench/compare.sh BASE_BUILD [NEW_BUILD]   (NEW_BUILD default: build)
#
# BASE_BUILD is a build tree of the code to compare against (e.g. a
# `git worktree add ../base <commit>` built with `ninja fly-bench`). For each
# workload, target and repetition, the base and the new fly-bench each run
# one repetition of the same modes on the same input and hint sets, back to
# back, the order alternating per repetition; bench/compare.py then reports
# medians of the per-repetition ratios new ÷ base (a ratio of two runs a few
# seconds apart, so slow drift of the machine's load cancels), and the
# process executor's cost per variant (new only: the base has no such
# executor). Writes bench/COMPARE.md (or FLY_COMPARE_RESULTS).
#
# Environment: FLY_COMPARE_REPS (default 5), FLY_BENCH_CUDA (default
# /usr/local/cuda; NVVM is skipped without ptxas).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE=$(cd "${1:?usage: bench/compare.sh BASE_BUILD [NEW_BUILD]}" && pwd)
NEW=$(cd "${2:-$ROOT/build}" && pwd)
OUT=$NEW/bench-compare
RESULTS=${FLY_COMPARE_RESULTS:-$ROOT/bench/COMPARE.md}
REPS=${FLY_COMPARE_REPS:-5}
CUDA=${FLY_BENCH_CUDA:-/usr/local/cuda}
ROCM=$NEW/rocm-toolkit
START=$(date +%s)
DEADLINE=$((START + 150))

rm -rf "$OUT" && mkdir -p "$OUT/work" "$OUT/base" "$OUT/new"
# Private copies: a rebuild during the run must not change what is measured.
cp "$BASE/bin/fly-bench" "$OUT/base/fly-bench"
cp "$NEW/bin/fly-bench" "$OUT/new/fly-bench"
cp "$NEW/bin/fly-tune" "$OUT/new/fly-tune"
python3 "$ROOT/bench/gen_workload.py" --kernels 2 --rows 8 --vec 16 --fold 0 \
  -o "$OUT/work/backend.mlir"
python3 "$ROOT/bench/gen_workload.py" --kernels 1 --rows 2 --vec 4 \
  --fold 18000 -o "$OUT/work/prefix.mlir"

MODES=naive,serial,parallel,serial-plain,parallel-plain,isolated
H=$ROOT/bench/hints
one() { # side rep name input target hints
  local side=$1 rep=$2 name=$3 input=$4 target=$5 hints=$6
  local toolkit=$ROCM modes=$MODES extra=()
  [[ $target == nvvm:* ]] && toolkit=$CUDA
  if [[ $side == new ]]; then
    modes=$MODES,process
    extra=(--fly-tune="$OUT/new/fly-tune")
  fi
  local tag=$name-${target%%:*}
  "$OUT/$side/fly-bench" --name="$name" --input="$input" --target="$target" \
    --toolkit="$toolkit" --hints-file="$hints" --n=8,16 --reps=1 \
    --modes="$modes" --retries=0 --deadline="$DEADLINE" --quiet-wait-s=5 \
    --work-dir="$OUT/work/$side-$tag" --json="$OUT/$side/$tag-$rep.json" \
    "${extra[@]}" > /dev/null
}

workloads=("example $ROOT/examples/tile_matmul.mlir rocdl:gfx942 $H/rocdl.json"
  "backend $OUT/work/backend.mlir rocdl:gfx942 $H/rocdl.json"
  "prefix $OUT/work/prefix.mlir rocdl:gfx942 $H/rocdl.json")
if [ -x "$CUDA/bin/ptxas" ]; then
  workloads+=("example $ROOT/examples/tile_matmul.mlir nvvm:sm_90 $H/nvvm.json"
    "prefix $OUT/work/prefix.mlir nvvm:sm_90 $H/nvvm.json")
fi
for w in "${workloads[@]}"; do
  read -r name input target hints <<< "$w"
  echo "== $name on $target (t=$(($(date +%s) - START)) s)"
  for rep in $(seq 1 "$REPS"); do
    if ((rep % 2)); then order="base new"; else order="new base"; fi
    for side in $order; do one "$side" "$rep" "$name" "$input" "$target" "$hints"; done
  done
done

python3 "$ROOT/bench/compare.py" --results "$OUT" --root "$ROOT" \
  --base "$(git -C "$BASE/.." rev-parse --short HEAD 2> /dev/null || echo "$BASE")" \
  --elapsed "$(($(date +%s) - START))" -o "$RESULTS"
echo "wrote $RESULTS ($(($(date +%s) - START)) s)"
