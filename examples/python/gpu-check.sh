#!/usr/bin/env bash
# The GPU half of examples/python/autotune.py, for a machine with a GPU but no
# LLVM (fly-run links none; fly_snapshot reads an out-dir without its
# library). Two steps:
#
#   examples/python/gpu-check.sh prepare   # here: compile the sweep into build/autotune-<family>
#   examples/python/gpu-check.sh run       # on the GPU machine, with build/bin/fly-run and
#                                          # build/autotune-<family> carried over
#
# FAMILY=nvvm (default, CHIP=sm_90: an H200) or FAMILY=rocdl (CHIP=gfx942).
# `run` prints the measured medians and the winner; exit 0 also when the
# machine has no device (fly-run's 77 is reported as "no GPU").
set -euo pipefail
cd "$(dirname "$0")/../.."
FAMILY=${FAMILY:-nvvm}
CHIP=${CHIP:-$([ "$FAMILY" = nvvm ] && echo sm_90 || echo gfx942)}
DIR=build/autotune-$FAMILY
case "${1:-}" in
  prepare)
    rm -rf "$DIR"
    python3 examples/python/autotune.py --target "$FAMILY:$CHIP" --compile-only \
      --allow-spills --out-dir "$DIR" ;;
  run)
    python3 examples/python/autotune.py --from-out-dir "$DIR" --allow-spills --top 6 \
      --launch-spec examples/tile_matmul.launch.json --fly-run build/bin/fly-run ;;
  *) echo "usage: $0 prepare|run" >&2; exit 1 ;;
esac
