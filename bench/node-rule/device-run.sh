#!/usr/bin/env bash
# Where sharing ROCDL code generation pays at P=16 (issue #22): the GEMM
# 128x256 u16 at several N, naive parallel beside the carried wheel (4c35037)
# as `here` (a state kept wherever more variants are to start than states
# exist) and `whole` (FLY_ROCDL_CODEGEN_CUT=0), and the build of the rule
# (.carry/rule.bsdiff against the carried CAPI library) as `rK` for each K of
# KS (FLY_ROCDL_CODEGEN_CUT_ROUNDS=K: code generation shared only in a sweep
# of at least K rounds of the pool), side by side in every round
# (bench/env_pairs.py, the order rotating). The node runs in this directory
# ran it at f4419f6, whose build took FLY_ROCDL_KEEP_LEFT_PER_THREAD=K (`kK`).
#   bench/node-rule/device-run.sh OUT [REPS [NS [KS [P]]]]
# REPS rounds (default 2) at each N of NS (default 64,256,16) and P (default
# 16) into OUT/gemm; KS default "2 3 5"; the pairs stop after LIMIT seconds
# (default 520), keeping the rows done. CONFIG_REPS rounds (default 0) of the
# config sweep (4 x 16, one sweep) first, into OUT/config, under the same modes.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 reps=${2:-2} ns=${3:-64,256,16} ks=${4:-2 3 5} p=${5:-16}
mkdir -p "$out"
source "$repo/bench/node-carry.sh"
carry_tools /tmp/fly "$out"
modes=(--mode here: --mode whole:FLY_ROCDL_CODEGEN_CUT=0)
if [ -f "$carry/rule.bsdiff" ]; then
  carry_patched /tmp/fly /tmp/fly-rule rule
  sha256sum /tmp/fly-rule/fly_snapshot/lib/libFlySnapshotCAPI.so >> "$out/node.txt"
  for k in $ks; do
    modes+=(--mode "r$k:FLY_ROCDL_CODEGEN_CUT_ROUNDS=$k"
      --tool "r$k=/tmp/fly-rule/fly_snapshot/bin/fly-tune")
  done
fi
if [ "${CONFIG_REPS:-0}" -gt 0 ]; then
  config_workload /tmp/fly
  pairs_config "$out" 250 "$CONFIG_REPS" "${modes[@]}"
fi
pairs_gemm "$out" "${LIMIT:-520}" "$ns" "$p" "$reps" "${modes[@]}"
