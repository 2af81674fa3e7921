#!/usr/bin/env bash
# Installs everything fly-snapshot needs on Debian 12, builds it, and runs the
# demo sweep on the bundled example. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
PACKAGES=(cmake ninja-build g++ python3 libgtest-dev
          python3-jsonschema           # test/Docs/check_manifests.py
          llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools lld-22
          liblld-22-dev                # in-process ld.lld (lib/Backend/AmdgpuLinker.cpp)
          rocm-device-libs
          python3-pytest python3-venv   # fly_snapshot tests (test/Python), pip install check
          python3-psutil               # lit's per-test timeout (test/lit.cfg.py)
          libamdhip64-dev              # fly-run's HIP backend (AMD GPUs)
          clang-22 libclang-rt-22-dev   # libFuzzer + ASan for scripts/fuzz.sh
          clang-format-22              # scripts/check-format.sh (CI)
          strace)                      # test/Tools/out-dir-no-exchange.test
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release -DFLY_SELF_CONTAINED=ON
ninja -C build

examples/demo.sh build
