#!/usr/bin/env bash
# The demo sweep: lowers the bundled register-heavy kernel for gfx942 once
# with stock mlir-opt + the fly-snapshot plugin, replays gpu-module-to-binary
# under 8 hint sets, and prints the variant table from manifest.json.
set -euo pipefail
BUILD="$(cd "${1:-build}" && pwd)"
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${2:-$BUILD/demo-sweep}"
TK="$BUILD/rocm-toolkit"
rm -rf "$OUT"
/usr/lib/llvm-22/bin/mlir-opt --load-pass-plugin="$BUILD/lib/FlySnapshotPlugin.so" \
  "$HERE/tile_matmul.mlir" -o "$OUT.final.mlir" --pass-pipeline="builtin.module(
    rocdl-attach-target{chip=gfx942 O=3},
    gpu.module(convert-scf-to-cf,convert-gpu-to-rocdl{chipset=gfx942}),
    reconcile-unrealized-casts,
    fly-snapshot{hints-file=$HERE/hints.json out-dir=$OUT
                 binary-pass=\"gpu-module-to-binary{format=fatbin toolkit=$TK}\"},
    gpu-module-to-binary{format=fatbin toolkit=$TK})"
python3 "$HERE/print_manifest.py" "$OUT/manifest.json"
echo
echo "The same sweep through fly-tune (prefix once, cached across runs):"
"$BUILD/bin/fly-tune" --out-dir="$BUILD/demo-fly-tune" --quiet
