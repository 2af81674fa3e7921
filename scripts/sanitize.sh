#!/usr/bin/env bash
# Builds fly with sanitizers in its own build directory and runs the tests
# that way:
#
#   scripts/sanitize.sh [asan|tsan]      (default asan)
#
#   asan: FLY_SANITIZE="address;undefined" in build-asan (ASan + LSan + UBSan,
#         any UBSan report is fatal)
#   tsan: FLY_SANITIZE=thread in build-tsan
#
# Only fly's code is instrumented (cmake/Sanitizers.cmake); Debian's
# libLLVM.so / libMLIR.so are not, so errors inside them go unseen (and, for
# TSan, synchronisation done only through their atomics is invisible; see
# TSAN_OPTIONS below; fuzz/tsan.supp is used if present). Steps:
#   units     the GoogleTest units (FlySnapshotUnitTests)
#   own       lit tests that run fly's own executables: test/Tools (fly-tune,
#             fly-opt) and test/CAPI/capi.test (a C program on the C API);
#             tests that crash a backend on purpose without leak checking
#             (see RECOVERS_CRASHES below)
#   hosted    lit tests whose process is not ours: test/Plugin and the
#             test/Tools files that use %fly_plugin (Debian's mlir-opt loading
#             FlySnapshotPlugin.so), test/CAPI/ctypes.test (python3 loading
#             libFlySnapshotCAPI.so). An instrumented .so in
#             an uninstrumented program needs the sanitizer runtime loaded
#             first, so these run with LD_PRELOAD=<the compiler's runtime>;
#             leak checking is off there (it would check the host program's
#             own allocations, e.g. python's). tsan: bash and
#             python3 crash with gcc's libtsan preloaded, so instead of lit
#             this runs mlir-opt + plugin directly (4 hint sets,
#             jobs=4, multi-kernel module, snapshot-file).
#   replay    fly-tune replaying 4 hint sets, 4 at a time, on a module with 4
#             kernels in 2 gpu.modules, without and with the disk cache
#             (the parallel replay path; the point of the tsan mode).
# Not run: test/Package (installs the instrumented static library and builds
# an out-of-tree consumer without sanitizer flags, which cannot link it).
#
# Environment: CXX/CC (default g++/gcc, the tested setup),
# FLY_SANITIZE_BUILD_DIR, FLY_SANITIZE_JOBS (ninja -j), FLY_SANITIZE_STEPS
# (default "units own hosted replay").
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

MODE=${1:-asan}
case "$MODE" in
  asan) SAN="address;undefined"; DEFAULT_DIR=build-asan ;;
  tsan) SAN="thread"; DEFAULT_DIR=build-tsan ;;
  *) echo "usage: $0 [asan|tsan]" >&2; exit 2 ;;
esac
DIR=${FLY_SANITIZE_BUILD_DIR:-$DEFAULT_DIR}
export CXX=${CXX:-g++} CC=${CC:-gcc}
read -r -a STEPS <<< "${FLY_SANITIZE_STEPS:-units own hosted replay}"

# The runtime to preload into uninstrumented hosts.
if "$CXX" --version | grep -q clang; then
  [ "$MODE" = asan ] && rtname=libclang_rt.asan-x86_64.so || rtname=libclang_rt.tsan-x86_64.so
else
  [ "$MODE" = asan ] && rtname=libasan.so || rtname=libtsan.so
fi
RUNTIME=$(readlink -f "$("$CXX" -print-file-name="$rtname")")
if [ ! -f "$RUNTIME" ]; then
  echo "sanitize.sh: $CXX has no $rtname (install its sanitizer runtime)" >&2
  exit 2
fi

if [ ! -f "$DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_C_COMPILER="$CC" \
    -DFLY_SANITIZE="$SAN" -DFLY_BUILD_BENCH=OFF || exit 1
fi
ninja -C "$DIR" ${FLY_SANITIZE_JOBS:+-j "$FLY_SANITIZE_JOBS"} || exit 1

SUPP=""
[ -f "$ROOT/fuzz/tsan.supp" ] && SUPP=$ROOT/fuzz/tsan.supp
# Reports go to files (log_path), not stderr: a test that expects a failure
# (`not ...`) or sends stderr to a file would otherwise hide them. Every
# step fails if it left a report there.
SANLOG=$ROOT/$DIR/sanitizer-logs
rm -rf "$SANLOG" && mkdir -p "$SANLOG"
# use_sigaltstack=0: LLVM's signal handlers (CrashRecoveryContext::Enable, which
# crash isolation and the in-process lld call, possibly on a worker thread)
# replace a thread's alternate signal stack with a larger malloc'd one; ASan
# would then unmap that buffer as its own when the thread exits and abort
# ("failed to deallocate ... unable to unmap"). Only one of them may own it.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=1:strict_init_order=1:check_initialization_order=1:use_sigaltstack=0:log_path=$SANLOG/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$SANLOG/ubsan"
# ignore_noninstrumented_modules=1: memory accesses that TSan's interceptors
# (free, operator delete, memcpy, ...) make on behalf of the uninstrumented
# libMLIR/libLLVM are not checked; their synchronisation still counts.
# Without it, every parallel replay reports ~20 races on the std::future
# shared states of llvm::ThreadPool tasks: the states are released through
# shared_ptr reference counts decremented inside libMLIR.so, atomics TSan
# cannot see, so the final delete looks unsynchronised with the worker that
# completed the task. Cost: a race between fly code and a free done inside
# those libraries goes unreported.
export TSAN_OPTIONS="halt_on_error=0:exitcode=66:second_deadlock_stack=1:ignore_noninstrumented_modules=1:log_path=$SANLOG/tsan${SUPP:+:suppressions=$SUPP}"
# Tests that recover from a backend crash (RECOVERS_CRASHES below) leave the
# SIGABRT handler with longjmp, so TSan believes everything after it runs
# inside a signal handler ("signal-unsafe call inside of a signal" on every
# allocation), and ignore_noninstrumented_modules trips a TSan CHECK
# (tsan_rtl.cpp:690, ignore count) when the jump leaves an interceptor.
TSAN_CRASH_OPTIONS="${TSAN_OPTIONS/ignore_noninstrumented_modules=1/ignore_noninstrumented_modules=0}:report_signal_unsafe=0"
export FLY_CACHE_DIR=$ROOT/$DIR/sanitize-cache
LIT=$(command -v lit || echo /usr/lib/llvm-22/bin/lit)
[ -x "$LIT" ] || LIT=/usr/lib/llvm-22/bin/lit

# test/Tools tests that also load the plugin into mlir-opt are "hosted".
# Tests that crash a backend compile on purpose run without leak checking:
# llvm::CrashRecoveryContext recovers by jumping out of the crashed compile,
# which leaks everything that compile had allocated (by design; every leak
# LSan reports there is under CrashRecoveryContext::RunSafely).
RECOVERS_CRASHES=(test/Tools/fly-tune-crash.test)
OWN_TESTS=("$DIR/test/CAPI/capi.test")
CRASH_TESTS=()
HOSTED_TESTS=("$DIR/test/Plugin" "$DIR/test/CAPI/ctypes.test")
for t in test/Tools/*.test; do
  if grep -q '%fly_plugin' "$t"; then HOSTED_TESTS+=("$DIR/$t")
  elif [[ " ${RECOVERS_CRASHES[*]} " == *" $t "* ]]; then CRASH_TESTS+=("$DIR/$t")
  else OWN_TESTS+=("$DIR/$t"); fi
done

declare -A RESULT
# A module with four kernels in two gpu.modules: the bundled kernel, two
# renamed copies beside it, and a copy of the whole gpu.module.
make_multi_kernel_module() {
  python3 - "$ROOT/examples/tile_matmul.mlir" "$1" <<'PY'
import sys
src = open(sys.argv[1]).read()
start = src.index("    gpu.func @tile_matmul")
end = src.index("    }\n", src.index("gpu.return", start)) + len("    }\n")
func = src[start:end]
copies = "".join(func.replace("@tile_matmul", "@tile_matmul_" + s) for s in "bc")
module = "  gpu.module @kernels_2 {\n" + func + "  }\n"
out = src[:end] + copies + src[end:]
close = out.rindex("}")
open(sys.argv[2], "w").write(out[:close] + module + out[close:])
PY
}
HINTS='waves_per_eu=1;waves_per_eu=4;maxnreg=64;O=1'
CUDA_TOOLKIT=${FLY_CUDA_TOOLKIT:-/usr/local/cuda}

run_step() {
  local step=$1 tmp rc
  echo "=== sanitize.sh $MODE: $step"
  case "$step" in
    units)
      "$DIR/bin/FlySnapshotUnitTests" ;;
    own)
      "$LIT" -sv "${OWN_TESTS[@]}" || return 1
      [ ${#CRASH_TESTS[@]} -eq 0 ] ||
        ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" TSAN_OPTIONS="$TSAN_CRASH_OPTIONS" \
          "$LIT" -sv "${CRASH_TESTS[@]}" ;;
    hosted)
      if [ "$MODE" = asan ]; then
        env LD_PRELOAD="$RUNTIME" ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
          "$LIT" -sv "${HOSTED_TESTS[@]}"
        return
      fi
      # gcc's libtsan preloaded into bash or python3 makes them SEGV at
      # start, so lit (whose tests run through bash) cannot host it: run the
      # plugin in mlir-opt directly, replaying 4 hint sets 4 at a time.
      # (test/Plugin and test/CAPI/ctypes.test are not run under TSan.)
      tmp=$(mktemp -d "${TMPDIR:-/tmp}/fly-sanitize.XXXXXX")
      make_multi_kernel_module "$tmp/multi.mlir"
      env LD_PRELOAD="$RUNTIME" /usr/lib/llvm-22/bin/mlir-opt \
        --load-pass-plugin="$DIR/lib/FlySnapshotPlugin.so" "$tmp/multi.mlir" \
        -o "$tmp/out.mlir" --pass-pipeline="builtin.module(rocdl-attach-target{chip=gfx942 O=3},gpu.module(convert-scf-to-cf,convert-gpu-to-rocdl{chipset=gfx942}),reconcile-unrealized-casts,fly-snapshot{hints=\"$HINTS\" out-dir=$tmp/sweep jobs=4 snapshot-file=$tmp/snap.mlirbc binary-pass=\"gpu-module-to-binary{toolkit=$ROOT/$DIR/rocm-toolkit}\"},gpu-module-to-binary{toolkit=$ROOT/$DIR/rocm-toolkit})"
      rc=$?
      [ $rc -ne 0 ] || ls "$tmp/sweep/manifest.json" > /dev/null || rc=1
      rm -rf "$tmp"
      return $rc ;;
    replay)
      tmp=$(mktemp -d "${TMPDIR:-/tmp}/fly-sanitize.XXXXXX")
      make_multi_kernel_module "$tmp/multi.mlir"
      "$DIR/bin/fly-tune" "$tmp/multi.mlir" --hints="$HINTS" --jobs=4 \
          --no-cache --out-dir="$tmp/nocache" &&
        FLY_CACHE_DIR=$tmp/cache "$DIR/bin/fly-tune" "$tmp/multi.mlir" \
          --hints="$HINTS" --jobs=4 --out-dir="$tmp/cold" &&
        FLY_CACHE_DIR=$tmp/cache "$DIR/bin/fly-tune" "$tmp/multi.mlir" \
          --hints="$HINTS" --jobs=4 --out-dir="$tmp/warm" &&
        # NVVM: shared PTX compiles, then ptxas per variant, 4 at a time.
        { [ ! -x "$CUDA_TOOLKIT/bin/ptxas" ] ||
          "$DIR/bin/fly-tune" "$tmp/multi.mlir" --target=nvvm:sm_90 \
            --hints="maxnreg=32;maxnreg=64;;O=1;maxnreg=96" --jobs=4 \
            --no-cache --out-dir="$tmp/nvvm"; }
      rc=$?
      rm -rf "$tmp"
      return $rc ;;
    *) echo "unknown step $step" >&2; return 2 ;;
  esac
}

status=0
for step in "${STEPS[@]}"; do
  if run_step "$step"; then RESULT[$step]=ok; else RESULT[$step]=FAILED; status=1; fi
  reports=("$SANLOG"/*.*)
  if [ -e "${reports[0]}" ]; then
    mkdir -p "$SANLOG/$step"
    mv "${reports[@]}" "$SANLOG/$step/"
    RESULT[$step]="${RESULT[$step]}, ${#reports[@]} sanitizer report(s) in $SANLOG/$step"
    status=1
    for r in "$SANLOG/$step"/*; do echo "--- $r"; head -n 40 "$r"; done
  fi
done
echo "=== sanitize.sh $MODE ($CXX, -fsanitize=${SAN//;/,}, runtime $RUNTIME):"
for step in "${STEPS[@]}"; do echo "  $step: ${RESULT[$step]}"; done
echo "  skipped: test/Package (consumer build cannot link an instrumented library)"
exit $status
