"""Kills a fly-tune sweep after K variants finished, reruns it, and checks
that the rerun takes exactly those K from the cache, compiles only the rest
and yields objects equal to an uninterrupted sweep's.

The moment is a count, not a time: the toolkit's ld.lld is a wrapper that
lets K links through and holds the next one while a gate file exists, so
the run is killed with K variants finished and one in flight (--jobs=1).

usage: kill_resume.py <fly-tune> <rocm-toolkit> <work> <executor> <K>...
Prints one line per (signal, K)."""
import filecmp
import os
import re
import signal
import subprocess
import sys
import time

fly_tune, toolkit, work, executor = sys.argv[1:5]
counts = [int(k) for k in sys.argv[5:]]
hints = "waves_per_eu=1;waves_per_eu=2;waves_per_eu=4;maxnreg=64;maxnreg=96;maxnreg=128"
total = 6
os.makedirs(work, exist_ok=True)

# The toolkit: the real bitcode, ld.lld behind a counting gate.
kit = os.path.join(work, "toolkit")
os.makedirs(os.path.join(kit, "llvm", "bin"), exist_ok=True)
os.makedirs(os.path.join(kit, "amdgcn"), exist_ok=True)
bitcode = os.path.join(kit, "amdgcn", "bitcode")
if not os.path.lexists(bitcode):
    os.symlink(os.path.realpath(os.path.join(toolkit, "amdgcn", "bitcode")), bitcode)
lld = os.path.join(kit, "llvm", "bin", "ld.lld")
# Not resolved: the final link to `lld` would lose the ld.lld flavour.
real_lld = os.path.abspath(os.path.join(toolkit, "llvm", "bin", "ld.lld"))
with open(lld, "w") as f:
    f.write(f"""#!/bin/sh
# fly-kill-resume-gate
n=$(cat "$FLY_TEST_COUNTER" 2>/dev/null || echo 0)
echo $((n + 1)) > "$FLY_TEST_COUNTER"
if [ "$n" -ge "$FLY_TEST_PASS" ]; then
  i=0
  while [ -e "$FLY_TEST_GATE" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
fi
exec {real_lld} "$@"
""")
os.chmod(lld, 0o755)


def command(out):
    return [fly_tune, "--hints=" + hints, "--toolkit=" + kit, "--reuse-isa=false",
            "--jobs=1", "--executor=" + executor, "--out-dir=" + out]


def environment(name, gate, passing):
    return dict(os.environ, FLY_CACHE_DIR=os.path.join(work, name + "-cache"),
                FLY_TEST_COUNTER=os.path.join(work, name + ".count"),
                FLY_TEST_GATE=gate, FLY_TEST_PASS=str(passing))


def entries(cache):
    # Not the locks: "<entry>.lock", and LockFileManager's "<entry>.lock-XXXXXX"
    # that a SIGKILL leaves behind.
    if not os.path.isdir(cache):
        return 0
    return sum(1 for f in os.listdir(cache)
               if f.startswith("llvmcache-binary-") and ".lock" not in f)


def objects(out):
    return sorted(f for f in os.listdir(out) if f.endswith((".hsaco", ".hipfb", ".o", ".bin")))


none = os.path.join(work, "no-gate")
subprocess.run(command(os.path.join(work, "reference")), check=True,
               capture_output=True, env=environment("reference", none, 0))
reference = objects(os.path.join(work, "reference"))
assert len(reference) >= total, reference

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGKILL):
    for k in counts:
        name = f"{sig.name}-{k}"
        gate = os.path.join(work, name + ".gate")
        open(gate, "w").close()
        env = environment(name, gate, k)
        out = os.path.join(work, name)
        # SIGINT at its default action, as in a terminal: lit's workers
        # ignore it, and an ignored SIGINT stays ignored across exec.
        run = subprocess.Popen(command(out), env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL,
                               preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                                signal.SIG_DFL))
        # K variants stored and the next one held at the gate.
        cache = env["FLY_CACHE_DIR"]
        deadline = time.monotonic() + 120
        while True:
            held = int(open(env["FLY_TEST_COUNTER"]).read() or 0) \
                if os.path.exists(env["FLY_TEST_COUNTER"]) else 0
            if entries(cache) >= k and held > k:
                break
            if run.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"{name}: the sweep ended or stalled before {k} variants "
                         f"finished (exit {run.poll()})")
            time.sleep(0.01)
        run.send_signal(sig)
        try:
            status = run.wait(timeout=60)
        except subprocess.TimeoutExpired:
            run.kill()
            sys.exit(f"{name}: fly-tune did not end after {sig.name}")
        os.remove(gate)
        stored = entries(cache)
        rerun = subprocess.run(command(out), env=env, capture_output=True, text=True)
        said = re.search(r"phase 2: (\d+) variant\(s\) from cache, replaying (\d+)",
                         rerun.stderr)
        same = objects(out) == reference and all(
            filecmp.cmp(os.path.join(out, f), os.path.join(work, "reference", f),
                        shallow=False) for f in reference)
        print(f"{name}: killed={status != 0} stored={stored} "
              f"rerun={said.group(1) if said else '?'} from cache, "
              f"{said.group(2) if said else '?'} replayed, exit={rerun.returncode} "
              f"objects-equal={same}")
