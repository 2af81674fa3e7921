#!/usr/bin/env bash
# What bench/h200-cut ran on the H200 node: FLY_ROCDL_CODEGEN_CUT=0
# ("whole": every variant's code generation whole) against the default
# ("cut": shared code generation, RocdlSharedCodegen.h).
#   bench/h200-cut/device-run.sh pairs|config|verify OUT [env_pairs.py options]
exec "$(dirname "$0")/../h200-env-run.sh" FLY_ROCDL_CODEGEN_CUT whole cut "$@"
