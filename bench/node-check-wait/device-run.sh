#!/usr/bin/env bash
# What bench/node-check-wait runs on the 16-core node: the carried wheel as
# it is ("wait") and with FLY_ROCDL_AWAIT_CHECK=0 ("before": a variant that
# finds its target's check running compiles whole, the rule before 0832db8),
# alternating, on scaling.py's ROCDL GEMM at N = 64, P = 16 (with the
# config-space workload) and P = 8.
#   bench/node-check-wait/device-run.sh OUT [REPS (3)]
exec "$(dirname "$0")/../h200-env-run.sh" FLY_ROCDL_AWAIT_CHECK before wait \
  scaling "$1" "${2:-3}" gemm,config:16:64 gemm:8:64
