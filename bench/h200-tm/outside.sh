#!/usr/bin/env bash
# Where fly-tune's time outside its manifest's total goes at N = P = 16 on
# the node: one 128x128 GEMM, 1 and 16 hint sets, timed from outside, with
# strace's timestamps where the node has strace.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
work=/tmp/fly
bash "$repo/bench/h200-tm/device-run.sh" none "$out" >/dev/null 2>&1 || true
tune=$work/fly_snapshot/bin/fly-tune toolkit=$work/fly_snapshot/rocm-toolkit
k=$work/k/x-rocdl-128x128-u8.mlir
for t in strace perf ltrace gdb valgrind; do printf '%s: %s\n' $t "$(command -v $t || echo none)"; done
python3 - "$tune" "$toolkit" "$k" "$out" <<'PY'
import json, os, subprocess, sys, time
tune, toolkit, k, out = sys.argv[1:]
sets = [{"waves_per_eu": 1 + i % 8} if i % 2 else {"maxnreg": 32 + 8 * i} for i in range(16)]
for n in (1, 16):
    with open(f"/tmp/fly/h{n}.json", "w") as f:
        json.dump(sets[:n], f)
for rep in range(3):
    for n in (1, 16):
        d = f"/tmp/fly/o{n}"
        subprocess.run(["rm", "-rf", d])
        env = dict(os.environ, FLY_ENABLE_CACHE="0")
        t0 = time.monotonic()
        subprocess.run([tune, k, "--target=rocdl:gfx942", f"--toolkit={toolkit}",
                        f"--hints-file=/tmp/fly/h{n}.json", "--jobs=16", f"--out-dir={d}",
                        "--no-cache", "--quiet"], env=env, stdout=subprocess.DEVNULL)
        wall = (time.monotonic() - t0) * 1000
        m = json.load(open(f"{d}/manifest.json"))
        print(f"rep {rep} N={n}: wall {wall:.0f} ms, total {m['total_ms']:.0f}, "
              f"outside {wall - m['total_ms']:.0f}, prefix {m['prefix_ms']:.0f}", flush=True)
PY
if command -v strace >/dev/null; then
  rm -rf /tmp/fly/os
  FLY_ENABLE_CACHE=0 strace -f -tt -e trace=execve,openat,exit_group,exit,clone3,clone,munmap,madvise \
    -o "$out/strace.txt" "$tune" "$k" --target=rocdl:gfx942 --toolkit="$toolkit" \
    --hints-file=/tmp/fly/h16.json --jobs=16 --out-dir=/tmp/fly/os --no-cache --quiet
  gzip -f "$out/strace.txt"
fi
