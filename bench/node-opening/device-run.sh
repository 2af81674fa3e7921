#!/usr/bin/env bash
# What bench/node-opening ran on the 16-core node: continuing elsewhere as
# changed here, beside the carried wheel's (4c35037) own settings, side by
# side in every round (bench/env_pairs.py, the order rotating): `here`
# (FLY_ROCDL_CONTINUE_ELSEWHERE=0, the default), `elsewhere` (=1) and `whole`
# (FLY_ROCDL_CODEGEN_CUT=0), each against naive parallel; and with
# FLY_ROCDL_CONTINUE_ELSEWHERE=1, each build of the change whose bsdiff
# against the carried wheel's CAPI library is in .carry (NAME.bsdiff):
# `opening` (f41b135: ROCDL sweeps opened held back), `published` (252da6f:
# a maker checking on its own thread publishes the state first), `verdict`
# (683973d: the check offers its whole compile before the check from the cut).
#   bench/node-opening/device-run.sh OUT [CONFIG_REPS [GEMM_REPS]]
# config: the config-space sweep (4 GEMMs x 16 hint sets, one fly-tune) at
# P=16, CONFIG_REPS rounds (default 8); gemm: the ROCDL GEMM 128x256 u16 at
# P=16, N=64, GEMM_REPS rounds (default 3); traces: one --time-trace run of
# the config sweep for `elsewhere` and each build of the change, summarised;
# objects: those sweeps' objects against `whole`'s.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 config_reps=${2:-8} gemm_reps=${3:-3}
mkdir -p "$out"
source "$repo/bench/node-carry.sh"
carry_tools /tmp/fly "$out"
config_workload /tmp/fly
modes=(--mode here:FLY_ROCDL_CONTINUE_ELSEWHERE=0
  --mode elsewhere:FLY_ROCDL_CONTINUE_ELSEWHERE=1)
traced=(elsewhere)
for name in opening published verdict; do
  [ -f "$carry/$name.bsdiff" ] || continue
  carry_patched /tmp/fly "/tmp/fly-$name" "$name"
  sha256sum "/tmp/fly-$name/fly_snapshot/lib/libFlySnapshotCAPI.so" >> "$out/node.txt"
  modes+=(--mode "$name:FLY_ROCDL_CONTINUE_ELSEWHERE=1"
    --tool "$name=/tmp/fly-$name/fly_snapshot/bin/fly-tune")
  traced+=("$name")
done
modes+=(--mode whole:FLY_ROCDL_CODEGEN_CUT=0)
pairs_config_and_gemm "$out" "$config_reps" "$gemm_reps" "${modes[@]}"
# One config sweep with TOOL into DIR (--time-trace to $trace where set).
sweep() {
  local tool=$1 dir=$2
  shift 2
  rm -rf "$dir"
  env "$@" "$tool" "${config[@]}" --target=rocdl:gfx942 --toolkit="$toolkit" \
    --hints-file=/tmp/fly/h16.json --jobs=16 --no-cache --quiet --out-dir="$dir" \
    ${trace:+--time-trace="$trace"} > /dev/null || echo "sweep $dir: rc $?"
}
trace='' sweep "$tune" /tmp/fly/o-whole FLY_ROCDL_CODEGEN_CUT=0
for name in "${traced[@]}"; do
  tool=$tune
  [ "$name" != elsewhere ] && tool=/tmp/fly-$name/fly_snapshot/bin/fly-tune
  trace=$out/config-$name.trace.json sweep "$tool" "/tmp/fly/o-$name" \
    FLY_ROCDL_CONTINUE_ELSEWHERE=1
  python3 "$repo/bench/trace_summary.py" "$out/config-$name.trace.json" --tail 24 \
    > "$out/config-$name.summary.md" || true
  gzip -f "$out/config-$name.trace.json"
  echo "$name: $({ diff -r -q /tmp/fly/o-whole "/tmp/fly/o-$name" -x manifest.json \
    -x sweep.json -x .fly-outdir || true; } | wc -l) files differ from whole compiles," \
    "$(find "/tmp/fly/o-$name" -name '*.hsaco' | wc -l) objects" >> "$out/objects.txt"
done
