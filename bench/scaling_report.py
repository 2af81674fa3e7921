"""scaling.json -> RESULTS-H200.md (bench/scaling.py calls render)."""

import statistics


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, spec=".2f", none="-"):
    return none if v is None else format(v, spec)


def ratio(a, b):
    return a / b if a and b else None


def failed_variants(run):
    """How many variants failed in one mode's run where the kernel failed
    them (a naive process that exited 1, a fly-tune that exited 2,
    "partial", with its manifests' failed entries); None where the run
    failed otherwise (cut at the deadline, killed, an error of the whole)."""
    if run.get("cut"):
        return None
    if "manifests" in run:
        if any(f["rc"] != 2 for f in run["failures"]):
            return None
        return sum(m["variants"] - m["variants_ok"] for m in run["manifests"])
    if any(f["rc"] != 1 for f in run["failures"]):
        return None
    return len(run["failures"])


def comparable(rep):
    """Every mode of the repetition did the same work: none failed, or each
    failed the same number of variants (the kernel's, e.g. ptxas rejecting
    a register cap below what an instruction needs)."""
    counts = {failed_variants(run) for run in rep.values()}
    return len(counts) == 1 and None not in counts


def failures_text(reps):
    """The failed column: the failed commands of repetitions left out, and
    the variants every mode failed alike in those kept."""
    left_out = sum(len(run["failures"]) for r in reps if not comparable(r) for run in r.values())
    alike = sorted({failed_variants(next(iter(r.values()))) for r in reps if comparable(r)} - {0})
    parts = [str(left_out)] if left_out or not alike else []
    if alike:
        parts.append(", ".join(map(str, alike)) + " variants in each mode")
    return "; ".join(parts)


def cell_stats(cell):
    """Medians over repetitions of one (target, workload, P, N) cell."""
    reps = cell["reps"]

    def m(mode, key):
        return med([r[mode][key] for r in reps if mode in r and comparable(r)])

    n, p = cell["N"], cell["P"]
    t_one, t_pre = cell["t_one_s"], cell["t_pre_s"]
    # One naive compile per kernel: T_pre + T_bin (+ process start, parse).
    t_bin_sum = max(t_one - t_pre, 0) * n
    ideal = t_pre + t_bin_sum / p
    serial = m("naive-serial", "wall_s")
    parallel = m("naive-parallel", "wall_s") if p > 1 else serial
    serial_est = serial is None
    if serial is None:
        serial = n * t_one
    s = {
        "serial": serial, "serial_est": serial_est,
        "parallel": parallel, "fly": m("fly", "wall_s"),
        "cpu_parallel": m("naive-parallel" if p > 1 else "naive-serial", "cpu_s"),
        "cpu_fly": m("fly", "cpu_s"),
        "rss_parallel": m("naive-parallel" if p > 1 else "naive-serial", "peak_rss_mb"),
        "rss_parallel_sum": m("naive-parallel", "peak_rss_sum_mb"),
        "rss_fly": m("fly", "peak_rss_mb"), "ideal": ideal,
        "failures": failures_text(reps),
    }
    s["eff"] = ratio(ideal, s["fly"])
    s["x_serial"] = ratio(s["serial"], s["fly"])
    s["x_parallel"] = ratio(s["parallel"], s["fly"])
    return s


def where(cell, one_sweep):
    """Where fly's phase 2 went, from the manifests and /proc samples.
    one_sweep: the kernels' manifests come from one fly-tune sweep, whose
    kernels' phases overlap (else from one fly-tune per kernel in turn)."""
    fly = [r["fly"] for r in cell["reps"] if "fly" in r]
    if not fly:
        return None
    last = fly[-1]
    man = last.get("manifests", [])
    samples = last.get("samples", [])
    p = cell["P"]
    combine = max if one_sweep and len(man) > 1 else sum
    pre = combine([x.get("prefix_ms") or 0 for x in man])
    rep = combine([x.get("replay_ms") or 0 for x in man])
    if combine is max:
        # The pool's P threads over the sweep's phase 2, not one kernel's.
        busy = sum(x.get("variant_busy_ms") or 0 for x in man)
        util = busy / (p * rep) if rep else None
    else:
        util = med([x.get("utilisation") for x in man])
    busy = [b for s in samples for b in s["thread_busy_s"]]
    cores = [c for s in samples for c in s["busy_cores"]]
    children = {}
    for s in samples:
        for k, v in s["children_started"].items():
            children[k] = children.get(k, 0) + v
    return {
        "prefix_ms": pre, "replay_ms": rep, "util": util,
        "threads": max((s["threads_busy"] for s in samples), default=None),
        "busy_max": max(busy) if busy else None,
        "busy_p": sorted(busy, reverse=True)[p - 1] if len(busy) >= p else None,
        "cores_mean": statistics.mean(cores) if cores else None,
        "cores_max": max(cores) if cores else None,
        "below_half": (sum(1 for c in cores if c < p / 2) / len(cores)) if cores else None,
        "children": ", ".join(f"{k} x{v}" for k, v in sorted(children.items())) or "none",
        "isa_shared": sum(x.get("isa_shared", 0) for x in man),
        # Runs before manifests said so have none.
        "continued": sum(x.get("codegen_continued") or 0 for x in man)
        if any(x.get("codegen_continued") is not None for x in man) else None,
    }


def cell_name(target, workload, p, n):
    """How the log and the skipped list name one cell."""
    return f"{target} {workload} P={p} N={n}"


def merge(runs):
    """Several runs' scaling.json (calls of one node) as one: each (target,
    workload) table holds the cells of all, P down and N up."""
    data = dict(runs[0])
    data["calls"] = [{"command": r.get("command"), "machine": r["machine"],
                      "elapsed_s": r["elapsed_s"]} for r in runs]
    order = {}
    for r in runs:
        for c in r["results"]:
            order.setdefault((c["target"], c["workload"]), len(order))
    cells = [dict(c, call=i + 1, per_kernel_fly=r["args"].get("per_kernel_fly"))
             for i, r in enumerate(runs) for c in r["results"]]
    data["results"] = sorted(cells, key=lambda c: (order[(c["target"], c["workload"])],
                                                   -c["P"], c["N"]))
    measured = {cell_name(c["target"], c["workload"], c["P"], c["N"]) for c in cells}
    data["skipped"] = [s for r in runs for s in r["skipped"] if s["what"] not in measured]
    return data


def machine_line(m, elapsed_s):
    return (f"Machine: {m.get('cpu', '?')}, {m.get('cpus')} CPUs ({m.get('affinity')} usable), "
            f"{m.get('mem_gb')} GB, GPU {m.get('gpu') or 'none'}, Linux {m.get('kernel')}, "
            f"Python {m.get('python')}; run took {elapsed_s} s"
            + (f"; load average at the end {m['loadavg']}" if m.get("loadavg") else "")
            + ".")


def render(data, command):
    calls = data.get("calls") or [{"command": command, "machine": data["machine"],
                                   "elapsed_s": data["elapsed_s"]}]
    out = ["# Scaling: naive serial, naive parallel and fly-tune side by side", "",
           "Generated by `bench/scaling.py` (do not edit; `--report-only` rewrites it from"]
    if len(calls) == 1:
        out += ["`scaling.json`). Command:", "", "    " + command, "",
                machine_line(data["machine"], data["elapsed_s"])]
    else:
        out.append(f"`scaling.json`; `--merge`: the cells of {len(calls)} calls, one "
                   "table per workload).")
        for i, call in enumerate(calls):
            out += ["", f"Call {i + 1}:", "", "    " + call["command"], "",
                    machine_line(call["machine"], call["elapsed_s"])]
    out += ["",
           "Modes: naive serial = N full compiles one after another ("
           + ("fly-opt, preset pipeline unsplit, the hint set on its own binary pass"
              if data["args"].get("fly_opt") else
              "each one fly-tune process with a single hint set and --no-cache: the "
              "prefix and one binary pass; no fly-opt was given")
           + "); naive parallel = the "
           "same N compiles, P processes at a time; fly = `fly-tune --jobs=P --no-cache`. "
           "Times are medians over repetitions (modes alternate per repetition). "
           "ideal(P) = T_pre + N x T_bin / P with T_pre the manifest's prefix time and "
           "T_bin = one naive compile - T_pre (so process start and parse count as T_bin); "
           "eff = ideal(P) / fly. `est`: naive serial scaled from one compile x N. "
           "CPU: user+sys of the processes and their children. RSS: the largest process; "
           "`sum` for naive parallel: the processes alive at once (sampled). failed: "
           "the failed commands of repetitions left out; `k variants in each mode`: "
           "repetitions kept where every mode failed the same k variants (the "
           "kernel's, e.g. ptxas refusing a register cap).", ""]
    cells = data["results"]
    groups = []
    for c in cells:
        key = (c["target"], c["workload"])
        if key not in groups:
            groups.append(key)
    main = [g for g in groups if not g[1].startswith("gemm ")]
    for target, workload in main:
        rows = [c for c in cells if (c["target"], c["workload"]) == (target, workload)]
        k = rows[0]["kernels"]
        probes = {}
        for c in rows:
            probes.setdefault((c["t_one_s"], c["t_pre_s"]), []).append(str(c.get("call", "")))
        cells_at = [(c["P"], c["N"]) for c in rows]

        def label(c):
            # Merged calls that measured the same cell: which call each row is.
            twice = cells_at.count((c["P"], c["N"])) > 1
            return f"{c['N']} (call {c['call']})" if twice else str(c["N"])

        probe = [f"{one:.2f} s, T_pre {pre:.3f} s"
                 + (f" (call {', '.join(dict.fromkeys(calls))})" if len(probes) > 1 else "")
                 for (one, pre), calls in probes.items()]
        out += [f"## {target}: {workload}" + (f" ({k} kernels)" if k > 1 else ""), "",
                "One full compile " + "; ".join(probe) + ".", "",
                "| P | N | naive serial s | naive parallel s | fly s | ideal(P) s | eff | "
                "x serial | x parallel | CPU s par / fly | RSS MB par (sum) / fly | failed |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for c in rows:
            s = cell_stats(c)
            out.append(
                f"| {c['P']} | {label(c)} | {fmt(s['serial'])}{' est' if s['serial_est'] else ''} | "
                f"{fmt(s['parallel'])} | {fmt(s['fly'])} | {fmt(s['ideal'])} | "
                f"{fmt(s['eff'])} | {fmt(s['x_serial'], '.1f')} | {fmt(s['x_parallel'])} | "
                f"{fmt(s['cpu_parallel'], '.1f')} / {fmt(s['cpu_fly'], '.1f')} | "
                f"{fmt(s['rss_parallel'], '.0f')} ({fmt(s['rss_parallel_sum'], '.0f')}) / "
                f"{fmt(s['rss_fly'], '.0f')} | {s['failures']} |")
        wheres = [(c, where(c, not c.get("per_kernel_fly",
                                          data["args"].get("per_kernel_fly"))))
                  for c in rows]
        wheres = [(c, w) for c, w in wheres if w]
        continued = any(w["continued"] is not None for _, w in wheres)
        out += ["", "Where fly's time went (last repetition): phase 1 and 2 from the "
                "manifest; util = sum of variant replay time / (P x phase 2); threads = "
                "threads of fly-tune that used CPU; busy = CPU s of the busiest and of the "
                "P-th busiest thread; cores = busy cores sampled over the run (mean / max) "
                "and the share of samples below P/2; children = processes it started. "
                "Several kernels in one sweep: phases of the longest kernel's manifest, "
                "util over all variants." + (
                    " continued = objects compiled from a kept code generation (the "
                    "manifests' codegen_continued; each compile once; - where no variant "
                    "said so: none continued, or a fly-tune before that key)."
                    if continued else ""), "",
                "| P | N | phase 1 ms | phase 2 ms | util | threads | busy max / P-th s | "
                "cores mean / max | < P/2 | ISA shared | " + ("continued | " if continued else "")
                + "children |",
                "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if continued else "")
                + "---|"]
        for c, w in wheres:
            out.append(
                f"| {c['P']} | {label(c)} | {w['prefix_ms']:.0f} | {w['replay_ms']:.0f} | "
                f"{fmt(w['util'])} | {w['threads'] or '-'} | {fmt(w['busy_max'], '.1f')} / "
                f"{fmt(w['busy_p'], '.1f')} | {fmt(w['cores_mean'], '.1f')} / "
                f"{fmt(w['cores_max'], '.1f')} | {fmt(w['below_half'], '.0%')} | "
                f"{w['isa_shared']} | "
                + (f"{'-' if w['continued'] is None else w['continued']} | " if continued else "")
                + f"{w['children']} |")
        out.append("")
    cross = [c for c in cells if c["workload"].startswith("gemm ")]
    if cross:
        ns = sorted({c["N"] for c in cross})
        out += ["## Where two-phase pays: kernel compile time x N -> gain", "",
                "gain = naive parallel wall / fly wall at the same P (> 1: fly is faster); "
                "in parentheses the same ratio of CPU time, which other load on the "
                "machine does not move. "
                "Kernels from tiny to GEMM-scale; prefix share = T_pre / one compile.", "",
                "| target | kernel | one compile s | prefix share | P | "
                + " | ".join(f"N={n}" for n in ns) + " |",
                "|---|---|---|---|---|" + "---|" * len(ns)]
        seen = []
        for c in cross:
            key = (c["target"], c["workload"])
            if key in seen:
                continue
            seen.append(key)
            row = {}
            for x in cross:
                if (x["target"], x["workload"]) == key:
                    st = cell_stats(x)
                    row[x["N"]] = (f"{fmt(st['x_parallel'])} "
                                   f"({fmt(ratio(st['cpu_parallel'], st['cpu_fly']))})")
            share = c["t_pre_s"] / c["t_one_s"] if c["t_one_s"] else None
            out.append(f"| {c['target']} | {c['workload'].split(' ', 1)[1]} | "
                       f"{c['t_one_s']:.2f} | {fmt(share, '.0%')} | {c['P']} | "
                       + " | ".join(row.get(n, "-") for n in ns) + " |")
        out.append("")
        # The same from measured CPU components, for N not run: naive costs
        # t = CPU per full compile; fly costs T_pre + N x c, c = (fly CPU -
        # T_pre) / N; both spread perfectly over P.
        model_ns = [1, 4, 16, 64, 256, 1024]
        out += ["Modelled from the measured CPU components (naive: ceil(N / P) x t; fly: "
                "T_pre + ceil(N / P) x c, with t = naive CPU per compile, T_pre = t x prefix share, "
                "c = (fly CPU - T_pre) / N at the largest N run, compiles spread evenly over P; "
                "on a loaded machine the prefix share, from probe wall times, is rough; fly's "
                "own process start is spread over the N run into c, so small N flatter fly; "
                "naive's t includes each process's start):", "",
                "| target | kernel | t s | T_pre s | c s | P | "
                + " | ".join(f"N={n}" for n in model_ns) + " |",
                "|---|---|---|---|---|---|" + "---|" * len(model_ns)]
        for key in seen:
            runs = [x for x in cross if (x["target"], x["workload"]) == key]
            x = max(runs, key=lambda c: c["N"])
            st = cell_stats(x)
            if not st["cpu_parallel"] or not st["cpu_fly"]:
                continue
            t = st["cpu_parallel"] / x["N"]
            # T_pre in CPU terms: its share of one compile (probe walls).
            pre = t * min(x["t_pre_s"] / x["t_one_s"], 1.0) if x["t_one_s"] else 0.0
            c = max(st["cpu_fly"] - pre, 0) / x["N"]
            p = x["P"]
            gains = [(-(-n // p) * t) / (pre + -(-n // p) * c) for n in model_ns]
            out.append(f"| {key[0]} | {key[1].split(' ', 1)[1]} | {t:.2f} | {pre:.3f} | {c:.2f} | "
                       f"{p} | " + " | ".join(f"{g:.2f}" for g in gains) + " |")
        out.append("")
    if data["skipped"]:
        out += ["## Skipped (budget)", ""]
        out += [f"- {s['what']} (estimate {s['estimate_s']} s)" for s in data["skipped"]]
        out.append("")
    return "\n".join(out)
