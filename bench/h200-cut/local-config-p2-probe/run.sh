#!/bin/bash
# bench/h200-cut/local-config-p2-probe/run.sh OLD NEW: the config-space
# workload at P = 2 with three fly-tunes side by side, alternating: the
# wheel of NEW with FLY_ROCDL_CODEGEN_CUT=0 (whole), the wheel of OLD (its
# shared code generation compared the target's pressure limits only) and the
# wheel of NEW (both limit vectors, ranges widened by probes). OLD and NEW are
# extracted wheels (fly_snapshot/ folders); scaling.json of each run is kept
# as <mode>-<rep>.json.
set -euo pipefail
old=$1 new=$2
cd "$(dirname "$0")/../../.."
out=bench/h200-cut/local-config-p2-probe
for rep in 1 2; do
  modes="whole old new"; [ $rep = 2 ] && modes="new old whole"
  for mode in $modes; do
    tune=$new/bin/fly-tune v=1
    [ $mode = old ] && tune=$old/bin/fly-tune
    [ $mode = whole ] && v=0
    FLY_ROCDL_CODEGEN_CUT=$v python3 bench/scaling.py --fly-tune "$tune" \
      --rocm-toolkit "$new/rocm-toolkit" --targets rocdl --workloads config \
      --P 2 --N 16 --reps 1 --budget-s 300 --work /tmp/fly-config-p2-probe \
      --out $out/$mode-$rep > $out/$mode-$rep.log 2>&1
    mv $out/$mode-$rep/scaling.json $out/$mode-$rep.json
    rm -r "${out:?}/$mode-$rep"
  done
done
