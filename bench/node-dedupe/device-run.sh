#!/usr/bin/env bash
# What bench/node-dedupe runs on the 16-core node: the carried wheel as it
# is ("dedupe": a ROCDL hint set that differs from an earlier one only in
# waves_per_eu=1 copies its objects) and with FLY_DEDUPE_DEFAULTS=0
# ("exact": it compiles), alternating, on scaling.py's ROCDL GEMM at N = 64,
# P = 16 and P = 8 (31 of the grid's 64 hint sets add waves_per_eu=1).
#   bench/node-dedupe/device-run.sh OUT [REPS (3)]
exec "$(dirname "$0")/../h200-env-run.sh" FLY_DEDUPE_DEFAULTS exact dedupe \
  scaling "$1" "${2:-3}" gemm:16:64 gemm:8:64
