#!/usr/bin/env bash
# What ran on the node for node-trace/: fly-tune --time-trace on the
# config-space workload (4 ROCDL GEMMs x 16 hint sets) and the ROCDL GEMM
# (128x256 u16, 64 hint sets) at --jobs=16, each run with and without the
# trace in turn (what the trace costs), every trace summarised by
# bench/trace_summary.py; then scaling.py's config cell for the naive
# parallel figure beside them. Results under $RES (default /tmp/res-trace).
# CONFIG_ROUNDS and GEMM_ROUNDS (4, 3) and SCALING=0 (no scaling.py) shorten it.
set -euo pipefail
work=/tmp/fly
RES=${RES:-/tmp/res-trace}
mkdir -p "$RES"
source bench/node-carry.sh
carry_unpack "$work"
carry_describe "$work" > "$RES/node.txt"
tune=$work/fly_snapshot/bin/fly-tune tk=$work/fly_snapshot/rocm-toolkit
for t in 64x64 64x128 128x128 128x256; do
  python3 bench/gen_gemm.py --target rocdl --tiles $t --unroll 8 -o $work/config-rocdl-$t.mlir
done
python3 bench/gen_gemm.py --target rocdl --tiles 128x256 --unroll 16 -o $work/gemm.mlir
python3 -c "import sys, json; sys.path.insert(0, 'bench')
from scaling import hint_sets
json.dump(hint_sets('rocdl', 16), open('$work/h16.json', 'w'))
json.dump(hint_sets('rocdl', 64), open('$work/h64.json', 'w'))"

run() { # NAME MODE ROUND INPUTS...
  local name=$1 mode=$2 round=$3 hints=$4
  shift 4
  local extra=()
  [ "$mode" = trace ] && extra=(--time-trace="$RES/$name-$round.trace.json")
  rm -rf $work/out
  /usr/bin/time -f "$name $mode $round wall %e user %U sys %S maxrss_kb %M" \
    $tune "$@" --target=rocdl:gfx942 --toolkit=$tk --hints-file=$hints --jobs=16 \
    --no-cache --quiet --out-dir=$work/out "${extra[@]}" > /dev/null 2>> "$RES/times.txt" || true
  if [ "$mode" = trace ]; then
    python3 bench/trace_summary.py "$RES/$name-$round.trace.json" --tail 24 \
      > "$RES/$name-$round.summary.md" || true
    find $work/out -name manifest.json | while read -r m; do
      cp "$m" "$RES/$name-$round-$(basename "$(dirname "$m")").manifest.json"; done
  fi
}
for round in $(seq 1 ${CONFIG_ROUNDS:-4}); do
  for mode in $(in_turn $round plain trace); do
    run config $mode $round $work/h16.json $work/config-rocdl-*.mlir
  done
done
for round in $(seq 1 ${GEMM_ROUNDS:-3}); do
  for mode in $(in_turn $round plain trace); do
    run gemm $mode $round $work/h64.json $work/gemm.mlir
  done
done
[ "${SCALING:-1}" = 1 ] || exit 0
python3 bench/scaling.py --fly-tune $tune --rocm-toolkit $tk --work $work/sw \
  --out "$RES/scaling" --targets rocdl --workloads config --grid 16:16 --reps 3 \
  --budget-s 150 > /dev/null 2>&1 || true
