#!/usr/bin/env bash
# How many variants of the config-space workload (scaling.py's: four gfx942
# GEMMs x 16 register budgets, one fly-tune sweep) continue from shared code
# generation at each --jobs, and what the sweep costs: under
# FLY_ROCDL_CODEGEN_CUT=verify every continued variant prints one line.
#   bench/h200-sched/config-continued.sh FLY_TUNE TOOLKIT OUT P...
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
tune=$1 toolkit=$2 out=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
# The workload as scaling.py defines it: its tiles, unroll and hint sets.
workload() {
  python3 -c "import sys; sys.path.insert(0, '$repo/bench')
from scaling import CONFIG_TILES, CONFIG_UNROLL, hint_sets, hint_text
$1"
}
unroll=$(workload "print(CONFIG_UNROLL['rocdl'])")
hints=$(workload "print(';'.join(hint_text(h) for h in hint_sets('rocdl', 16)))")
kernels=()
for tile in $(workload "print(' '.join(CONFIG_TILES['rocdl']))"); do
  python3 "$repo/bench/gen_gemm.py" --target rocdl --tiles "$tile" --unroll "$unroll" \
    -o "$work/config-rocdl-$tile.mlir"
  kernels+=("$work/config-rocdl-$tile.mlir")
done
for p in "$@"; do
  rm -rf "$work/out"
  /usr/bin/time -f "wall %e s, CPU %U+%S s, peak RSS %M KB" \
    env FLY_ROCDL_CODEGEN_CUT=verify "$tune" --toolkit="$toolkit" --no-cache \
    --quiet --jobs="$p" --hints="$hints" --out-dir="$work/out" "${kernels[@]}" \
    > /dev/null 2> "$work/err" || echo "fly-tune: rc $?" >> "$work/err"
  {
    echo "P=$p"
    grep -v '^fly: shared code generation' "$work/err" || true
    echo "continued, ISA equal: $(grep -c 'ISA equal$' "$work/err" || true)"
    echo "continued, ISA differs: $(grep -c 'ISA differs$' "$work/err" || true)"
  } | tee -a "$out/continued.txt"
done
