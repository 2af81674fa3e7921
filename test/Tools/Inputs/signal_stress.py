"""Interrupts fly-tune at random moments (SIGINT, SIGTERM, SIGKILL) while it
rewrites one out-dir, and checks after each run that the out-dir is whole:
either the previous output or a complete new one (every file its manifest and
.fly-outdir list, nothing else), and that an interrupted (not killed) run left
no staging directory. Inputs after TRIALS make it a sweep: each kernel's
out-dir <out>/<stem> is checked so, and staged while the kernels compile.
Arguments after TRIALS that start with -- go to fly-tune.
Prints one summary line."""
import json
import os
import random
import signal
import subprocess
import sys
import time

fly_tune, work, trials = sys.argv[1], sys.argv[2], int(sys.argv[3])
inputs = [a for a in sys.argv[4:] if not a.startswith("--")]
flags = [a for a in sys.argv[4:] if a.startswith("--")]
out = os.path.join(work, "out")
hints = ";".join(f"waves_per_eu={i}" for i in range(1, 9))
cmd = [fly_tune, "--quiet", "--hints=" + hints, "--out-dir=" + out, *flags,
       *inputs]
env = dict(os.environ, FLY_CACHE_DIR=os.path.join(work, "cache"))
kernel_dirs = ([os.path.join(out, os.path.splitext(os.path.basename(i))[0])
                for i in inputs] or [out])


def whole_dir(path):
    manifest = json.load(open(os.path.join(path, "manifest.json")))
    files = sorted(os.listdir(path))
    written = ["manifest.json"] + [f for v in manifest["variants"] for f in v["files"]]
    with open(os.path.join(path, ".fly-outdir")) as f:
        record = sorted(l.strip() for l in f if l.strip() and not l.startswith("#"))
    return (files == sorted(written + [".fly-outdir"]) and record == sorted(written)
            and len(manifest["variants"]) == 8), manifest["total_ms"]


def whole():
    checked = [whole_dir(d) for d in kernel_dirs]
    return all(ok for ok, _ in checked), [total for _, total in checked]


# Signals come at any moment of a run: up to as long as a second run takes
# (with the cache on, its variants come from there), at least 150 ms.
subprocess.run(cmd, env=env, check=True, capture_output=True)
started = time.monotonic()
subprocess.run(cmd, env=env, check=True, capture_output=True)
latest = max(0.15, time.monotonic() - started)
random.seed(1)
broken = replaced = kept = leftovers = 0
for _ in range(trials):
    before = whole()[1]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(random.uniform(0.0, latest))
    sig = random.choice([signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
    p.send_signal(sig)
    p.wait()
    ok, total = whole()
    if not ok:
        broken += 1
    elif total == before:
        kept += 1
    else:
        replaced += 1
    if sig != signal.SIGKILL and any(f"fly-staging-{p.pid}-" in e
                                     for d in {work, out}
                                     for e in os.listdir(d)):
        leftovers += 1
print(f"trials={trials} broken={broken} interrupted-leftovers={leftovers} "
      f"(kept={kept} replaced={replaced})")
