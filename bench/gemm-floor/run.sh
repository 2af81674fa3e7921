#!/usr/bin/env bash
# The least code generation any exact sharing of pass results could leave on
# the GEMM 128x256 u16 (issue #22, item 5): bench/rocdl_passes.py's shared
# prefix and floor over the first N hint sets of the GEMM pairs
# (scaling.hint_sets('rocdl', N), those of bench/node-rule), each hint set's
# code generation printed after every pass and timed (-time-passes, REPS
# runs) by fly-rocdl-stages --pass-report.
#   bench/gemm-floor/run.sh BUILD OUT [N [REPS]]
# BUILD: the build folder (bin/fly-opt, bin/fly-rocdl-stages, rocm-toolkit);
# OUT/floor.json, OUT/passes.json (per hint set: CPU ms before the cut and
# the register allocators, and of the passes from the cut on) and
# OUT/hints.json. The dumps (about 75 MB a hint set) are in a temporary
# folder, deleted at the end. With MIR_CUTS="PASS ...", also
# fly-rocdl-stages --mir-cut=PASS on the first MIR_CUT_N hint sets (default
# 2; OUT/mir-cut-PASS.json): whether code generation stopped before PASS and
# continued gives the plain compile's ISA.
set -euo pipefail
bench=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd) out=$2 n=${3:-16} reps=${4:-1}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$bench/gen_gemm.py" --target rocdl --tiles 128x256 --unroll 16 -o "$work/gemm.mlir"
prefix=$(python3 -c "import sys; sys.path.insert(0, '$bench')
import rocdl_share; print(rocdl_share.PREFIX)")
"$build/bin/fly-opt" "$work/gemm.mlir" --pass-pipeline="$prefix" -o "$work/pre.mlir"
python3 -c "import sys, json; sys.path.insert(0, '$bench')
from scaling import hint_sets
json.dump(hint_sets('rocdl', $n), open('$out/hints.json', 'w'))"
rocdl_stages=("$build/bin/fly-rocdl-stages" --input="$work/pre.mlir"
  --hints-file="$out/hints.json" --toolkit="$build/rocm-toolkit")
stages=("${rocdl_stages[@]}" --json=/dev/null --pass-report="$work/p" --n="$n")
mkdir "$work/p"
for ((i = 0; i < n; i++)); do
  "${stages[@]}" --hint-index=$i > /dev/null
  for ((r = 0; r < reps; r++)); do "${stages[@]}" --hint-index=$i --timed > /dev/null; done
done
python3 "$bench/rocdl_passes.py" "$work/p" gemm_kernels "$out/hints.json" > "$out/floor.json"
python3 - "$work/p" "$n" > "$out/passes.json" <<PY
import json, statistics, sys
sys.path.insert(0, "$bench")
import rocdl_passes
folder, n = sys.argv[1], int(sys.argv[2])
# Per hint set: CPU ms before the shipped cut, before the first register
# allocator (SGPRs) and before the third (VGPRs and AGPRs), and of the
# passes from the shipped cut on (a pass with the analyses run for it).
POINTS = {"cut": "AMDGPU Prepare AGPR Alloc", "sgpr_ra": "Greedy Register Allocator",
          "vgpr_ra": "Greedy Register Allocator #3"}
rows = []
for i in range(n):
    segs = rocdl_passes.load(f"{folder}/gemm_kernels.{i}")["segments"]
    at = {name: next(k for k, s in enumerate(segs) if s["pass"] == p)
          for name, p in POINTS.items()}
    after = {s["pass"]: 1e3 * s["s"] for s in segs[at["cut"]:]}
    row = {"total_ms": round(1e3 * sum(s["s"] for s in segs), 1)}
    for name, k in at.items():
        row["before_%s_ms" % name] = round(1e3 * sum(s["s"] for s in segs[:k]), 1)
    row["after_cut_top"] = {k: round(v, 1) for k, v in
                            sorted(after.items(), key=lambda kv: -kv[1])[:6]}
    rows.append(row)
json.dump(rows, sys.stdout, indent=1)
PY
for pass in ${MIR_CUTS:-}; do
  "${rocdl_stages[@]}" --n="${MIR_CUT_N:-2}" --mir-cut="$pass" --json="$out/mir-cut-$pass.json" > /dev/null
done
cat "$out/floor.json"
