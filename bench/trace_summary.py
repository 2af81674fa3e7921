#!/usr/bin/env python3
"""Where a sweep's time went, from `fly-tune --time-trace=FILE`: per thread
its tasks (each kernel's phase 1, each shared ISA compile, each variant),
busy and idle time; the backend steps summed; the kernels' spans; and the
tasks that ended last (the sweep's tail), with the steps inside them.

  bench/trace_summary.py TRACE [--tail K] > SUMMARY.md
  bench/trace_summary.py TRACE --check   # structure only, for tests

--check prints counts and checks that each thread's tasks do not overlap
and that every step lies inside a task of its thread; exit 1 otherwise.
"""
import argparse
import json
import sys
from collections import defaultdict

# A thread's units of work: the executor's tasks, the kernels' drivers and
# the checks of continuations run beside a variant.
TASKS = ("Shared ISA", "Variant", "Phase 1", "Continuation check")
# fly's own steps inside them (LLVM's and MLIR's pass spans are left to the
# trace viewer).
STEPS = (
    "Translate to LLVM IR", "Link device libraries", "Optimise LLVM IR",
    "Key the shared optimisation", "Wait for the shared optimisation",
    "Read the shared optimisation", "Code generation",
    "Whole code generation, kept at the cut", "Continue from the cut",
    "Continue from before the limits", "Check a continuation",
    "Continue elsewhere from the cut", "Continue elsewhere from before the limits",
    "Check a continuation elsewhere", "Code generation to the cut, kept",
    "Compile to the cut", "Make the cut portable",
    "Wait for the continuation check", "Wait for a kept state",
    "Assemble and link", "Object of an equal ISA", "ptxas",
    "fly-assemble-isa",
)


def load(path):
    with open(path) as f:
        trace = json.load(f)
    spans = [e for e in trace["traceEvents"]
             if e.get("ph") == "X" and not e["name"].startswith("Total ")]
    for s in spans:
        s["end"] = s["ts"] + s["dur"]
        s["detail"] = s.get("args", {}).get("detail", "")
    return spans


def inside(inner, outer):
    return outer["ts"] <= inner["ts"] and inner["end"] <= outer["end"]


def by_thread(spans, names):
    threads = defaultdict(list)
    for s in spans:
        if s["name"] in names:
            threads[s["tid"]].append(s)
    for tasks in threads.values():
        tasks.sort(key=lambda s: s["ts"])
    return threads


def check(spans):
    problems = []
    tasks = by_thread(spans, TASKS)
    for tid, own in tasks.items():
        for a, b in zip(own, own[1:]):
            if b["ts"] < a["end"] and not inside(b, a):
                problems.append(f"thread {tid}: {a['name']} {a['detail']} and "
                                f"{b['name']} {b['detail']} overlap")
    for s in spans:
        if s["name"] in STEPS and not any(
                inside(s, t) for t in tasks.get(s["tid"], [])):
            problems.append(f"thread {s['tid']}: {s['name']} outside every task")
    counts = defaultdict(int)
    for s in spans:
        if s["name"] in TASKS + STEPS + ("Kernel",):
            counts[s["name"]] += 1
    for name in sorted(counts):
        print(f"spans {name}: {counts[name]}")
    workers = {s["tid"] for s in spans if s["name"] in ("Shared ISA", "Variant")}
    print(f"threads with variants: {len(workers)}")
    for p in problems:
        print("problem:", p)
    return not problems


def ms(us):
    return f"{us / 1000:.0f}"


def summary(spans, tail):
    if not spans:
        print("no spans")
        return
    t0 = min(s["ts"] for s in spans)
    t1 = max(s["end"] for s in spans)
    print(f"Wall {ms(t1 - t0)} ms from the first span to the last; times below "
          f"in ms from the first span.\n")

    tasks = by_thread(spans, TASKS)
    print("## Threads\n")
    print("Tasks: phase 1 of a kernel, a shared ISA compile, a variant. busy: "
          "the tasks' time; idle: gaps between the thread's first and last "
          "task.\n")
    print("| thread | tasks | first starts | last ends | busy | idle between |")
    print("|---|---|---|---|---|---|")
    rows = []
    for tid, own in tasks.items():
        busy = sum(s["dur"] for s in own)
        span = own[-1]["end"] - own[0]["ts"]
        rows.append((own[0]["ts"], tid, own, busy, span - busy))
    for _, tid, own, busy, idle in sorted(rows):
        print(f"| {tid} | {len(own)} | {ms(own[0]['ts'] - t0)} | "
              f"{ms(own[-1]['end'] - t0)} | {ms(busy)} | {ms(idle)} |")

    print("\n## Steps, summed over all threads\n")
    print("| step | count | total | mean | max |")
    print("|---|---|---|---|---|")
    totals = defaultdict(list)
    for s in spans:
        if s["name"] in TASKS + STEPS:
            totals[s["name"]].append(s["dur"])
    for name in TASKS + STEPS:
        if name in totals:
            d = totals[name]
            print(f"| {name} | {len(d)} | {ms(sum(d))} | {ms(sum(d) / len(d))} "
                  f"| {ms(max(d))} |")

    kernels = [s for s in spans if s["name"] == "Kernel"]
    if kernels:
        print("\n## Kernels\n")
        print("Tasks: its shared ISA compiles and variants (their spans name the "
              "kernel); whole: code generations compiled whole (kept at the cut "
              "or not), continued: from another's cut, of which elsewhere: in "
              "the variant's own context from a state another thread may hold; "
              "early variants: variants that started before its last shared ISA "
              "compile ended.\n")
        print("| kernel | starts | phase 1 ends | first task starts | last task "
              "starts | ends | tasks | whole | continued | elsewhere | early "
              "variants |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        phase1 = {s["detail"]: s for s in spans if s["name"] == "Phase 1"}
        for k in sorted(kernels, key=lambda s: s["end"]):
            name = k["detail"].rsplit("/", 1)[-1]
            p = phase1.get(k["detail"])
            own = [t for ts in tasks.values() for t in ts
                   if t["name"] != "Phase 1" and t["detail"].endswith(" " + name)]
            gens = [s for s in spans if s["name"] == "Code generation"
                    and any(s["tid"] == t["tid"] and inside(s, t) for t in own)]
            conts = [s for s in spans if s["name"].startswith("Continue ")]
            continued = sum(any(c["tid"] == g["tid"] and inside(c, g)
                                for c in conts) for g in gens)
            apart = [s for s in conts if s["name"].startswith("Continue elsewhere")]
            elsewhere = sum(any(c["tid"] == g["tid"] and inside(c, g)
                                for c in apart) for g in gens)
            whole = len(gens) - continued
            first = ms(min(t["ts"] for t in own) - t0) if own else "-"
            last = ms(max(t["ts"] for t in own) - t0) if own else "-"
            isa_end = max((t["end"] for t in own if t["name"] == "Shared ISA"),
                          default=None)
            early = sum(t["name"] == "Variant" and isa_end is not None
                        and t["ts"] < isa_end for t in own)
            print(f"| {name} | {ms(k['ts'] - t0)} | "
                  f"{ms(p['end'] - t0) if p else '-'} | {first} | {last} | "
                  f"{ms(k['end'] - t0)} | {len(own)} | {whole} | {continued} "
                  f"| {elsewhere} | {early} |")

    work = sorted((s for own in tasks.values() for s in own
                   if s["name"] != "Phase 1"), key=lambda s: s["end"])
    print(f"\n## The last {min(tail, len(work))} tasks to end\n")
    print("| starts | ends | thread | task | variant | steps inside (ms) |")
    print("|---|---|---|---|---|---|")
    for t in work[-tail:]:
        steps = [s for s in spans if s["tid"] == t["tid"] and s["name"] in STEPS
                 and inside(s, t)]
        inner = ", ".join(f"{s['name']} {ms(s['dur'])}" for s in
                          sorted(steps, key=lambda s: s["ts"])
                          if s["dur"] >= 1000)
        print(f"| {ms(t['ts'] - t0)} | {ms(t['end'] - t0)} | {t['tid']} | "
              f"{t['name']} | {t['detail']} | {inner} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace")
    p.add_argument("--tail", type=int, default=16)
    p.add_argument("--check", action="store_true")
    a = p.parse_args()
    spans = load(a.trace)
    if a.check:
        return 0 if check(spans) else 1
    summary(spans, a.tail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
