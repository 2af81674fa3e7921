#!/usr/bin/env bash
# The side-by-side sweep benchmark, in one command:
#
#   bench/run.sh [build-dir]          (default: build)
#
# builds fly-bench if needed, generates the workloads, measures every mode
# (naive, text round-trip, fly serial / parallel / isolated / warm with
# reuse-isa as it ships, fly serial / parallel with reuse-isa off, ideal) for
# each workload and target with N=8 and N=16 hint sets, runs the kernel-count
# scaling series, the duplicate-hint check and a perf profile of the binary
# pass, and writes bench/RESULTS.md. Raw JSON goes to <build-dir>/bench-results.
#
# Environment: FLY_BENCH_QUICK=1 (one repetition each, for a smoke test),
# FLY_BENCH_CUDA (default /usr/local/cuda; NVVM is skipped without ptxas),
# FLY_BENCH_SCALING (kernel counts, default "1 5 10 25 50 100 200"),
# FLY_BENCH_RESULTS (default bench/RESULTS.md), FLY_BENCH_NOISE_BUDGET_S
# (default 150: after this many seconds, no more waiting for other processes
# to go quiet and no more repeating of disturbed repetitions).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
OUT=$BUILD/bench-results
RESULTS=${FLY_BENCH_RESULTS:-$ROOT/bench/RESULTS.md}
CUDA=${FLY_BENCH_CUDA:-/usr/local/cuda}
ROCM=$BUILD/rocm-toolkit
QUICK=${FLY_BENCH_QUICK:-0}
SCALING=${FLY_BENCH_SCALING:-"1 5 10 25 50 100 200"}
START=$(date +%s)
# Waiting for a quiet machine and repeating disturbed repetitions stop after
# this many seconds, so that a busy machine cannot stretch the run for long.
DEADLINE=$(( START + ${FLY_BENCH_NOISE_BUDGET_S:-150} ))

# Build (the shared build lock, where there is one).
LOCK=()
command -v flock > /dev/null && LOCK=(flock /tmp/fly-build.lock)
"${LOCK[@]}" ninja -C "$BUILD" fly-bench > /dev/null

rm -rf "$OUT" && mkdir -p "$OUT/work"
# A private copy: a rebuild of the build tree during the run (other people
# build there too) must neither break nor change the binary being measured.
cp "$BUILD/bin/fly-bench" "$OUT/fly-bench"
# The process executor's children, copied for the same reason.
"${LOCK[@]}" ninja -C "$BUILD" fly-tune > /dev/null
cp "$BUILD/bin/fly-tune" "$OUT/fly-tune"
BENCH=$OUT/fly-bench
GEN="python3 $ROOT/bench/gen_workload.py"
H=$ROOT/bench/hints
reps() { if [ "$QUICK" = 1 ]; then echo 1; else echo "$1"; fi; }

# Workloads. Backend-dominated: the bundled example (1 kernel, 8x16 tile) and
# a generated 2-kernel module; prefix-dominated: one small kernel under
# 18000 steps of foldable front-end IR.
$GEN --kernels 2 --rows 8 --vec 16 --fold 0 -o "$OUT/work/backend.mlir"
$GEN --kernels 1 --rows 2 --vec 4 --fold 18000 -o "$OUT/work/prefix.mlir"

bench() { # name input target hints reps [extra args...]
  local name=$1 input=$2 target=$3 hints=$4 r=$5
  shift 5
  local toolkit=$ROCM
  [[ $target == nvvm:* ]] && toolkit=$CUDA
  echo "== $name on $target (t=$(( $(date +%s) - START )) s)"
  "$BENCH" --name="$name" --input="$input" --target="$target" \
    --toolkit="$toolkit" --hints-file="$hints" --reps="$(reps "$r")" \
    --work-dir="$OUT/work/$name-${target%%:*}" --deadline="$DEADLINE" --quiet-wait-s=5 \
    --json="$OUT/$name-${target%%:*}.json" --fly-tune="$OUT/fly-tune" "$@"
}

bench example "$ROOT/examples/tile_matmul.mlir" rocdl:gfx942 "$H/rocdl.json" 5 \
  --n=8,16 --dedupe-hints="$H/rocdl-dedupe.json" --dedupe-distinct="$H/rocdl-distinct.json"
bench example "$ROOT/examples/tile_matmul.mlir" nvvm:sm_90 "$H/nvvm.json" 5 \
  --n=8,16 --dedupe-hints="$H/nvvm-dedupe.json" --dedupe-distinct="$H/nvvm-distinct.json"
bench backend "$OUT/work/backend.mlir" rocdl:gfx942 "$H/rocdl.json" 3 --n=8,16
bench prefix "$OUT/work/prefix.mlir" rocdl:gfx942 "$H/rocdl.json" 3 --n=8,16
bench prefix "$OUT/work/prefix.mlir" nvvm:sm_90 "$H/nvvm.json" 3 --n=8,16

# Scaling with the number of kernels: single-pass timings and per-variant
# overheads (one hint set, no hints).
for k in $SCALING; do
  $GEN --kernels "$k" --rows 2 --vec 4 --fold 100 -o "$OUT/work/scale-$k.mlir"
  "$BENCH" --name="scale-$k" --input="$OUT/work/scale-$k.mlir" \
    --target=rocdl:gfx942 --toolkit="$ROCM" --hints-file="$H/rocdl.json" \
    --n=1 --modes=singles --reps="$(reps 3)" --retries=0 --deadline="$DEADLINE" --quiet-wait-s=5 \
    --json="$OUT/scale-$k.json" | grep -v "rep [0-9]"
done

# Where the binary pass spends its time.
python3 "$ROOT/bench/profile.py" --fly-bench "$BENCH" \
  --input "$ROOT/examples/tile_matmul.mlir" --target rocdl:gfx942 \
  --toolkit "$ROCM" --hints "$H/rocdl.json" --n 8 -o "$OUT/profile-rocdl.json"
if [ -x "$CUDA/bin/ptxas" ]; then
  python3 "$ROOT/bench/profile.py" --fly-bench "$BENCH" \
    --input "$ROOT/examples/tile_matmul.mlir" --target nvvm:sm_90 \
    --toolkit "$CUDA" --hints "$H/nvvm.json" --n 8 -o "$OUT/profile-nvvm.json"
fi

python3 "$ROOT/bench/report.py" --results "$OUT" --root "$ROOT" \
  --command "bench/run.sh${1:+ $1}" --elapsed "$(( $(date +%s) - START ))" \
  --cuda "$CUDA" --quick "$QUICK" -o "$RESULTS"
echo "wrote $RESULTS ($(( $(date +%s) - START )) s)"
