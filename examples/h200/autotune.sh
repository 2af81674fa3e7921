#!/bin/bash
# On the H200 node: autotune a tiled matmul (4 tile shapes x 8 maxnreg
# values) from Python on torch tensors and compare (a) sequential full
# compiles, (b) 16-process full compiles, (c) fly-snapshot's streaming sweep.
# Needs fly_snapshot importable (PYTHONPATH=<unpacked wheel>; it carries
# libFlySnapshotCAPI.so and libFlyRuntimeCAPI.so), torch, and ptxas
# (/usr/local/cuda/bin). Writes autotune.json and autotune.md to $OUT.
#   PYTHONPATH=/path/to/site bash examples/h200/autotune.sh [--size 2048] [--modes a,b,c]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export OUT=${OUT:-$PWD/out}
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT"
python3 -c 'import fly_snapshot, sys; print("fly_snapshot", fly_snapshot.__version__, "from", fly_snapshot.__file__)'
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
python3 "$HERE/autotune.py" --out "$OUT" "$@" 2>&1 | tee "$OUT/autotune.log"
