#!/usr/bin/env python3
"""Naive parallel against fly-tune run under several environments, in turn.

For each input kernel and N it runs, per repetition and in a rotating order:

  naive-parallel  N fly-tune processes with one hint set each, P at a time
                  (the prefix and one binary pass: a full compile)
  fly:<mode>      fly-tune --jobs=P over the N hint sets, with the mode's
                  environment (e.g. an allocator setting)

and reports medians of wall, CPU and peak RSS, and the median of the
per-repetition ratios naive-parallel wall / fly wall (gain > 1: fly faster).
Pairing within a repetition keeps the ratio meaningful on a node whose speed
drifts. Needs only Python 3 and the tools; reuses scaling.py's timing.

  bench/env_pairs.py --fly-tune bin/fly-tune --toolkit rocm-toolkit \\
      --target rocdl:gfx942 --inputs a.mlir,b.mlir --N 16,64 --P 16 --reps 7 \\
      --mode base: --mode trim-each:FLY_X=2 --out /tmp/o

A mode may also run another build: --tool main=/old/bin/fly-tune runs mode
`main` with that fly-tune (naive parallel always runs --fly-tune's).

With --one-sweep the inputs are one sweep, the config space: fly-tune runs
over all of them at once, naive parallel one process per kernel and hint set.
"""

import argparse
import glob
import json
import os
import platform
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scaling import hint_sets, machine, measure  # noqa: E402


def parse_mode(text):
    name, _, env = text.partition(":")
    values = {}
    for item in filter(None, env.split(",")):
        key, _, value = item.partition("=")
        values[key] = value
    return name, values


def read_times(out_dirs):
    """Phase times from each run's manifest.json (a sweep of several kernels:
    each kernel's): prefix, phase 2, total, and every variant's replay time
    (ms)."""
    times = {"prefix_ms": [], "replay_ms": [], "total_ms": [], "variant_ms": []}
    paths = []
    for d in out_dirs:
        own = os.path.join(d, "manifest.json")
        paths += [own] if os.path.exists(own) else sorted(
            glob.glob(os.path.join(d, "*", "manifest.json")))
    for path in paths:
        try:
            with open(path) as f:
                m = json.load(f)
        except (OSError, ValueError):
            continue
        for k in ("prefix_ms", "replay_ms", "total_ms"):
            times[k].append(m.get(k) or 0.0)
        times["variant_ms"] += [v.get("replay_ms", 0.0) for v in m["variants"]]
    return times


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fly-tune", help="(not with --report-only)")
    p.add_argument("--toolkit", help="(not with --report-only)")
    p.add_argument("--target", help="e.g. rocdl:gfx942 (not with --report-only)")
    p.add_argument("--inputs", help="comma-separated kernels (not with --report-only)")
    p.add_argument("--N", default="16,64")
    p.add_argument("--P", type=int, default=16)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--mode", action="append", default=[],
                   help="name:VAR=value,VAR=value (empty: the environment as it is)")
    p.add_argument("--tool", action="append", default=[],
                   help="mode=path: the fly-tune that mode runs")
    p.add_argument("--work", default="/tmp/fly-env-pairs")
    p.add_argument("--out", required=True)
    p.add_argument("--one-sweep", action="store_true",
                   help="the inputs are one sweep (see above)")
    p.add_argument("--report-only", action="store_true",
                   help="print ENV-PAIRS.md again from OUT/env-pairs.json, running nothing")
    a = p.parse_args(argv)
    if a.report_only:
        with open(os.path.join(a.out, "env-pairs.json")) as f:
            sys.stdout.write(report(json.load(f)))
        return 0
    missing = [f"--{name.replace('_', '-')}" for name in
               ("fly_tune", "toolkit", "target", "inputs", "mode") if not getattr(a, name)]
    if missing:
        p.error("the following arguments are required: " + ", ".join(missing))
    family = a.target.split(":")[0]
    modes = [parse_mode(m) for m in a.mode]
    tools = dict(t.split("=", 1) for t in a.tool)
    unknown = set(tools) - {name for name, _ in modes}
    if unknown:
        p.error(f"--tool names no mode: {', '.join(sorted(unknown))}")
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    log = open(os.path.join(a.out, "log.txt"), "w")
    base_env = dict(os.environ, FLY_ENABLE_CACHE="0")

    def fly_cmd(inp, hints, jobs, out, tool=None):
        return [tool or a.fly_tune, *inp.split(","), f"--target={a.target}",
                f"--toolkit={a.toolkit}",
                f"--hints-file={hints}", f"--jobs={jobs}", f"--out-dir={out}",
                "--no-cache", "--quiet"]

    def write_hints(name, sets):
        path = os.path.join(a.work, name)
        with open(path, "w") as f:
            json.dump(sets, f)
        return path

    results = []
    node = machine()
    for inp in [a.inputs] if a.one_sweep else a.inputs.split(","):
        for n in [int(x) for x in a.N.split(",")]:
            sets = hint_sets(family, n)
            all_hints = write_hints(f"hints-{n}.json", sets)
            naive = [fly_cmd(kernel, write_hints(f"one-{i}.json", [h]), 1,
                             os.path.join(a.work, f"naive-{len(sets) * k + i}"))
                     for k, kernel in enumerate(inp.split(","))
                     for i, h in enumerate(sets)]
            names = ["naive-parallel"] + [m[0] for m in modes]
            runs = {name: [] for name in names}
            for rep in range(a.reps):
                order = names[rep % len(names):] + names[:rep % len(names)]
                for name in order:
                    if name == "naive-parallel":
                        os.environ.clear()
                        os.environ.update(base_env)
                        r = measure(naive, a.P, 0, log)
                        r["times"] = read_times(
                            os.path.join(a.work, f"naive-{i}")
                            for i in range(len(naive)))
                    else:
                        env = dict(base_env, **dict(modes)[name])
                        os.environ.clear()
                        os.environ.update(env)
                        out = os.path.join(a.work, "fly")
                        shutil.rmtree(out, ignore_errors=True)
                        r = measure([fly_cmd(inp, all_hints, a.P, out, tools.get(name))],
                                    1, 0, log)
                        r["times"] = read_times([out])
                    r["rep"] = rep
                    runs[name].append(r)
                    print(f"{len(inp.split(','))} kernel(s) N={n} rep {rep} {name}: "
                          f"{r['wall_s']:.3f} s wall, {r['cpu_s']:.2f} s CPU, "
                          f"{r['peak_rss_mb']:.0f} MB"
                          + (f", {len(r['failures'])} failed" if r["failures"] else ""),
                          flush=True)
            os.environ.clear()
            os.environ.update(base_env)
            row = {"input": "+".join(os.path.basename(k) for k in inp.split(",")),
                   "N": n, "P": a.P, "runs": runs}
            naive_walls = [r["wall_s"] for r in runs["naive-parallel"]]
            row["summary"] = {}
            for name in names:
                walls = [r["wall_s"] for r in runs[name]]
                row["summary"][name] = {
                    "wall_s": statistics.median(walls),
                    "cpu_s": statistics.median(r["cpu_s"] for r in runs[name]),
                    "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in runs[name]),
                    "gain": statistics.median(nw / w for nw, w in zip(naive_walls, walls)),
                    "gain_min": min(nw / w for nw, w in zip(naive_walls, walls)),
                    "gain_max": max(nw / w for nw, w in zip(naive_walls, walls)),
                    "failed": sum(len(r["failures"]) for r in runs[name]),
                }
                t = [r["times"] for r in runs[name]]
                med = lambda xs: statistics.median(xs) if xs else 0.0
                row["summary"][name].update({
                    "prefix_ms": med([x for tt in t for x in tt["prefix_ms"]]),
                    "phase2_ms": med([max(tt["replay_ms"] or [0]) for tt in t]),
                    "total_ms": med([max(tt["total_ms"] or [0]) for tt in t]),
                    "variant_ms": med([x for tt in t for x in tt["variant_ms"]]),
                    "variant_max_ms": med([max(tt["variant_ms"] or [0]) for tt in t]),
                    "outside_ms": med([r["wall_s"] * 1000 - max(r["times"]["total_ms"] or [0])
                                       for r in runs[name]]),
                })
            results.append(row)
            # After every row, so a run cut short keeps the rows it finished.
            doc = {"command": " ".join([os.path.basename(sys.argv[0])] + argv),
                   "machine": node, "python": platform.python_version(),
                   "modes": {name: env for name, env in modes}, "tools": tools,
                   "results": results}
            with open(os.path.join(a.out, "env-pairs.json"), "w") as f:
                json.dump(doc, f, indent=1)
            with open(os.path.join(a.out, "ENV-PAIRS.md"), "w") as f:
                f.write(report(doc))
    print("wrote", os.path.join(a.out, "ENV-PAIRS.md"))


def report(doc):
    """ENV-PAIRS.md of a run's env-pairs.json."""
    modes = list(doc["modes"].items())
    tools = doc["tools"]
    results = doc["results"]
    lines = ["# Naive parallel and fly-tune under several environments",
             "", "Generated by `bench/env_pairs.py`. Command:", "",
             "    " + doc["command"], "", f"Machine: {doc['machine']}", "",
             "Modes: " + "; ".join(f"`{n}` = {e or 'as is'}"
                                   + (f", fly-tune {tools[n]}" if n in tools else "")
                                   for n, e in modes), "",
             "Medians over the repetitions; gain = naive parallel wall / fly wall, "
             "taken per repetition (median, min-max).", "",
             "| kernel | N | P | naive parallel s (CPU) | "
             + " | ".join(f"{n} s (CPU) | {n} gain" for n, _ in modes) + " |",
             "|---|---|---|---|" + "---|---|" * len(modes)]
    for row in results:
        s = row["summary"]
        cells = [row["input"], str(row["N"]), str(row["P"]),
                 f"{s['naive-parallel']['wall_s']:.3f} ({s['naive-parallel']['cpu_s']:.1f})"]
        for name, _ in modes:
            m = s[name]
            cells.append(f"{m['wall_s']:.3f} ({m['cpu_s']:.1f})")
            cells.append(f"{m['gain']:.2f} ({m['gain_min']:.2f}-{m['gain_max']:.2f})"
                         + (f", {m['failed']} failed" if m["failed"] else ""))
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Where the time went (medians, ms): prefix and total from the manifests "
              "(naive: the slowest of its processes), phase 2 = the replays' span, "
              "variant = one variant's replay (median, and the slowest of a run), "
              "outside = wall - total (process start, parse, writing, exit; naive: "
              "against its slowest process).", "",
              "| kernel | N | run | prefix | phase 2 | variant | variant max | total | outside |",
              "|---|---|---|---|---|---|---|---|---|"]
    for row in results:
        for name, m in row["summary"].items():
            lines.append(f"| {row['input']} | {row['N']} | {name} | {m['prefix_ms']:.1f} | "
                         f"{m['phase2_ms']:.1f} | {m['variant_ms']:.1f} | "
                         f"{m['variant_max_ms']:.1f} | {m['total_ms']:.1f} | "
                         f"{m['outside_ms']:.1f} |")
    first = modes[0][0]
    if len(modes) > 1:
        lines += ["", f"Each mode against `{first}`, round by round (the runs of one "
                  "repetition are side by side): median of the per-round ratios mode / "
                  f"{first} (min-max); below 1: the mode took less.", "",
                  "| kernel | N | mode | wall | CPU |", "|---|---|---|---|---|"]
        for row in results:
            base = {r["rep"]: r for r in row["runs"][first]}
            for name, _ in modes[1:]:
                pairs = [(r, base[r["rep"]]) for r in row["runs"][name] if r["rep"] in base]
                cells = []
                for key in ("wall_s", "cpu_s"):
                    ratios = [r[key] / b[key] for r, b in pairs]
                    cells.append(f"{statistics.median(ratios):.3f} "
                                 f"({min(ratios):.2f}-{max(ratios):.2f})")
                lines.append(f"| {row['input']} | {row['N']} | {name} | "
                             + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main(sys.argv[1:])
