#!/usr/bin/env bash
# Builds (if needed) and runs every test: lit (plugin, tools, C API, package,
# Slurm) and the GoogleTest units, through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release -DFLY_SELF_CONTAINED=ON
ninja -C build
# The Slurm tests need a cluster: as root, a single-node one is started here
# (installing the packages on a fresh machine, ~20 s; start ~1 s) and stopped
# afterwards unless it was already up. Elsewhere they skip and say why.
if [ "$(id -u)" -eq 0 ] && [ -z "${FLY_TEST_SLURM_CONF:-}" ]; then
  if ! scripts/slurm-local.sh status >/dev/null 2>&1; then
    scripts/slurm-local.sh start
    trap 'scripts/slurm-local.sh stop' EXIT
  fi
fi
ctest --test-dir build --output-on-failure
