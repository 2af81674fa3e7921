#!/usr/bin/env python3
"""Scaling run: naive serial, naive parallel and fly-tune, side by side.

For each target (rocdl, nvvm), workload and (P, N) it measures, alternating
the order per repetition:

  naive-serial    N full compiles one after another (fly-opt, the preset
                  pipeline unsplit, the hint set given to its own binary
                  pass: no snapshot, no replay)
  naive-parallel  the same N compiles, P processes at a time
  fly             fly-tune --jobs=P over the N hint sets (--no-cache)

wall, CPU (user+sys of the process and its children, from wait4) and peak
RSS (the largest process; for naive-parallel also the sampled sum over the
processes alive at once). ideal(P) = T_pre + sum T_bin / P, with T_pre the
manifest's prefix time of fly at P=1 and T_bin = (one naive compile) - T_pre
per hint set. Efficiency = ideal(P) / fly wall.

Where fly's time goes (item 3 of the issue): a sampler reads /proc every
--sample-ms for the process tree: CPU ticks per thread (busy threads, the
spread of busy time over threads), child processes started (ptxas, ld.lld),
and busy cores over time; the manifest gives each variant's replay time and
how many shared its compile. utilisation = sum of variant replay time /
(P x phase-2 wall).

Needs only Python 3 and the tools (statically linked fly-tune/fly-opt
carried to a bare node work). Writes at most 8 files to --out: scaling.json,
RESULTS-H200.md (or --report), log.txt and the generated workloads' tar.

  bench/scaling.py --fly-tune build/bin/fly-tune --fly-opt build/bin/fly-opt \\
      --rocm-toolkit build/rocm-toolkit --cuda /usr/local/cuda --out /tmp/o \\
      --P 1,2 --grid default --budget-s 480

--grid default: the P series at N=64 and the N series at P=max(P), which
fits a 9-minute call on 16 cores; --grid full: every (P, N); --grid
P:N,P:N: those pairs. Naive serial runs at N <= --serial-max-n only (it is
linear in N: larger N are scaled from it, marked "est"). A measurement
whose estimate would pass --budget-s is skipped and listed in the report.
"""

import argparse
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time

import scaling_report  # beside this file, so on sys.path[0] when run

HERE = os.path.dirname(os.path.abspath(__file__))
CLK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")

# Workloads: name -> (generator args per target). The GEMMs take about a
# second per compile on one core; "dsl" is prefix-heavy (a small kernel
# under 18000 steps of foldable front-end IR).
GEMM = {
    "rocdl": ["gen_gemm.py", "--target", "rocdl", "--tiles", "128x256", "--unroll", "16"],
    "nvvm": ["gen_gemm.py", "--target", "nvvm", "--tiles", "128x64", "--unroll", "8"],
}
DSL = ["gen_workload.py", "--kernels", "1", "--rows", "2", "--vec", "4", "--fold", "18000"]
# Config space: kernel variants (tile shapes), 16 hint sets each.
CONFIG_TILES = {
    "rocdl": ["64x64", "64x128", "128x128", "128x256"],
    "nvvm": ["32x32", "64x32", "64x64", "128x64"],
}
CONFIG_UNROLL = {"rocdl": "8", "nvvm": "4"}
# Crossover: kernels from tiny to GEMM-scale.
CROSSOVER = {
    "rocdl": [("32x32", "1"), ("64x64", "4"), ("128x128", "8"), ("128x256", "16")],
    "nvvm": [("16x8", "1"), ("32x32", "4"), ("64x64", "4"), ("128x64", "8")],
}


def hint_sets(target, n):
    """n distinct hint sets, the default first; deterministic."""
    out = [{}]
    if target == "rocdl":
        regs = [None] + list(range(256, 23, -8))
        for w in [None] + list(range(1, 11)):
            for r in regs:
                h = {}
                if w:
                    h["waves_per_eu"] = w
                if r:
                    h["maxnreg"] = r
                if h:
                    out.append(h)
    else:
        for o in [None, 1, 2]:
            for r in [None] + list(range(255, 23, -1)):
                h = {}
                if r:
                    h["maxnreg"] = r
                if o is not None:
                    h["O"] = o
                if h:
                    out.append(h)
    if n > len(out):
        raise SystemExit(f"scaling.py: at most {len(out)} hint sets for {target}")
    return out[:n]


def is_copy(v):
    """A manifest variant that copied an earlier one's objects, never
    compiled (duplicate_of with no replay time)."""
    return v.get("duplicate_of") is not None and not v.get("replay_ms")


def codegen_continued(variants):
    """How many ROCDL compiles of a manifest's variants continued a kept code
    generation, each compile once: ok variants, not copies, not those
    finished from another's ISA; None where no variant says (a fly-tune
    before the key)."""
    if not any("codegen_continued" in v for v in variants):
        return None
    return sum(v.get("codegen_continued", 0) for v in variants
               if v.get("status") == "ok" and v.get("isa_from") in (None, v["index"])
               and not is_copy(v))


def hint_text(h):
    return ",".join(f"{k}={v}" for k, v in h.items())


# -- process-tree sampling -------------------------------------------------

def read_stat(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    # comm may hold spaces and parentheses: split after the last ')'.
    rest = text[text.rindex(")") + 2:].split()
    return {"ppid": int(rest[1]), "ticks": int(rest[11]) + int(rest[12]),
            "rss": int(rest[21]) * PAGE, "comm": text[text.index("(") + 1:text.rindex(")")]}


class Sampler(threading.Thread):
    """Samples the process tree under `root` every `period` seconds."""

    def __init__(self, root, period, skip_root=False):
        super().__init__(daemon=True)
        self.root, self.period, self.skip_root = root, period, skip_root
        self.stop = threading.Event()
        self.thread_ticks = {}   # (pid, tid) -> last ticks seen
        self.proc_seen = {}      # pid -> comm, the last seen
        self.timeline = []       # (t, busy cores since the last sample, rss, procs)
        self.peak_rss_sum = 0

    def tree(self):
        parent = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                st = read_stat(f"/proc/{name}/stat")
                if st:
                    parent[int(name)] = st
        members, frontier = [], [self.root]
        children = {}
        for pid, st in parent.items():
            children.setdefault(st["ppid"], []).append(pid)
        while frontier:
            pid = frontier.pop()
            if pid in parent:
                members.append(pid)
            frontier.extend(children.get(pid, []))
        return [(pid, parent[pid]) for pid in members]

    def run(self):
        t0 = time.monotonic()
        last = t0
        while not self.stop.is_set():
            total_ticks = total_rss = 0
            procs = self.tree()
            for pid, st in procs:
                if self.skip_root and pid == self.root:
                    continue
                # A child sampled between fork and exec still has the name
                # of the thread that forked it: the later name wins.
                self.proc_seen[pid] = st["comm"]
                total_rss += st["rss"]
                try:
                    tids = os.listdir(f"/proc/{pid}/task")
                except OSError:
                    continue
                for tid in tids:
                    ts = read_stat(f"/proc/{pid}/task/{tid}/stat")
                    if ts:
                        key = (pid, int(tid))
                        # CPU since the last sample (a thread that ended in
                        # between loses its last interval only).
                        total_ticks += ts["ticks"] - self.thread_ticks.get(key, 0)
                        self.thread_ticks[key] = ts["ticks"]
            self.peak_rss_sum = max(self.peak_rss_sum, total_rss)
            now = time.monotonic()
            self.timeline.append((now - t0, total_ticks / CLK / max(now - last, 1e-3),
                                  total_rss, len(procs)))
            last = now
            self.stop.wait(self.period)

    def summary(self, root_pid):
        ticks = sorted((t for (pid, _), t in self.thread_ticks.items() if pid == root_pid),
                       reverse=True)
        busy = [t / CLK for t in ticks if t > 0]
        others = {}
        for pid, comm in self.proc_seen.items():
            if pid != root_pid:
                others[comm] = others.get(comm, 0) + 1
        # Busy cores over time (a lower bound: short-lived children that
        # start and end between two samples are not seen).
        cores = [round(c, 2) for _, c, _, _ in self.timeline[1:]]
        return {"threads_busy": len(busy),
                "thread_busy_s": [round(b, 2) for b in busy[:32]],
                "children_started": others,
                "busy_cores": cores,
                "peak_rss_sum_mb": round(self.peak_rss_sum / 2**20, 1)}


def measure(cmds, parallel, sample_ms, log, deadline=None):
    """Runs `cmds` (lists), `parallel` at a time; wall, CPU, RSS, samples.
    At `deadline` (time.monotonic()) the running commands are killed, the
    rest not started, and the result says "cut"."""
    start = time.monotonic()
    cut = False
    pending = list(cmds)
    running = {}
    cpu = 0.0
    peak = 0
    failures = []
    # One sampler over all our children (this process left out).
    sampler = Sampler(os.getpid(), sample_ms / 1000.0, skip_root=True) if sample_ms else None
    if sampler:
        sampler.start()
    first_pid = None
    while pending or running:
        if deadline and time.monotonic() > deadline and not cut:
            cut = True
            pending = []
            for proc, _ in running.values():
                os.killpg(proc.pid, 9)
        while pending and len(running) < parallel:
            cmd = pending.pop(0)
            proc = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)
            first_pid = first_pid or proc.pid
            running[proc.pid] = (proc, cmd)
        pid, status, ru = os.wait4(-1, os.WNOHANG)
        if pid == 0:
            time.sleep(0.01)
            continue
        if pid not in running:
            continue
        proc, cmd = running.pop(pid)
        proc.returncode = os.waitstatus_to_exitcode(status)
        cpu += ru.ru_utime + ru.ru_stime
        peak = max(peak, ru.ru_maxrss)
        if proc.returncode not in (0,):
            failures.append({"cmd": " ".join(cmd), "rc": proc.returncode})
    wall = time.monotonic() - start
    out = {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
           "peak_rss_mb": round(peak / 1024, 1), "failures": failures, "cut": cut}
    if sampler:
        sampler.stop.set()
        sampler.join()
        out["samples"] = [sampler.summary(first_pid)]
        out["peak_rss_sum_mb"] = out["samples"][0]["peak_rss_sum_mb"]
    return out


# -- the run ---------------------------------------------------------------

class Run:
    def __init__(self, args):
        self.a = args
        self.work = os.path.abspath(args.work)
        os.makedirs(self.work, exist_ok=True)
        os.makedirs(args.out, exist_ok=True)
        self.log = open(os.path.join(args.out, "log.txt"), "w")
        self.t0 = time.monotonic()
        self.results = []
        self.skipped = []
        self.single = {}  # (target, workload) -> one naive compile (s)
        self.prefix = {}  # (target, workload) -> T_pre (s)
        self.env = dict(os.environ, FLY_ENABLE_CACHE="0")

    def deadline(self):
        return self.t0 + self.a.budget_s

    def elapsed(self):
        return time.monotonic() - self.t0

    def say(self, text):
        line = f"[{self.elapsed():6.1f} s] {text}"
        print(line, flush=True)
        self.log.write(line + "\n")
        self.log.flush()

    def gen(self, name, argv):
        path = os.path.join(self.work, name + ".mlir")
        if not os.path.exists(path):
            subprocess.run([sys.executable, os.path.join(HERE, argv[0])] + argv[1:] + ["-o", path],
                           check=True)
        return path

    def toolkit(self, target):
        return self.a.rocm_toolkit if target == "rocdl" else self.a.cuda

    def chip(self, target):
        return self.a.rocdl_chip if target == "rocdl" else self.a.nvvm_chip

    def hints_file(self, target, n, tag=""):
        path = os.path.join(self.work, f"hints-{target}-{n}{tag}.json")
        with open(path, "w") as f:
            json.dump(hint_sets(target, n), f)
        return path

    def pipeline(self, target, inp):
        """The preset's pipeline, from fly-tune's own manifest (one source)."""
        key = (target, inp)
        if not hasattr(self, "_pipes"):
            self._pipes = {}
        if key not in self._pipes:
            out = os.path.join(self.work, "probe-" + os.path.basename(inp) + "-" + target)
            subprocess.run(self.fly_cmd(target, inp, self.hints_file(target, 1), 1, out),
                           check=True, stdout=self.log, stderr=self.log, env=self.env)
            with open(os.path.join(out, "manifest.json")) as f:
                m = json.load(f)
            self._pipes[key] = m["pipeline"]
            self.prefix[key] = m["prefix_ms"] / 1000.0
            shutil.rmtree(out, ignore_errors=True)
        return self._pipes[key]

    def fly_cmd(self, target, inp, hints, p, out):
        inps = inp if isinstance(inp, list) else [inp]
        return [self.a.fly_tune, *inps, f"--target={target}:{self.chip(target)}",
                f"--toolkit={self.toolkit(target)}", f"--hints-file={hints}",
                f"--jobs={p}", f"--out-dir={out}", "--no-cache", "--quiet"]

    def naive_cmds(self, target, inp, hints):
        pipe = self.pipeline(target, inp)
        cmds = []
        for i, h in enumerate(hints):
            self.outputs = getattr(self, "outputs", 0) + 1
            slot = self.outputs % 512
            if not self.a.fly_opt:
                # One fly-tune process per compile with a single hint set: the
                # prefix and one binary pass, as a full compile runs them.
                one = os.path.join(self.work, f"naive-{slot}.json")
                with open(one, "w") as f:
                    json.dump([h], f)
                cmds.append(self.fly_cmd(target, inp, one, 1,
                                         os.path.join(self.work, f"naive-{slot}")))
                continue
            cmd = [self.a.fly_opt, inp, f"--pass-pipeline={pipe}",
                   "-o", os.path.join(self.work, f"naive-{slot}.mlir")]
            if h:
                cmd.append(f"--fly-hints={hint_text(h)}")
            cmds.append(cmd)
        return cmds

    def probe(self, target, name, inp):
        """One full compile (the cost model behind the budget and ideal)."""
        key = (target, name)
        if key not in self.single:
            self.pipeline(target, inp)
            r = measure(self.naive_cmds(target, inp, [{}]), 1, 0, self.log)
            self.single[key] = r["wall_s"]
            self.say(f"probe {target} {name}: one full compile {r['wall_s']:.2f} s, "
                     f"T_pre {self.prefix[(target, inp)]:.3f} s")
        return self.single[key]

    def fits(self, what, estimate):
        if self.elapsed() + estimate > self.a.budget_s:
            self.skipped.append({"what": what, "estimate_s": round(estimate, 1)})
            self.say(f"skip {what} (estimate {estimate:.0f} s, budget left "
                     f"{self.a.budget_s - self.elapsed():.0f} s)")
            return False
        return True

    def fly_run(self, target, inps, hints_path, p, tag):
        """fly-tune over the inputs: several are ONE sweep (one process, each
        kernel's phase 1 side by side, every replay on one pool), its
        outputs in <out>/<kernel stem>; with --per-kernel-fly one fly-tune
        per kernel in turn."""
        total = {"wall_s": 0.0, "cpu_s": 0.0, "peak_rss_mb": 0.0, "failures": [],
                 "samples": [], "manifests": []}
        if len(inps) > 1 and not self.a.per_kernel_fly:
            out = os.path.join(self.work, f"fly-{tag}-sweep")
            shutil.rmtree(out, ignore_errors=True)
            # fly-tune's folders: each input's stem, -2, -3... when repeated.
            stems, taken = [], set()
            for i in inps:
                stem = base = os.path.splitext(os.path.basename(i))[0]
                n = 2
                while stem in taken:
                    stem, n = f"{base}-{n}", n + 1
                taken.add(stem)
                stems.append(os.path.join(out, stem))
            runs = [(inps, out, stems)]
        else:
            runs = []
            for k, inp in enumerate(inps):
                out = os.path.join(self.work, f"fly-{tag}-{k}")
                shutil.rmtree(out, ignore_errors=True)
                runs.append((inp, out, [out]))
        for inp, out, dirs in runs:
            r = measure([self.fly_cmd(target, inp, hints_path, p, out)], 1, self.a.sample_ms,
                        self.log, self.deadline())
            total["wall_s"] += r["wall_s"]
            total["cpu_s"] += r["cpu_s"]
            total["peak_rss_mb"] = max(total["peak_rss_mb"], r["peak_rss_mb"])
            total["failures"] += r["failures"]
            total["cut"] = total.get("cut", False) or r["cut"]
            total["samples"] += r.get("samples", [])
            for d in dirs:
                self.read_manifest(d, p, total)
            shutil.rmtree(out, ignore_errors=True)
        for k in ("wall_s", "cpu_s"):
            total[k] = round(total[k], 3)
        return total

    def read_manifest(self, out, p, total):
        """One kernel's manifest.json: phase times and pool utilisation."""
        try:
            with open(os.path.join(out, "manifest.json")) as f:
                m = json.load(f)
            vs = [v for v in m["variants"] if v.get("status") == "ok"]
            busy = sum(v.get("replay_ms", 0) / max(v.get("replayed_with", 1), 1) for v in vs)
            total["manifests"].append({
                "prefix_ms": m.get("prefix_ms"), "replay_ms": m.get("replay_ms"),
                "total_ms": m.get("total_ms"), "variants_ok": len(vs),
                "variants": len(m["variants"]),
                "variant_busy_ms": round(busy, 1),
                "utilisation": round(busy / (p * m["replay_ms"]), 3)
                if m.get("replay_ms") else None,
                "isa_shared": sum(1 for v in vs if v.get("isa_from") not in (None, v["index"])),
                "codegen_continued": codegen_continued(m["variants"]),
                # Copies of an earlier variant's objects, never compiled.
                "copies": sum(1 for v in vs if is_copy(v)),
            })
        except (OSError, ValueError, KeyError):
            pass

    def compare(self, target, workload, inps, n, p, reps, with_serial):
        """One (target, workload, P, N) cell: naive(-parallel) and fly."""
        hints = hint_sets(target, n)
        hpath = self.hints_file(target, n)
        what = scaling_report.cell_name(target, workload, p, n)
        if self.elapsed() >= self.a.budget_s:
            return self.fits(what, 0)
        t1 = sum(self.probe(target, f"{workload}#{k}", inp) for k, inp in enumerate(inps))
        est = reps * (len(hints) * t1 / p * 1.3 + len(hints) * t1 / p * 0.8)
        if with_serial and p > 1:
            est += reps * len(hints) * t1
        if not self.fits(what, est):
            return
        cell = {"target": target, "workload": workload, "P": p, "N": n,
                "kernels": len(inps), "t_one_s": round(t1, 3),
                "t_pre_s": round(sum(self.prefix[(target, i)] for i in inps), 3), "reps": []}
        for rep in range(reps):
            # At P=1 naive parallel is naive serial: measured once.
            modes = ["naive-parallel", "fly"] if p > 1 else ["naive-serial", "fly"]
            if with_serial and p > 1:
                modes.insert(0, "naive-serial")
            if rep % 2:
                modes.reverse()
            row = {}
            for mode in modes:
                if mode == "fly":
                    row[mode] = self.fly_run(target, inps, hpath, p, f"{target}-{p}-{n}")
                else:
                    cmds = [c for inp in inps for c in self.naive_cmds(target, inp, hints)]
                    row[mode] = measure(cmds, 1 if mode == "naive-serial" else p,
                                        self.a.sample_ms if mode == "naive-parallel" else 0,
                                        self.log, self.deadline())
                    row[mode].pop("samples", None)
                self.say(f"{what} rep {rep} {mode}: {row[mode]['wall_s']:.2f} s wall, "
                         f"{row[mode]['cpu_s']:.2f} s CPU, {row[mode]['peak_rss_mb']:.0f} MB")
            cell["reps"].append(row)
        self.results.append(cell)

    def run(self):
        a = self.a
        if a.small:
            # The smallest kernels everywhere: a smoke test of the harness.
            for t, (tile, unroll) in (("rocdl", ("32x32", "1")), ("nvvm", ("16x8", "1"))):
                GEMM[t] = ["gen_gemm.py", "--target", t, "--tiles", tile, "--unroll", unroll]
                CONFIG_TILES[t] = [tile] * 4
                CONFIG_UNROLL[t] = unroll
                CROSSOVER[t] = CROSSOVER[t][:1]
            global DSL
            DSL = DSL[:-1] + ["100"]
        Ps = [int(x) for x in a.P.split(",")]
        Ns = [int(x) for x in a.N.split(",")]
        if a.grid == "full":
            pairs = [(p, n) for n in Ns for p in Ps]
        elif a.grid == "default":
            # Most telling first (a budget cut drops the least): the top P at
            # the middle N, the N series at the top P, then P downwards.
            mid = 64 if 64 in Ns else Ns[len(Ns) // 2]
            top = max(Ps)
            pairs = [(top, mid)] + [(top, n) for n in Ns if n != mid] + \
                [(p, mid) for p in sorted(Ps, reverse=True) if p != top]
        else:
            pairs = [tuple(int(v) for v in x.split(":")) for x in a.grid.split(",")]
        targets = a.targets.split(",")
        workloads = a.workloads.split(",")
        self.say(f"targets {targets}, workloads {workloads}, (P, N) {pairs}, "
                 f"budget {a.budget_s} s")
        # Alternate targets within each step so a budget cut hits both alike.
        if "gemm" in workloads:
            for p, n in pairs:
                for target in targets:
                    inp = self.gen(f"gemm-{target}", GEMM[target])
                    self.compare(target, "gemm", [inp], n, p, a.reps,
                                 with_serial=n <= a.serial_max_n)
        top = max(Ps)
        if "config" in workloads:
            for target in targets:
                inps = [self.gen(f"config-{target}-{t}",
                                 ["gen_gemm.py", "--target", target, "--tiles", t,
                                  "--unroll", CONFIG_UNROLL[target]])
                        for t in CONFIG_TILES[target]]
                self.compare(target, "config", inps, a.config_n, top, a.reps, with_serial=False)
        if "dsl" in workloads:
            for target in targets:
                inp = self.gen("dsl", DSL)
                self.compare(target, "dsl", [inp], 64 if 64 in Ns else max(Ns), top, a.reps,
                             with_serial=False)
        if "crossover" in workloads:
            for n in a.crossover_n:
                for target in targets:
                    for tile, unroll in CROSSOVER[target]:
                        inp = self.gen(f"x-{target}-{tile}-u{unroll}",
                                       ["gen_gemm.py", "--target", target, "--tiles", tile,
                                        "--unroll", unroll])
                        self.compare(target, f"gemm {tile} u{unroll}", [inp], n, top, a.reps,
                                     with_serial=False)

    def save(self):
        data = {"machine": machine(), "args": vars(self.a), "elapsed_s": round(self.elapsed(), 1),
                "command": " ".join(["bench/scaling.py"] + self.argv),
                "single_s": {f"{t} {w}": v for (t, w), v in self.single.items()},
                "results": self.results, "skipped": self.skipped}
        with open(os.path.join(self.a.out, "scaling.json"), "w") as f:
            json.dump(data, f, indent=1)
        with tarfile.open(os.path.join(self.a.out, "workloads.tar.gz"), "w:gz") as tar:
            for name in sorted(os.listdir(self.work)):
                if name.endswith(".mlir") and not name.startswith("naive-") or \
                        name.startswith("hints-"):
                    tar.add(os.path.join(self.work, name), arcname=name)
        return data


def machine():
    info = {"host": platform.node(), "kernel": platform.release(),
            "python": platform.python_version(), "cpus": os.cpu_count()}
    try:
        info["affinity"] = len(os.sched_getaffinity(0))
        info["loadavg"] = [round(x, 1) for x in os.getloadavg()]
        with open("/proc/cpuinfo") as f:
            m = re.search(r"model name\s*:\s*(.*)", f.read())
        info["cpu"] = m.group(1) if m else "?"
        with open("/proc/meminfo") as f:
            info["mem_gb"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except (OSError, AttributeError):
        pass
    try:
        info["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                     capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        info["gpu"] = None
    return info


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fly-tune", default="", help="the fly-tune under test (not with --report-only)")
    p.add_argument("--fly-opt", default="",
                   help="the naive compiler; without it each naive compile is one "
                        "fly-tune process with a single hint set and --no-cache")
    p.add_argument("--rocm-toolkit", default="")
    p.add_argument("--cuda", default="/usr/local/cuda")
    p.add_argument("--rocdl-chip", default="gfx942")
    p.add_argument("--nvvm-chip", default="sm_90")
    p.add_argument("--targets", default="rocdl,nvvm")
    p.add_argument("--workloads", default="gemm,config,dsl",
                   help="any of gemm, config, dsl, crossover (default gemm,config,dsl)")
    p.add_argument("--P", default="1,2,4,8,16")
    p.add_argument("--N", default="16,64,256")
    p.add_argument("--grid", default="default")
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--serial-max-n", type=int, default=16)
    p.add_argument("--crossover-n", default="16,64",
                   type=lambda s: [int(x) for x in s.split(",")])
    p.add_argument("--sample-ms", type=int, default=100,
                   help="/proc sampling period of fly and naive-parallel runs (0: off)")
    p.add_argument("--budget-s", type=float, default=480)
    p.add_argument("--per-kernel-fly", action="store_true",
                   help="run fly-tune once per kernel of a multi-kernel workload, one after "
                        "another (default: one multi-kernel sweep)")
    p.add_argument("--config-n", type=int, default=16,
                   help="hint sets per kernel of the config-space workload (default 16)")
    p.add_argument("--small", action="store_true",
                   help="smallest kernels only (a smoke test of the harness)")
    p.add_argument("--work", default="/tmp/fly-scaling-work")
    p.add_argument("--out", required=True)
    p.add_argument("--report", default=None, help="default: <out>/RESULTS-H200.md")
    p.add_argument("--report-only", action="store_true",
                   help="rewrite the report from <out>/scaling.json")
    p.add_argument("--merge", action="append", default=[], metavar="DIR",
                   help="with --report-only: DIR/scaling.json too (another call on the "
                        "same node), its cells in the same tables; repeatable")
    a = p.parse_args(argv)
    for tool in (a.fly_tune, a.fly_opt):
        if tool and not a.report_only and not os.access(tool, os.X_OK):
            p.error(f"{tool}: not an executable")
    report = a.report or os.path.join(a.out, "RESULTS-H200.md")
    if a.merge and not a.report_only:
        p.error("--merge needs --report-only")
    if not a.report_only and not a.fly_tune:
        p.error("--fly-tune is needed to run")
    if a.report_only:
        runs = []
        for folder in [a.out] + a.merge:
            with open(os.path.join(folder, "scaling.json")) as f:
                runs.append(json.load(f))
        data = scaling_report.merge(runs) if a.merge else runs[0]
    else:
        if "rocdl" in a.targets and not a.rocm_toolkit:
            p.error("--rocm-toolkit is needed for rocdl")
        run = Run(a)
        run.argv = argv
        # A SIGTERM (a device call's time limit) still saves what was measured.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))
        try:
            run.run()
        except (SystemExit, KeyboardInterrupt):
            run.say("interrupted: writing what was measured")
        data = run.save()
    with open(report, "w") as f:
        f.write(scaling_report.render(data, data.get("command") or
                                      " ".join(["bench/scaling.py"] + argv)))
    print(f"wrote {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
