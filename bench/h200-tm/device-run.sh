#!/usr/bin/env bash
# What bench/h200-tm ran on the H200 node: FLY_ROCDL_REUSE_TM=0 ("tm-off", a
# new TargetMachine per variant as before) against the default ("kept").
#   bench/h200-tm/device-run.sh pairs|config OUT [env_pairs.py options]
exec "$(dirname "$0")/../h200-env-run.sh" FLY_ROCDL_REUSE_TM tm-off kept "$@"
