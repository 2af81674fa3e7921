#!/bin/sh
# The self-contained wheel where the kernels run: an H200 node with the
# image's Python (torch, triton, cupy), CUDA's ptxas, and no LLVM.
#
#   build machine, repository root (after -DFLY_SELF_CONTAINED=ON and ninja):
#     examples/h200/wheel-sweep.sh prepare   # .carry/: the wheel and fly-run (< 60 MiB)
#     examples/h200/wheel-sweep.sh check     # the sweep without a GPU (no torch/triton)
#   GPU node (carry .carry), repository root:
#     examples/h200/wheel-sweep.sh run       # results in $OUT (6 files)
#
# run: installs the wheel offline into /tmp/fly-site (pip --no-index
# --target, or unzipped if that Python has no pip), then one Python process
# imports torch, triton and fly_snapshot, runs a Triton kernel, sweeps 64
# NVVM hint sets of examples/tile_matmul_grid.mlir (4096^3 f32 matmul) with
# jobs=16 - once with the process executor (the wheel's fly-tune), once with
# threads - loads every variant with CuPy, checks it against torch.matmul and
# times it, runs the Triton kernel again; fly-run then checks and times the
# written out-dir on its own. wheel_sweep.py says what each figure is.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
prepare)
  rm -rf .carry && mkdir -p .carry
  cp build/dist/fly_snapshot-*-py3-none-manylinux_*_x86_64.whl .carry/
  cp build/bin/fly-run .carry/
  ls -l .carry
  bytes=$(cat .carry/* | wc -c)
  echo "payload: $bytes bytes"
  [ "$bytes" -lt $((60 * 1024 * 1024)) ] || { echo "FAIL: payload over 60 MiB"; exit 1; }
  ;;
check | run)
  python=${PYTHON:-}
  [ -n "$python" ] || for p in /opt/torch/.venv/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1; then python=$p; break; fi
  done
  out=${OUT:-/tmp/wheel-sweep}
  site=/tmp/fly-site
  mkdir -p "$out"
  rm -rf "$site"
  wheel=$(ls .carry/fly_snapshot-*.whl)
  if "$python" -m pip --version >/dev/null 2>&1; then
    "$python" -m pip install --no-index --no-deps --target "$site" "$wheel" > "$out/install.log" 2>&1
  else
    "$python" "$here/wheel_sweep.py" install "$wheel" "$site" > "$out/install.log" 2>&1
  fi
  tail -1 "$out/install.log"
  if [ "$1" = check ]; then
    PYTHONPATH=$site "$python" "$here/wheel_sweep.py" sweep --compile-only \
      --out-dir /tmp/wheel-sweep-variants --results "$out"
  else
    status=0
    PYTHONPATH=$site "$python" "$here/wheel_sweep.py" sweep --fly-run .carry/fly-run \
      --out-dir /tmp/wheel-sweep-variants --results "$out" 2> "$out/sweep.stderr.txt" || status=$?
    tail -n 20 "$out/sweep.stderr.txt"
    exit $status
  fi
  ;;
*)
  echo "usage: $0 prepare|check|run" >&2
  exit 2
  ;;
esac
