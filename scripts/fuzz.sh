#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang + libFuzzer + ASan/UBSan) in
# build-fuzz and runs each for a share of the time budget, starting from a
# scratch copy of its seed corpus in fuzz/corpus/<target>/ (the repository
# copy is never modified), with fuzz/<target>.dict where there is one.
#
#   scripts/fuzz.sh [SECONDS]   total budget, split evenly (default 60)
#
# Targets run in libFuzzer's fork mode, so a crash does not end the run:
# every crash, OOM, leak or timeout is kept as an artifact, re-run alone and
# classified by fuzz/classify_crash.py: "fly" (the innermost non-runtime
# frame is fly's code), "upstream" (Debian's libMLIR/libLLVM, e.g. the MLIR
# bytecode reader trusting a corrupt count; stock mlir-opt fails the same
# way on those inputs), "rss-oom" (RSS limit, no culprit named) or
# "unreproduced". Exit status 1 if any "fly" one was found; the others are
# listed as warnings (failures too with FLY_FUZZ_STRICT=1, which also turns
# HintSetFuzzer's known round-trip issues into failures).
#
# Environment: FLY_FUZZ_BUILD_DIR (build-fuzz), FLY_FUZZ_CXX / FLY_FUZZ_CC
# (clang++-22 / clang-22), FLY_FUZZ_TARGETS (all five), FLY_FUZZ_OUT (keep
# corpora, logs and artifacts there instead of a temporary directory),
# FLY_FUZZ_JOBS (parallel targets, default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

TOTAL=${1:-60}
BUILD=${FLY_FUZZ_BUILD_DIR:-build-fuzz}
CXX=${FLY_FUZZ_CXX:-clang++-22}
CC=${FLY_FUZZ_CC:-clang-22}
read -r -a TARGETS <<< "${FLY_FUZZ_TARGETS:-HintSetFuzzer CacheEntryFuzzer SnapshotFuzzer LaunchSpecFuzzer SweepManifestFuzzer}"
JOBS=${FLY_FUZZ_JOBS:-1}

if ! command -v "$CXX" > /dev/null; then
  echo "fuzz.sh: $CXX not found; install clang-22 and libclang-rt-22-dev" \
       "(scripts/setup.sh does)" >&2
  exit 2
fi

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_C_COMPILER="$CC" \
    -DFLY_BUILD_FUZZERS=ON -DFLY_BUILD_TESTS=OFF -DFLY_BUILD_BENCH=OFF > /dev/null
fi
ninja -C "$BUILD" fly-fuzzers

if [ -n "${FLY_FUZZ_OUT:-}" ]; then
  OUT=$FLY_FUZZ_OUT
  mkdir -p "$OUT"
else
  OUT=$(mktemp -d "${TMPDIR:-/tmp}/fly-fuzz.XXXXXX")
  trap 'rm -rf "$OUT"' EXIT
fi

PER=$(( TOTAL * JOBS / ${#TARGETS[@]} ))
[ "$PER" -ge 1 ] || PER=1
# Per-input limit: small, well under the share, so one slow input cannot use
# the whole budget.
UNIT_TIMEOUT=$(( PER < 50 ? 10 : 25 ))

run_target() {
  local t=$1 dir=$OUT/$1
  rm -rf "$dir/corpus" "$dir/artifacts"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp "$ROOT/fuzz/corpus/$t/"* "$dir/corpus/"
  # -fork=1: crashes, OOMs and timeouts are recorded and fuzzing goes on.
  # The RSS limit stays at libFuzzer's 2 GiB; leaks are reported (LSan).
  local dict=()
  [ -f "$ROOT/fuzz/$t.dict" ] && dict=(-dict="$ROOT/fuzz/$t.dict")
  (cd "$dir" && "$ROOT/$BUILD/fuzz/$t" corpus "${dict[@]}" -fork=1 -ignore_crashes=1 \
     -ignore_ooms=1 -ignore_timeouts=1 -timeout=$UNIT_TIMEOUT \
     -max_total_time="$PER" -artifact_prefix=artifacts/ \
     -print_final_stats=1 > log 2>&1) || true
}

echo "fuzz.sh: ${#TARGETS[@]} targets, ${PER}s each, ${JOBS} at a time; output in $OUT"
running=0
for t in "${TARGETS[@]}"; do
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then wait -n || true; running=$((running - 1)); fi
done
wait

status=0
printf '%-18s %12s %8s %8s %8s  %s\n' target execs cov ft corpus "crashes fly/other"
for t in "${TARGETS[@]}"; do
  dir=$OUT/$t
  # The last status line of fork mode: "#N: cov: C ft: F corp: K ...".
  last=$(grep -E '^#[0-9]+: cov:' "$dir/log" | tail -n 1 || true)
  execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<< "$last")
  cov=$(sed -E 's/.* cov: ([0-9]+).*/\1/' <<< "$last")
  ft=$(sed -E 's/.* ft: ([0-9]+).*/\1/' <<< "$last")
  corp=$(sed -E 's/.* corp: ([0-9]+).*/\1/' <<< "$last")
  fly=0 other=0
  for a in "$dir"/artifacts/*; do
    [ -e "$a" ] || continue
    case "$a" in *.report) continue ;; esac
    report=$a.report
    "$ROOT/$BUILD/fuzz/$t" -timeout=$UNIT_TIMEOUT -runs=1 "$a" > "$report" 2>&1 || true
    kind=$(python3 "$ROOT/fuzz/classify_crash.py" "$report")
    if [ "$kind" = fly ]; then
      fly=$((fly + 1))
      echo "  FLY CRASH ($t): $a" >&2
      grep -m1 -E 'ERROR:|invariant violated' "$report" | sed 's/^/    /' >&2 || true
    else
      other=$((other + 1))
      echo "  $kind ($t): $a" >&2
    fi
  done
  printf '%-18s %12s %8s %8s %8s  %s/%s\n' "$t" "${execs:-?}" "${cov:-?}" \
    "${ft:-?}" "${corp:-?}" "$fly" "$other"
  [ -n "$last" ] || { echo "  $t did not run; see $dir/log" >&2; status=1; }
  [ "$fly" -eq 0 ] || status=1
  [ "$other" -eq 0 ] || [ "${FLY_FUZZ_STRICT:-0}" != 1 ] || status=1
done
if [ "$status" -ne 0 ] && [ -z "${FLY_FUZZ_OUT:-}" ]; then
  # Keep the evidence.
  trap - EXIT
  echo "fuzz.sh: failures; logs and artifacts kept in $OUT" >&2
fi
exit $status
