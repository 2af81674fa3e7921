#!/usr/bin/env python3
"""What limits fly-tune's scaling at P workers: the machine or the executor.

For each target's GEMM workload (the scaling run's, bench/scaling.py) it
measures, alternating the order per repetition:

  one        one compile alone (fly-tune, one hint set, --jobs=1)
  capacity   P copies of that compile started at once, each its own process:
             what P independent compiles cost on this machine right now
  batch      fly-tune --jobs=P --executor=batch over N hint sets (threads)
  process    fly-tune --jobs=P --executor=process over the same N (child
             processes: no lock, allocator or lld state shared in-process)

P_eff = P x t(one) / t(capacity) is the parallel speed-up the machine gives
independent compiles (memory bandwidth, shared caches, clock under load).
ideal(P) = T_pre + N x T_bin / P as in scaling.py; ideal(P_eff) divides by
P_eff instead. batch close to ideal(P_eff) and no faster process run: the
machine is the limit. process clearly faster than batch: something shared
inside one process is.

  bench/limits.py --fly-tune build/bin/fly-tune --rocm-toolkit build/rocm-toolkit \
      --cuda /usr/local/cuda --P 16 --N 64 --reps 3 --out /tmp/limits

Writes limits.json and LIMITS.md (or --report) to --out.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scaling  # noqa: E402  (hint sets, the sampler, the machine line)


def fly_cmd(a, target, inp, hints, p, out, executor):
    chip = a.rocdl_chip if target == "rocdl" else a.nvvm_chip
    toolkit = a.rocm_toolkit if target == "rocdl" else a.cuda
    return [a.fly_tune, inp, f"--target={target}:{chip}", f"--toolkit={toolkit}",
            f"--hints-file={hints}", f"--jobs={p}", f"--executor={executor}",
            f"--out-dir={out}", "--no-cache", "--quiet"]


def prefix_ms(out):
    try:
        with open(os.path.join(out, "manifest.json")) as f:
            return json.load(f).get("prefix_ms")
    except (OSError, ValueError):
        return None


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fly-tune", required=True)
    p.add_argument("--rocm-toolkit")
    p.add_argument("--cuda", default="/usr/local/cuda")
    p.add_argument("--rocdl-chip", default="gfx942")
    p.add_argument("--nvvm-chip", default="sm_90")
    p.add_argument("--targets", default="rocdl,nvvm")
    p.add_argument("--P", type=int, default=16)
    p.add_argument("--N", type=int, default=64)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--sample-ms", type=int, default=100)
    p.add_argument("--work", default="/tmp/fly-limits")
    p.add_argument("--out", required=True)
    p.add_argument("--report")
    a = p.parse_args(argv)
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    log = open(os.path.join(a.out, "limits-log.txt"), "w")
    env_note = "FLY_ENABLE_CACHE=0"
    os.environ["FLY_ENABLE_CACHE"] = "0"
    t0 = time.monotonic()
    results = {"machine": scaling.machine(), "P": a.P, "N": a.N, "reps": a.reps,
               "argv": argv, "targets": {}}
    for target in a.targets.split(","):
        gen = scaling.GEMM[target]
        inp = os.path.join(a.work, f"gemm-{target}.mlir")
        subprocess.run([sys.executable, os.path.join(HERE, gen[0])] + gen[1:] + ["-o", inp],
                       check=True)
        hints = os.path.join(a.work, f"hints-{target}-{a.N}.json")
        with open(hints, "w") as f:
            json.dump(scaling.hint_sets(target, a.N), f)
        one = os.path.join(a.work, f"hints-{target}-1.json")
        with open(one, "w") as f:
            json.dump(scaling.hint_sets(target, 1), f)
        modes = {
            "one": lambda r: ([fly_cmd(a, target, inp, one, 1,
                                       os.path.join(a.work, f"{target}-one"), "batch")], 1),
            "capacity": lambda r: ([fly_cmd(a, target, inp, one, 1,
                                            os.path.join(a.work, f"{target}-cap{i}"), "batch")
                                    for i in range(a.P)], a.P),
            "batch": lambda r: ([fly_cmd(a, target, inp, hints, a.P,
                                         os.path.join(a.work, f"{target}-batch"), "batch")], 1),
            "process": lambda r: ([fly_cmd(a, target, inp, hints, a.P,
                                           os.path.join(a.work, f"{target}-process"),
                                           "process")], 1),
        }
        order = list(modes)
        runs = {m: [] for m in order}
        pre = []
        for rep in range(a.reps):
            rot = order[rep % len(order):] + order[:rep % len(order)]
            for m in rot:
                cmds, par = modes[m](rep)
                r = scaling.measure(cmds, par, a.sample_ms if m in ("batch", "process") else 0,
                                    log)
                if m == "batch":
                    pre.append(prefix_ms(os.path.join(a.work, f"{target}-batch")))
                runs[m].append(r)
                print(f"[{time.monotonic() - t0:6.1f} s] {target} rep {rep} {m}: "
                      f"{r['wall_s']} s wall, {r['cpu_s']} s CPU, "
                      f"{len(r['failures'])} failed", flush=True)
        med = {m: statistics.median(x["wall_s"] for x in runs[m]) for m in order}
        cpu = {m: statistics.median(x["cpu_s"] for x in runs[m]) for m in order}
        t_pre = statistics.median(x for x in pre if x is not None) / 1000.0 if any(pre) else 0.0
        t_bin = med["one"] - t_pre
        p_eff = a.P * med["one"] / med["capacity"]
        ideal = t_pre + a.N * t_bin / a.P
        ideal_eff = t_pre + a.N * t_bin / p_eff
        cores = {}
        for m in ("batch", "process"):
            s = runs[m][-1].get("samples", [{}])[0]
            c = s.get("busy_cores", [])
            cores[m] = round(sum(c) / len(c), 1) if c else None
        results["targets"][target] = {
            "runs": runs, "wall_s": med, "cpu_s": cpu, "t_pre_s": round(t_pre, 3),
            "t_bin_s": round(t_bin, 3), "p_eff": round(p_eff, 2),
            "ideal_s": round(ideal, 3), "ideal_eff_s": round(ideal_eff, 3),
            "mean_busy_cores": cores,
            "failures": sum(len(x["failures"]) for m in order for x in runs[m]),
        }
    results["took_s"] = round(time.monotonic() - t0, 1)
    with open(os.path.join(a.out, "limits.json"), "w") as f:
        json.dump(results, f, indent=1)
    report = a.report or os.path.join(a.out, "LIMITS.md")
    with open(report, "w") as f:
        f.write(render(results, env_note))
    print(open(report).read())
    return 0


def render(res, env_note):
    m = res["machine"]
    lines = ["# What limits scaling: the machine or the executor", "",
             "Generated by `bench/limits.py` (do not edit). Command:", "",
             "    bench/limits.py " + " ".join(res["argv"]), "",
             f"Machine: {m.get('cpu', '?')}, {m.get('cpus')} CPUs "
             f"({m.get('affinity')} usable), {m.get('mem_gb')} GB, GPU {m.get('gpu') or 'none'}, "
             f"Linux {m.get('kernel')}, Python {m.get('python')}; run took {res['took_s']} s; "
             f"{env_note}.", "",
             f"P = {res['P']}, N = {res['N']} hint sets, medians of {res['reps']} repetitions "
             "(modes alternate). one = one compile alone; capacity = P copies of it at once, "
             "each its own process; batch / process = fly-tune --jobs=P with that executor. "
             "P_eff = P x one / capacity. ideal(P) = T_pre + N x T_bin / P, "
             "ideal(P_eff) the same over P_eff. cores = mean busy cores sampled over the run.", "",
             "| target | one s | capacity s | P_eff | batch s | process s | process / batch "
             "| ideal(P) s | ideal(P_eff) s | batch eff vs ideal(P) / ideal(P_eff) "
             "| CPU s batch / process | cores batch / process | failed |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for t, r in res["targets"].items():
        w, c = r["wall_s"], r["cpu_s"]
        lines.append(
            f"| {t} | {w['one']:.2f} | {w['capacity']:.2f} | {r['p_eff']:.1f} | "
            f"{w['batch']:.2f} | {w['process']:.2f} | {w['process'] / w['batch']:.2f} | "
            f"{r['ideal_s']:.2f} | {r['ideal_eff_s']:.2f} | "
            f"{r['ideal_s'] / w['batch']:.2f} / {r['ideal_eff_s'] / w['batch']:.2f} | "
            f"{c['batch']:.1f} / {c['process']:.1f} | "
            f"{r['mean_busy_cores']['batch']} / {r['mean_busy_cores']['process']} | "
            f"{r['failures']} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
