#!/usr/bin/env python3
"""Table of an `h200-env-run.sh VAR OFF ON scaling OUT ...` run: per cell
(workload, P, N) and setting, each round's gain (naive parallel wall / fly
wall of the same scaling.py call), compiled and continued variants, their
medians, fly's CPU and peak RSS; then, per cell, OFF's fly wall and CPU over ON's within each
round (the two settings ran back to back).

  bench/env_scaling_summary.py OUT OFF ON > OUT/SUMMARY.md
"""
import json
import re
import statistics
import sys
from pathlib import Path


RUN = re.compile(r"(?P<mode>[^-]+)-(?P<cells>.+)-(?P<rep>\d+)$")


def measurements(out):
    """{(workload, P, N): {mode: {rep: (naive parallel, fly)}}}"""
    found = {}
    for path in sorted(out.glob("*/scaling.json")):
        name = RUN.match(path.parent.name)
        if not name:
            continue
        for result in json.loads(path.read_text())["results"]:
            rep = result["reps"][0]
            if "fly" not in rep or "naive-parallel" not in rep:
                continue
            workload = result["workload"]
            if result["target"] != "rocdl":
                workload = f"{result['target']} {workload}"
            cell = (workload, result["P"], result["N"])
            found.setdefault(cell, {}).setdefault(name["mode"], {})[
                int(name["rep"])] = (rep["naive-parallel"], rep["fly"])
    return found


def continued(fly):
    """Continued variants over the call's manifests; a manifest without a
    count has none (a build that counts them leaves the key out at 0)."""
    return sum(m.get("codegen_continued") or 0 for m in fly.get("manifests", []))


def compiled(fly):
    """Variants fly compiled (not copies) over the call's manifests; "-" for
    a scaling.py before manifests counted copies."""
    manifests = fly.get("manifests", [])
    if not manifests or any("copies" not in m for m in manifests):
        return "-"
    return sum(m["variants"] - m["copies"] for m in manifests)


def main():
    out, off, on = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    found = measurements(out)
    if not found:
        sys.exit(f"env_scaling_summary.py: no scaling.json under {out}")
    med = statistics.median
    print("| cell | setting | rounds | compiled per round | continued per round | "
          "gain per round | median gain | "
          "fly wall s | naive parallel wall s | CPU s naive / fly | peak RSS MB fly |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (workload, p, n), modes in sorted(found.items()):
        for mode in (off, on):
            runs = [modes[mode][r] for r in sorted(modes.get(mode, {}))]
            if not runs:
                continue
            gains = [naive["wall_s"] / fly["wall_s"] for naive, fly in runs]
            counts = [continued(fly) for _, fly in runs]
            made = [str(compiled(fly)) for _, fly in runs]
            print(f"| {workload} P={p} N={n} | {mode} | {len(runs)} | "
                  f"{'-' if '-' in made else ', '.join(made)} | "
                  f"{', '.join(str(c) for c in counts)} | "
                  f"{', '.join(f'{g:.2f}' for g in gains)} | {med(gains):.2f} | "
                  f"{med(f['wall_s'] for _, f in runs):.2f} | "
                  f"{med(n_['wall_s'] for n_, _ in runs):.2f} | "
                  f"{med(n_['cpu_s'] for n_, _ in runs):.1f} / "
                  f"{med(f['cpu_s'] for _, f in runs):.1f} | "
                  f"{med(f['peak_rss_mb'] for _, f in runs):.0f} |")
    print(f"\n| cell | rounds | {off} ÷ {on} fly wall per round | median | "
          f"{off} ÷ {on} fly CPU per round | median |")
    print("|---|---|---|---|---|---|")
    for (workload, p, n), modes in sorted(found.items()):
        reps = sorted(set(modes.get(off, {})) & set(modes.get(on, {})))
        if not reps:
            continue
        walls = [modes[off][r][1]["wall_s"] / modes[on][r][1]["wall_s"] for r in reps]
        cpus = [modes[off][r][1]["cpu_s"] / modes[on][r][1]["cpu_s"] for r in reps]
        print(f"| {workload} P={p} N={n} | {len(reps)} | "
              f"{', '.join(f'{w:.2f}' for w in walls)} | {med(walls):.2f} | "
              f"{', '.join(f'{c:.2f}' for c in cpus)} | {med(cpus):.2f} |")


if __name__ == "__main__":
    main()
