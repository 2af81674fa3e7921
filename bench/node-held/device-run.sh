#!/usr/bin/env bash
# What bench/node-held ran on the 16-core node: the wheel of the change
# (.carry/fly.tar.zst) in three settings, side by side in every round
# (bench/env_pairs.py, the order rotating): `here` (the default,
# FLY_ROCDL_CONTINUE_ELSEWHERE=0), `elsewhere` (=1) and `whole`
# (FLY_ROCDL_CODEGEN_CUT=0: no code generation shared), each against naive
# parallel.
#   bench/node-held/device-run.sh OUT [CONFIG_REPS [GEMM_REPS]]
# config: the config-space sweep (4 GEMMs x 16 hint sets, one fly-tune) at
# P=16, CONFIG_REPS rounds (default 8); gemm: the ROCDL GEMM 128x256 u16 at
# P=16, N=64, GEMM_REPS rounds (default 3); traces: one --time-trace run of
# the config sweep per setting, summarised.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 config_reps=${2:-8} gemm_reps=${3:-3}
mkdir -p "$out"
source "$repo/bench/node-carry.sh"
carry_tools /tmp/fly "$out"
config_workload /tmp/fly
modes=(--mode here:FLY_ROCDL_CONTINUE_ELSEWHERE=0
  --mode elsewhere:FLY_ROCDL_CONTINUE_ELSEWHERE=1 --mode whole:FLY_ROCDL_CODEGEN_CUT=0)
pairs_config_and_gemm "$out" "$config_reps" "$gemm_reps" "${modes[@]}"
for mode in here:FLY_ROCDL_CONTINUE_ELSEWHERE=0 elsewhere:FLY_ROCDL_CONTINUE_ELSEWHERE=1; do
  name=${mode%%:*}
  rm -rf /tmp/fly/traced
  env "${mode#*:}" "$tune" "${config[@]}" --target=rocdl:gfx942 --toolkit="$toolkit" \
    --hints-file=/tmp/fly/h16.json --jobs=16 --no-cache --quiet --out-dir=/tmp/fly/traced \
    --time-trace="$out/config-$name.trace.json" > /dev/null || true
  python3 "$repo/bench/trace_summary.py" "$out/config-$name.trace.json" --tail 24 \
    > "$out/config-$name.summary.md" || true
  gzip -f "$out/config-$name.trace.json"
done
