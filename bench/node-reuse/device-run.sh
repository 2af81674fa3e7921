#!/usr/bin/env bash
# FLY_ROCDL_REUSE_OBJECTS on the node: the config sweep (4 ROCDL GEMMs x 16
# hint sets, one fly-tune, P = 16) and the GEMM 128x256 u16 at N = 64, naive
# parallel and the build of .carry/reuse.bsdiff with the switch on (`reuse`)
# and off (`assemble`), REPS rounds each in a rotating order, into OUT.
#   bench/node-reuse/device-run.sh OUT [CONFIG_REPS [GEMM_REPS]]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 config_reps=${2:-10} gemm_reps=${3:-4}
mkdir -p "$out"
source "$repo/bench/node-carry.sh"
carry_tools /tmp/fly "$out"
carry_patched /tmp/fly /tmp/fly-reuse reuse
carry_describe /tmp/fly-reuse > "$out/node.txt"
tune=/tmp/fly-reuse/fly_snapshot/bin/fly-tune
config_workload /tmp/fly
modes=(--mode reuse: --mode assemble:FLY_ROCDL_REUSE_OBJECTS=0)
pairs_config "$out" 280 "$config_reps" "${modes[@]}"
[ "$gemm_reps" -gt 0 ] && pairs_gemm "$out" 200 64 16 "$gemm_reps" "${modes[@]}"
true
