#!/bin/bash
# bench/h200-cut/local-config-p2/run.sh: what made this folder (scaling.json of
# each run kept as <mode>-<rep>.json).
cd "$(dirname "$0")/../../.."
for rep in 1 2; do
  modes="whole cut"; [ $rep = 2 ] && modes="cut whole"
  for mode in $modes; do
    v=0; [ $mode = cut ] && v=1
    FLY_ROCDL_CODEGEN_CUT=$v python3 bench/scaling.py --fly-tune build/bin/fly-tune --rocm-toolkit build/rocm-toolkit --targets rocdl --workloads config --P 2 --N 16 --reps 1 --budget-s 300 --work /tmp/fly-config-p2 --out bench/h200-cut/local-config-p2/$mode-$rep > bench/h200-cut/local-config-p2/$mode-$rep.log 2>&1
  done
done
