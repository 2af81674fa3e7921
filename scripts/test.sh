#!/usr/bin/env bash
# Builds (if needed) and runs every test: lit (plugin, tools, C API, package)
# and the GoogleTest units, through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release
ninja -C build
ctest --test-dir build --output-on-failure
