#!/usr/bin/env python3
"""Table of a bench/h200-sched/device-run.sh run: per target and mode, the
gain (naive parallel wall / fly wall of the same scaling.py run) of each
round, its median, fly's CPU and peak RSS, and the continued variants.

  bench/h200-sched/summarize.py OUT > OUT/SCHED.md
"""
import json
import re
import statistics
import sys
from pathlib import Path


def rounds(out, target, mode):
    found = []
    for run in sorted(out.glob(f"{target}-{mode}-*/scaling.json"),
                      key=lambda p: int(p.parent.name.rsplit("-", 1)[1])):
        result = json.loads(run.read_text())["results"][0]
        rep = result["reps"][0]
        found.append((rep["naive-parallel"], rep["fly"]))
    return found


def main():
    out = Path(sys.argv[1])
    print("| target | mode | rounds | gain per round | median gain | fly wall s | "
          "naive parallel wall s | CPU s naive / fly | peak RSS MB fly |")
    print("|---|---|---|---|---|---|---|---|---|")
    for target, modes in (("rocdl", ("whole", "before", "sched")),
                          ("nvvm", ("before", "sched"))):
        for mode in modes:
            found = rounds(out, target, mode)
            if not found:
                continue
            gains = [n["wall_s"] / f["wall_s"] for n, f in found]
            med = statistics.median
            print(f"| {target} | {mode} | {len(found)} | "
                  f"{', '.join(f'{g:.2f}' for g in gains)} | {med(gains):.2f} | "
                  f"{med(f['wall_s'] for _, f in found):.2f} | "
                  f"{med(n['wall_s'] for n, _ in found):.2f} | "
                  f"{med(n['cpu_s'] for n, _ in found):.1f} / "
                  f"{med(f['cpu_s'] for _, f in found):.1f} | "
                  f"{med(f['peak_rss_mb'] for _, f in found):.0f} |")
    for build in ("before", "sched"):
        text = out / f"continued-{build}" / "continued.txt"
        if text.exists():
            equal = re.findall(r"ISA equal: (\d+)", text.read_text())
            timing = re.findall(r"wall .*", text.read_text())
            print(f"\n{build}, P = 16, FLY_ROCDL_CODEGEN_CUT=verify: "
                  f"{', '.join(equal)} of 64 variants continued ({'; '.join(timing)})")


if __name__ == "__main__":
    main()
