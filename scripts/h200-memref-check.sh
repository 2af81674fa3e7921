#!/usr/bin/env bash
# A kernel on dynamically shaped memrefs (test/Runtime/Inputs/scale_1d.mlir:
# y[i] = 2 x[i] + 1 over memref<?xf32>) compiled here for sm_90 and run on
# an NVIDIA GPU by fly-run from a spec that says "kind": "memref".
#
#   scripts/h200-memref-check.sh [BUILD_DIR]   here (needs fly-tune, fly-run,
#                                              ptxas): writes .device/memref/
#   scripts/h200-memref-check.sh --run [DIR]   there (repository root, DIR
#                                              carried, default .device/memref)
#
# .device/ is git-ignored; carry `.device/memref` (about 20 MiB: fly-run,
# the out-dir, two specs and the expected bytes). fly-run links no LLVM,
# MLIR or CUDA library, so nothing else is needed on the GPU machine. With
# $OUT set, check.log and the two JSON reports land there. Exit 0 only if
# every check passed: the driver's registers equal the manifest's, every
# variant's y equals the expected bytes and the other variants, a winner.
set -euo pipefail
cd "$(dirname "$0")/.."
N=4194304 # elements of x and y: 16 MiB each

if [ "${1:-}" != --run ]; then
  BUILD=${1:-build}
  D=.device/memref
  rm -rf "$D" && mkdir -p "$D"
  cp "$BUILD/bin/fly-run" "$D/"
  echo '[{}, {"maxnreg": 32}, {"maxnreg": 16}, {"O": 1}]' > "$D/hints.json"
  "$BUILD/bin/fly-tune" test/Runtime/Inputs/scale_1d.mlir --quiet --no-cache \
    --target=nvvm:sm_90 --hints-file="$D/hints.json" --out-dir="$D/o"
  python3 - "$D" "$N" <<'PY'
import json, struct, sys
d, n = sys.argv[1], int(sys.argv[2])
# x = iota, so y = 2 i + 1: exact in f32 for i < 2^23.
with open(f"{d}/y.expected", "wb") as f:
    f.write(struct.pack(f"<{n}f", *[2.0 * i + 1.0 for i in range(n)]))
args = [{"kind": "memref", "buffer": "X", "shape": [n]},
        {"kind": "memref", "buffer": "Y", "shape": [n]}]
timing = {"warmup": 3, "repetitions": 20, "min_time_ms": 50,
          "max_repetitions": 200}
spec = {"grid": [n // 256], "block": [256], "args": args, "timing": timing,
        "buffers": {"X": {"type": "f32", "size": n, "init": "iota"},
                    "Y": {"type": "f32", "size": n, "init": "constant:-7",
                          "output": True}},
        "reference": {"kind": "file", "buffer": "Y", "file": "y.expected"},
        "tolerance": {"rtol": 0, "atol": 0}}
json.dump(spec, open(f"{d}/scale.launch.json", "w"), indent=1)
# Without a reference: random x, every variant compared with the first.
spec["buffers"]["X"] = {"type": "f32", "size": n, "init": "random", "seed": 7}
del spec["reference"]
json.dump(spec, open(f"{d}/scale-noref.launch.json", "w"), indent=1)
PY
  du -sh "$D"
  echo "h200-memref-check: prepared $D; carry it and run there:" \
       "scripts/h200-memref-check.sh --run $D"
  exit 0
fi

D=${2:-.device/memref}
OUT=${OUT:-$D/result} # three files: check.log, scale.json, scale-noref.json
mkdir -p "$OUT"
exec > >(tee "$OUT/check.log") 2>&1
fail=0
check() { # what, then a command that must succeed
  local what=$1; shift
  if "$@"; then echo "PASS: $what"; else echo "FAIL: $what"; fail=1; fi
}
ldd "$D/fly-run" | tee "$D/ldd.txt"
check "fly-run links no LLVM, MLIR or CUDA library" \
  bash -c "! grep -Ei 'llvm|mlir|libcuda' '$D/ldd.txt'"
"$D/fly-run" --probe || true
for spec in scale scale-noref; do
  rc=0
  "$D/fly-run" "$D/o" "$D/$spec.launch.json" --retune \
    --best-config="$D/best-config.json" --json="$OUT/$spec.json" \
    > "$D/$spec.out" 2> "$D/$spec.err" || rc=$?
  cat "$D/$spec.out" "$D/$spec.err"
  check "$spec: exit status 0 (every variant passed)" test "$rc" = 0
  check "$spec: 10 parameters (two memref<?xf32> descriptors)" \
    grep -q "10 parameters" "$D/$spec.out"
  check "$spec: driver registers == manifest registers" \
    grep -q "registers: driver == manifest for every variant" "$D/$spec.out"
  check "$spec: a winner" grep -q "^winner: " "$D/$spec.out"
done
check "scale: outputs equal the expected bytes ($N entries) and each other" \
  grep -q "outputs: every passing variant matches .* and the host reference ($N entries)" \
  "$D/scale.out"
check "scale-noref: outputs agree between variants" \
  grep -q "outputs: every passing variant matches" "$D/scale-noref.out"
[ "$fail" = 0 ] && echo "h200-memref-check: all checks passed" ||
  echo "h200-memref-check: FAILED"
exit "$fail"
