#!/usr/bin/env python3
"""Autotune a real kernel on an H200 from Python, and measure it side by side.

One call, ``Autotuner.tune(A, B, C)``, tunes a tiled f32 matmul written in
upstream gpu / scf / memref / vector dialects over 4 kernel variants (the
per-thread tile: rows x columns) x 8 backend hint sets (maxnreg), compiled
for nvvm:sm_90 on 16 cores and timed on torch tensors as the variants come
out of the compiler, each checked against torch.matmul before it may win.

The same 32 configs are then tuned the two ways DSLs do it today, timing
with the same do_bench and the same check:
  (a) sequential: every config compiled fully (its whole pipeline, no
      snapshot, no cache) one after another, then all timed;
  (b) 16 processes: every config compiled fully in a pool of 16 processes,
      then all timed;
  (c) fly-snapshot: one sweep (the pipeline before gpu-module-to-binary once
      per kernel variant, 16 jobs, no cache), streaming into timing.
Reported per mode: total wall time and time to the first timed variant.
Writes autotune.json and autotune.md to --out (default $OUT).

    PYTHONPATH=<installed fly_snapshot> python3 examples/h200/autotune.py
    python3 examples/h200/autotune.py --family scale --fake-driver <libcuda.so.1>   # no GPU
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from fly_snapshot import Compiler, autotune as at, runtime
from fly_snapshot.errors import CompileError


def matmul_source(tm: int, tn: int, n: int) -> str:
    """C = A B for n x n f32 memrefs: thread (tx, ty) of block (bx, by)
    computes the tm x tn tile of C at row (by * 16 + ty) * tm, column
    (bx * 16 + tx) * tn, its tm accumulators (vector<tn x f32>) kept in
    registers across the K loop."""
    m = "memref<%dx%dxf32>" % (n, n)
    vec = "vector<%dxf32>" % tn
    accs = ", ".join("%%acc%d = %%zero" % i for i in range(tm))
    types = ", ".join([vec] * tm)
    body = []
    for i in range(tm):
        body.append("""        %%ri%(i)d = arith.constant %(i)d : index
        %%row%(i)dx = arith.addi %%row0, %%ri%(i)d : index
        %%a%(i)d = memref.load %%A[%%row%(i)dx, %%k] : %(m)s
        %%ab%(i)d = vector.broadcast %%a%(i)d : f32 to %(vec)s
        %%n%(i)d = vector.fma %%ab%(i)d, %%b, %%acc%(i)d : %(vec)s""" % dict(i=i, m=m, vec=vec))
    stores = []
    for i in range(tm):
        stores.append("""      %%ci%(i)d = arith.constant %(i)d : index
      %%crow%(i)d = arith.addi %%row0, %%ci%(i)d : index
      vector.store %%res#%(i)d, %%C[%%crow%(i)d, %%col0] : %(m)s, %(vec)s""" % dict(
            i=i, m=m, vec=vec))
    return """module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @tile_matmul(%%A: %(m)s, %%B: %(m)s, %%C: %(m)s) kernel {
      %%c0 = arith.constant 0 : index
      %%c1 = arith.constant 1 : index
      %%cK = arith.constant %(n)d : index
      %%cR = arith.constant %(tm)d : index
      %%cV = arith.constant %(tn)d : index
      %%tx = gpu.thread_id x
      %%ty = gpu.thread_id y
      %%bx = gpu.block_id x
      %%by = gpu.block_id y
      %%dx = gpu.block_dim x
      %%dy = gpu.block_dim y
      %%gx0 = arith.muli %%bx, %%dx : index
      %%gx = arith.addi %%gx0, %%tx : index
      %%gy0 = arith.muli %%by, %%dy : index
      %%gy = arith.addi %%gy0, %%ty : index
      %%row0 = arith.muli %%gy, %%cR : index
      %%col0 = arith.muli %%gx, %%cV : index
      %%zero = arith.constant dense<0.0> : %(vec)s
      %%res:%(tm)d = scf.for %%k = %%c0 to %%cK step %%c1 iter_args(%(accs)s) -> (%(types)s) {
        %%b = vector.load %%B[%%k, %%col0] : %(m)s, %(vec)s
%(body)s
        scf.yield %(yields)s : %(types)s
      }
%(stores)s
      gpu.return
    }
  }
}
""" % dict(m=m, n=n, tm=tm, tn=tn, vec=vec, accs=accs, types=types, body="\n".join(body),
           yields=", ".join("%%n%d" % i for i in range(tm)), stores="\n".join(stores))


BLOCK = 16


def launch_matmul(kernel: runtime.Kernel, meta: Dict[str, int], a: Any, b: Any, c: Any) -> None:
    n = a.shape[0]
    kernel.launch(grid=(n // (BLOCK * meta["TN"]), n // (BLOCK * meta["TM"])),
                  block=(BLOCK, BLOCK),
                  args=[runtime.memref(a), runtime.memref(b), runtime.memref(c)])


SCALE_1D = """module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale_1d(%x: memref<?xf32>, %y: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %tx = gpu.thread_id x
      %bx = gpu.block_id x
      %dx = gpu.block_dim x
      %b0 = arith.muli %bx, %dx : index
      %i = arith.addi %b0, %tx : index
      %n = memref.dim %x, %c0 : memref<?xf32>
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %two = arith.constant 2.0 : f32
        %one = arith.constant 1.0 : f32
        %v = memref.load %x[%i] : memref<?xf32>
        %m = arith.mulf %v, %two : f32
        %r = arith.addf %m, %one : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
"""


def launch_scale(kernel: runtime.Kernel, meta: Dict[str, int], x: Any, y: Any) -> None:
    n = x.shape[0]
    kernel.launch(grid=(-(-n // meta["BLOCK"]),), block=(meta["BLOCK"],),
                  args=[runtime.memref(x), runtime.memref(y)])


def family(name: str, n: int) -> Dict[str, Any]:
    """Kernel configs, the launch, the hint space, inputs and the reference
    of one kernel family."""
    if name == "matmul":
        import torch
        configs = [{"TM": tm, "TN": tn} for tm in (4, 8) for tn in (8, 16)]
        a = torch.rand(n, n, device="cuda")
        b = torch.rand(n, n, device="cuda")
        c = torch.zeros(n, n, device="cuda")
        return dict(configs=configs, source=lambda meta: matmul_source(meta["TM"], meta["TN"], n),
                    launch=launch_matmul, args=(a, b, c), outputs=[2],
                    reference=lambda a, b, c: torch.matmul(a, b), rtol=1e-4, atol=1e-3,
                    hint_sets={"maxnreg": [None, 64, 80, 96, 128, 168, 200, 255]})
    if name == "scale":  # the stand-in driver runs this one (no GPU)
        x = runtime.Buffer.from_list([i * 0.5 for i in range(n)])
        y = runtime.Buffer.from_list([0.0] * n)
        configs = [{"BLOCK": blk} for blk in (64, 128, 256, 512)]
        return dict(configs=configs, source=lambda meta: SCALE_1D, launch=launch_scale,
                    args=(x, y), outputs=[1], rtol=0, atol=0,
                    reference=lambda x, y: [2 * i * 0.5 + 1 for i in range(n)],
                    hint_sets={"maxnreg": [None, 24, 32, 40, 48, 64, 96, 128]})
    raise SystemExit("unknown --family %s" % name)


def compile_one(job: Tuple[str, str, Dict[str, Any], str]) -> Tuple[str, Any]:
    """One config compiled fully: its whole pipeline, no cache, no snapshot
    reuse (a fresh compile of one hint set). Runs in pool processes too."""
    name, source, hints, target = job
    with Compiler(jobs=1, cache=False, executor="batch") as c:
        try:
            with c.compile(source, target=target, hint_sets=[hints]) as result:
                return name, result.variants[0]
        except CompileError as e:
            return name, e


def summarize(mode: str, result: at.TuneResult, wall: float,
              compile_s: Optional[float]) -> Dict[str, Any]:
    """One row; compile_s is None where compiling overlapped timing."""
    w = result.winner
    return {"mode": mode, "wall_s": wall, "compile_s": compile_s,
            "first_timed_s": result.first_timed_s,
            "timed": len([c for c in result.candidates if c.timing]),
            "statuses": {s: len(result.by_status(s)) for s in
                         sorted({c.status for c in result.candidates})},
            "winner": None if w is None else {"kernel": w.kernel, "hints": w.hints,
                                              "median_ms": w.median_ms}}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=os.environ.get("OUT", "out"))
    p.add_argument("--family", default="matmul", choices=["matmul", "scale"])
    p.add_argument("--size", type=int, default=None, help="matrix / vector size")
    p.add_argument("--jobs", type=int, default=16)
    p.add_argument("--target", default="nvvm:sm_90")
    p.add_argument("--modes", default="a,b,c", help="which of a, b, c to run")
    p.add_argument("--warmup", type=float, default=25)
    p.add_argument("--rep", type=float, default=100)
    p.add_argument("--flush-bytes", type=int, default=256 << 20)
    p.add_argument("--fake-driver", help="a stand-in libcuda.so.1 (tests without a GPU)")
    opts = p.parse_args()
    if opts.fake_driver:
        os.environ["FLY_LIBCUDA"] = opts.fake_driver
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    n = opts.size or (2048 if opts.family == "matmul" else 4096)
    device = runtime.Device.default()
    fam = family(opts.family, n)
    args = fam.pop("args")
    tuner_options = dict(fam, target=opts.target, warmup=opts.warmup, rep=opts.rep,
                         flush_bytes=opts.flush_bytes, use_cache=False, device=device)
    configs = at.kernel_configs(fam["configs"], fam["source"])
    hint_sets = at.hint_space(fam["hint_sets"])
    jobs = [(c.name, c.source, h, opts.target) for c in configs for h in hint_sets]
    print("%s on %s (%s): %d kernel variants x %d hint sets = %d configs, %d jobs"
          % (opts.family, device.name, device.arch, len(configs), len(hint_sets), len(jobs),
             opts.jobs), flush=True)
    rows, results = [], {}

    def tuned(mode: str, variants: Any, compile_s: float, t0: float) -> None:
        tuner = at.autotune(opts.family, fam["configs"], compiler=None, **{
            k: v for k, v in tuner_options.items() if k != "configs"})
        r = tuner.tune(*args, variants=variants)
        wall = time.monotonic() - t0
        # first_timed_s counts from tune(); the compile came before it.
        if r.first_timed_s is not None:
            r.first_timed_s += compile_s
        rows.append(summarize(mode, r, wall, compile_s))
        results[mode] = r
        print("%-28s wall %7.2f s, first timed %7.2f s, winner %s" % (
            mode, wall, r.first_timed_s or -1,
            r.winner and (r.winner.kernel, r.winner.hints, r.winner.median_ms)), flush=True)

    modes = opts.modes.split(",")
    if "a" in modes:
        t0 = time.monotonic()
        compiled = [compile_one(j) for j in jobs]
        tuned("(a) sequential full", compiled, time.monotonic() - t0, t0)
    if "b" in modes:
        t0 = time.monotonic()
        with multiprocessing.get_context("spawn").Pool(opts.jobs) as pool:
            compiled = pool.map(compile_one, jobs, chunksize=1)
        tuned("(b) %d processes full" % opts.jobs, compiled, time.monotonic() - t0, t0)
    if "c" in modes:
        t0 = time.monotonic()
        with Compiler(jobs=opts.jobs, cache=False, executor="batch") as c:
            tuner = at.autotune(opts.family, fam["configs"], compiler=c, **{
                k: v for k, v in tuner_options.items() if k != "configs"})
            r = tuner.tune(*args)
        wall = time.monotonic() - t0
        # From t0, as for (a) and (b): the Compiler's start-up counts too.
        if r.first_timed_s is not None:
            r.first_timed_s += wall - r.total_s
        rows.append(summarize("(c) fly-snapshot", r, wall, None))
        results["(c) fly-snapshot"] = r
        print("%-28s wall %7.2f s, first timed %7.2f s, winner %s" % (
            "(c) fly-snapshot", wall, r.first_timed_s or -1,
            r.winner and (r.winner.kernel, r.winner.hints, r.winner.median_ms)), flush=True)

    report = {"family": opts.family, "size": n, "device": device.info,
              "python": platform.python_version(), "configs": len(jobs),
              "kernel_variants": len(configs), "hint_sets": hint_sets,
              "jobs": opts.jobs, "modes": rows,
              "candidates": {m: r.to_json()["candidates"] for m, r in results.items()}}
    (out / "autotune.json").write_text(json.dumps(report, indent=1, default=str))
    md = ["# autotune on %s: %s %d, %d kernel variants x %d hint sets" % (
        device.name, opts.family, n, len(configs), len(hint_sets)), "",
        "| mode | total wall s | first timed variant s | compile s | timed | winner | winner ms |",
        "|---|---|---|---|---|---|---|"]
    for row in rows:
        w = row["winner"] or {}
        md.append("| %s | %.2f | %s | %s | %d | %s %s | %s |" % (
            row["mode"], row["wall_s"],
            "%.2f" % row["first_timed_s"] if row["first_timed_s"] is not None else "-",
            "%.2f" % row["compile_s"] if row["compile_s"] is not None else "streamed",
            row["timed"], w.get("kernel", "-"), json.dumps(w.get("hints", {})),
            "%.4f" % w["median_ms"] if w.get("median_ms") else "-"))
    base = next((r for r in rows if r["mode"].startswith("(a)")), None)
    if base:
        md.append("")
        for row in rows:
            md.append("- %s: %.2fx the sequential wall time" % (row["mode"],
                                                               row["wall_s"] / base["wall_s"]))
    (out / "autotune.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    ok = all(row["winner"] for row in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
