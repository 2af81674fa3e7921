#!/bin/sh
# A module with two NVVM targets (sm_80, sm_90) on an H200: every variant has
# one cubin per target, and fly-run must load the one whose chip matches the
# device (sm_90, compute capability 9.0), not the first, and say which.
#
#   build machine (LLVM, ptxas), repository root:
#     examples/multitarget-h200.sh prepare   # writes .device/fly-run, .device/dual
#   GPU machine (carry .device), repository root:
#     examples/multitarget-h200.sh run       # runs fly-run and checks its pick
#
# test/Runtime/multi-target-device.test checks the same where one machine
# has both (lit feature cuda-device).
set -eu
case "${1:-}" in
prepare)
  mkdir -p .device
  cp build/bin/fly-run .device/
  rm -rf .device/dual
  build/bin/fly-tune test/Runtime/Inputs/small_matmul_grid_sm80_sm90.mlir \
    --quiet --no-cache --target=nvvm:sm_90 --hints='maxnreg=64;' \
    --out-dir=.device/dual
  ls .device/dual
  ;;
run)
  out="${OUT:-/tmp}/multitarget-h200.txt"
  status=0
  .device/fly-run .device/dual test/Runtime/Inputs/small.launch.json \
    > "$out" 2>&1 || status=$?
  cat "$out"
  [ "$status" -eq 0 ] || { echo "FAIL: fly-run exited $status"; exit 1; }
  for id in v0_maxnreg_64 v1_default; do
    grep -q "$id: loading $id.kernels.sm_90.cubin (sm_90 matches the device" \
      "$out" || { echo "FAIL: $id: no 'loading ... sm_90.cubin' line"; exit 1; }
  done
  if grep -q 'loading [^ ]*\.sm_80\.cubin' "$out"; then
    echo "FAIL: an sm_80 cubin was loaded on the sm_90 device"
    exit 1
  fi
  echo "PASS: every variant loaded its sm_90 cubin"
  ;;
*)
  echo "usage: $0 prepare|run" >&2
  exit 2
  ;;
esac
