#!/usr/bin/env bash
# What bench/h200-keep ran on the 16-core node: two wheels side by side, the
# change's (.carry/fly.tar.zst, "new") and the one before it ("old":
# .carry/old.bsdiff; bench/node-carry.sh), on the four GEMMs of
# h200-cut/device-run.sh, plus whole compiles of the new one
# (FLY_ROCDL_CODEGEN_CUT=0) and the new one with --executor=process.
#   bench/h200-keep/device-run.sh OUT [PAIR_REPS [CONFIG_REPS [PROCESS]]]
# pairs: bench/env_pairs.py at P=16, N=16 and 64, PAIR_REPS repetitions
# (default 3); config: scaling.py's config-space workload, the three modes in
# turn, CONFIG_REPS times (default 2), the order reversed every other time.
# PROCESS=0 leaves the --executor=process mode out of the pairs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 pair_reps=${2:-3} config_reps=${3:-2} with_process=${4:-1}
mkdir -p "$out"
source "$repo/bench/node-carry.sh"
carry_unpack /tmp/fly
carry_patched /tmp/fly /tmp/fly-old old
new=/tmp/fly/fly_snapshot/bin/fly-tune old=/tmp/fly-old/fly_snapshot/bin/fly-tune
# The new wheel with one child process per shard of variants instead of
# threads: whether 16 processes beat 16 threads of one.
proc=/tmp/fly/fly-tune-process
printf '#!/bin/sh\nexec %s --executor=process "$@"\n' "$new" > "$proc"
chmod +x "$proc"
process=(--mode process: --tool "process=$proc")
[ "$with_process" = 0 ] && process=()
timeout 330 "$repo/bench/h200-cut/device-run.sh" pairs "$out/pairs" --N 16,64 \
  --reps "$pair_reps" --mode old: --tool "old=$old" "${process[@]}" \
  > "$out/pairs.log" 2>&1 || echo "pairs: rc $?"
for rep in $(seq "$config_reps"); do
  for mode in $(in_turn "$rep" whole old new); do
    tune=$new cut=1
    [ "$mode" = old ] && tune=$old
    [ "$mode" = whole ] && cut=0
    env FLY_ROCDL_CODEGEN_CUT=$cut timeout 100 python3 "$repo/bench/scaling.py" \
      --fly-tune "$tune" --rocm-toolkit /tmp/fly/fly_snapshot/rocm-toolkit \
      --targets rocdl --workloads config --P 16 --N 16 --reps 1 --budget-s 60 \
      --work /tmp/fly/config --out "$out/config-$mode-$rep" \
      > "$out/config-$mode-$rep.log" 2>&1 || echo "config $mode: rc $?"
  done
done
