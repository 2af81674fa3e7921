#!/usr/bin/env python3
"""Peak RSS of a big sweep against one stock compile, side by side.

Generates the kernel-count workload (gen_workload.py --kernels K --rows 2
--vec 4 --fold 100), then per repetition, in alternating order: stock
mlir-opt with the preset pipeline (taken from a fly-tune manifest), and each
given fly-tune (a base build and the new one, say) over H hint sets with
--no-cache. Peak RSS is wait4's ru_maxrss (the process or the largest
child); the RSS timeline (sampled from /proc) says in which phase the peak
was. Writes a markdown table (--report) and the raw JSON beside it.

  bench/memory.py --mlir-opt mlir-opt-22 --fly-tune new=build/bin/fly-tune \\
      --fly-tune base=../base/build/bin/fly-tune --toolkit build/rocm-toolkit \\
      --kernels 1024 --hint-sets 4 --report bench/MEMORY.md
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from scaling import Sampler  # noqa: E402

HINTS = [{}, {"waves_per_eu": 2}, {"waves_per_eu": 4}, {"maxnreg": 64},
         {"waves_per_eu": 8}, {"maxnreg": 96}, {"waves_per_eu": 1}, {"maxnreg": 128}]


def run(cmd, env=None):
    start = time.monotonic()
    # stderr to a file: a pipe nobody reads before wait4 fills up (a failing
    # compile prints the whole module) and the child never exits.
    with tempfile.TemporaryFile() as errfile:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errfile, env=env)
        sampler = Sampler(proc.pid, 0.2)
        sampler.start()
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        sampler.stop.set()
        sampler.join()
        errfile.seek(0)
        err = errfile.read().decode(errors="replace")
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        raise SystemExit(f"memory.py: {' '.join(cmd)} exited {rc}:\n{err[-2000:]}")
    timeline = [(round(t, 1), round(rss / 2**20)) for t, _, rss, _ in sampler.timeline]
    peak_at = max(timeline, key=lambda x: x[1])[0] if timeline else None
    return {"wall_s": round(wall, 2), "cpu_s": round(ru.ru_utime + ru.ru_stime, 2),
            "maxrss_mb": round(ru.ru_maxrss / 1024, 1),
            "peak_at_s": peak_at, "timeline_mb": timeline[::max(1, len(timeline) // 60)]}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mlir-opt", default="mlir-opt-22")
    p.add_argument("--fly-tune", action="append", required=True, help="NAME=PATH, repeatable")
    p.add_argument("--toolkit", required=True)
    p.add_argument("--target", default="rocdl:gfx942")
    p.add_argument("--kernels", type=int, default=1024)
    p.add_argument("--hint-sets", type=int, default=4)
    p.add_argument("--jobs", type=int, default=0, help="fly-tune --jobs (default 0: threads)")
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--work", default="/tmp/fly-memory-work")
    p.add_argument("--merge", action="append", default=[],
                   help="JSON of an earlier run: its modes join the table")
    p.add_argument("--report", required=True)
    a = p.parse_args(argv)
    tools = [t.split("=", 1) for t in a.fly_tune]
    os.makedirs(a.work, exist_ok=True)
    inp = os.path.join(a.work, f"kernels-{a.kernels}.mlir")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_workload.py"), "--kernels",
                    str(a.kernels), "--rows", "2", "--vec", "4", "--fold", "100", "-o", inp],
                   check=True)
    hints = os.path.join(a.work, "hints.json")
    with open(hints, "w") as f:
        json.dump(HINTS[:a.hint_sets], f)
    env = dict(os.environ, FLY_ENABLE_CACHE="0")

    def fly(path, out):
        shutil.rmtree(out, ignore_errors=True)
        return [path, inp, f"--target={a.target}", f"--toolkit={a.toolkit}",
                f"--hints-file={hints}", f"--jobs={a.jobs}", f"--out-dir={out}",
                "--no-cache", "--quiet"]

    # The preset pipeline, from the first fly-tune's manifest (one hint set).
    probe_hints = os.path.join(a.work, "probe.json")
    with open(probe_hints, "w") as f:
        json.dump([{}], f)
    small = os.path.join(a.work, "kernels-1.mlir")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_workload.py"), "--kernels", "1",
                    "--rows", "2", "--vec", "4", "-o", small], check=True)
    probe = os.path.join(a.work, "probe")
    cmd = fly(tools[0][1], probe)
    cmd[1] = small
    cmd[4] = f"--hints-file={probe_hints}"
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    with open(os.path.join(probe, "manifest.json")) as f:
        pipeline = json.load(f)["pipeline"]

    modes = [("stock mlir-opt", [a.mlir_opt, inp, "--pass-pipeline=" + pipeline,
                                 "-o", os.path.join(a.work, "stock.mlir")])]
    modes += [(f"fly-tune {name}", fly(path, os.path.join(a.work, "out-" + name)))
              for name, path in tools]
    results = {name: [] for name, _ in modes}
    for rep in range(a.reps):
        order = modes if rep % 2 == 0 else modes[::-1]
        for name, cmd in order:
            r = run(cmd, env)
            results[name].append(r)
            print(f"rep {rep} {name}: {r['maxrss_mb']} MB peak (at {r['peak_at_s']} s), "
                  f"{r['wall_s']} s wall, {r['cpu_s']} s CPU", flush=True)

    # Modes measured by an earlier run of this script on the same machine
    # and workload (peak RSS does not depend on other load; times do).
    for path in a.merge:
        with open(path) as f:
            for name, runs in json.load(f).items():
                label = name + " (earlier run)"
                if label not in results:
                    results[label] = runs
                    modes.append((label, None))

    def med(name, key):
        return statistics.median(r[key] for r in results[name])

    stock = med("stock mlir-opt", "maxrss_mb")
    lines = [f"# Peak RSS: {a.kernels} kernels x {a.hint_sets} hint sets against one stock compile",
             "", "Generated by `bench/memory.py " + " ".join(argv) + "`.", "",
             f"Workload: `gen_workload.py --kernels {a.kernels} --rows 2 --vec 4 --fold 100`, "
             f"{a.target}, fly-tune --jobs={a.jobs} --no-cache; medians of {a.reps} "
             "repetition(s), modes alternating. Peak RSS = wait4's ru_maxrss.", "",
             "| mode | peak RSS MB | x stock | wall s | CPU s | peak at s |",
             "|---|---|---|---|---|---|"]
    for name, _ in modes:
        rss = med(name, "maxrss_mb")
        lines.append(f"| {name} | {rss:.0f} | {rss / stock:.2f} | {med(name, 'wall_s'):.1f} | "
                     f"{med(name, 'cpu_s'):.1f} | {results[name][-1]['peak_at_s']} |")
    lines.append("")
    with open(a.report, "w") as f:
        f.write("\n".join(lines))
    with open(os.path.splitext(a.report)[0] + ".json", "w") as f:
        json.dump({name: results[name] for name, cmd in modes if cmd}, f, indent=1)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
