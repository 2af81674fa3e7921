#!/usr/bin/env python3
"""The self-contained wheel on a GPU node: fly_snapshot imported beside torch
and triton in one process, a 64-hint-set NVVM sweep of a real kernel with
jobs=16, the variants loaded and timed. examples/h200/wheel-sweep.sh runs it.

    wheel_sweep.py install <wheel> <site-dir>   # without pip: unzip, modes kept
    wheel_sweep.py sweep --out-dir DIR --results DIR [--fly-run PATH]
                         [--launch-spec SPEC] [--compile-only]

sweep writes into --results: results.json (every figure), results.txt (the
same as a table) and, from fly-run, fly-run.json and fly-run.txt.
--compile-only stops after the sweeps (no torch, triton, cupy or GPU: what
can be checked on a build machine).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNEL = HERE.parent / "tile_matmul_grid.mlir"
LAUNCH_SPEC = HERE.parent / "tile_matmul_grid.launch.json"


def install(wheel: str, site: str) -> None:
    """A wheel is a zip of the site-packages layout: what pip would do for a
    pure package plus data, with the executable bits of the archive kept."""
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            path = Path(site) / info.filename
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(archive.read(info))
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                path.chmod(mode)
    print("installed %s into %s" % (wheel, site))


def hint_sets():
    """maxnreg x LLVM's O x ptxas options: 8 x 2 x 4 = 64 hint sets."""
    sets = []
    for maxnreg, opt, opts in itertools.product(
            [None, 255, 168, 128, 96, 64, 48, 32], [None, 1],
            ["", "-O1", "-O0", "--dont-merge-basicblocks"]):
        hints = {}
        if maxnreg is not None:
            hints["maxnreg"] = maxnreg
        if opt is not None:
            hints["O"] = opt
        if opts:
            hints["opts"] = opts
        sets.append(hints)
    return sets


def cuda_toolkit(record):
    """The CUDA toolkit the library finds by itself ($CUDA_HOME, $CUDA_PATH,
    ptxas on PATH, /usr/local/cuda); where that one has no libdevice (NVVM
    serialization links <toolkit>/nvvm/libdevice/libdevice.10.bc), a folder
    of links to its ptxas and to the libdevice Triton ships."""
    import fly_snapshot
    with fly_snapshot.Compiler(jobs=1, cache=False) as probe:
        preset = probe.preset_pipeline("nvvm:sm_90")
    found = preset.rsplit("toolkit=", 1)[1].rstrip("})")
    record["toolkit_found"] = found
    libdevice = Path(found) / "nvvm" / "libdevice" / "libdevice.10.bc"
    if libdevice.is_file():
        record["toolkit"] = found
        record["libdevice"] = str(libdevice)
        return found
    import triton
    candidates = sorted(Path(triton.__file__).parent.rglob("libdevice.10.bc"))
    if not candidates:
        raise SystemExit("no libdevice.10.bc in %s nor in triton" % found)
    folder = Path("/tmp/fly-cuda-toolkit")
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "bin").mkdir(parents=True)
    (folder / "nvvm" / "libdevice").mkdir(parents=True)
    (folder / "bin" / "ptxas").symlink_to(Path(found) / "bin" / "ptxas")
    (folder / "nvvm" / "libdevice" / "libdevice.10.bc").symlink_to(candidates[0])
    record["toolkit"] = str(folder)
    record["libdevice"] = str(candidates[0])
    return str(folder)


def ptxas_version(toolkit):
    try:
        text = subprocess.run([str(Path(toolkit) / "bin" / "ptxas"), "--version"],
                              capture_output=True, text=True, timeout=60).stdout
        return text.strip().splitlines()[-1]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "unknown"


def triton_add(torch, triton):
    """A Triton kernel compiled and run in this process (Triton's own LLVM)."""
    import triton.language as tl

    @triton.jit
    def add(x, y, out, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(out + offsets, tl.load(x + offsets, mask=mask)
                 + tl.load(y + offsets, mask=mask), mask=mask)

    n = 1 << 20
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    return bool(torch.equal(out, x + y))


def sweep(args) -> int:
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    record = {"python": sys.version.split()[0], "machine": platform.platform()}
    started = time.perf_counter()
    if not args.compile_only:
        # One process: torch, triton and fly_snapshot, each with its LLVM.
        import cupy
        import torch
        import triton
        record.update(torch=torch.__version__, triton=triton.__version__,
                      cupy_version=cupy.__version__,
                      device=torch.cuda.get_device_name(0))
    import fly_snapshot
    record["fly_snapshot"] = fly_snapshot.Compiler.version()
    record["library"] = str(fly_snapshot.library_path())
    record["import_s"] = time.perf_counter() - started
    if not args.compile_only:
        try:
            record["triton_before"] = triton_add(torch, triton)
        except Exception as e:
            record["triton_before"] = "%s: %s" % (type(e).__name__, e)

    toolkit = cuda_toolkit(record)
    record["ptxas"] = ptxas_version(toolkit)
    source = KERNEL.read_text()
    sets = hint_sets()
    record["hint_sets"] = len(sets)
    sweeps = {}
    result = None
    # The process executor (crash isolation, the wheel's fly-tune) and the
    # in-process threads, both jobs=16, each from a cold cache.
    out_dir = Path(args.out_dir)
    shutil.rmtree(out_dir, ignore_errors=True)
    for name, executor in (("process", "process"), ("threads", "batch")):
        with fly_snapshot.Compiler(jobs=args.jobs, cache=False, executor=executor,
                                   toolkit=toolkit) as compiler:
            t0 = time.perf_counter()
            with compiler.compile(source, target="nvvm:sm_90", hint_sets=sets) as current:
                seconds = time.perf_counter() - t0
                if result is None:
                    current.write(str(out_dir))
        ok = sum(v.ok for v in current.variants)
        sweeps[name] = {"seconds": round(seconds, 3), "ok": ok, "failed": len(sets) - ok,
                        "distinct": sum(v.duplicate_of is None for v in current.variants)}
        print("sweep (%s executor, jobs=%d): %d hint sets in %.2f s, %d ok"
              % (name, args.jobs, len(sets), seconds, ok), flush=True)
        if result is None:
            result = current
        else:
            sweeps[name]["objects_equal_process_executor"] = all(
                a.objects[0].data == b.objects[0].data
                for a, b in zip(result.variants, current.variants) if a.ok and b.ok)
    record["sweeps"] = sweeps
    variants = [{"id": v.id, "hints": v.hints, "status": v.status, "error": v.error,
                 "registers": v.kernels[0].registers if v.kernels else None,
                 "stack": v.kernels[0].scratch if v.kernels else None,
                 "duplicate_of": v.duplicate_of} for v in result.variants]
    failed = [v for v in variants if v["status"] != "ok"]

    if not args.compile_only:
        # A failure here is a figure, not the end: fly-run still runs.
        try:
            record["cupy"] = cupy_check(result, cupy, torch)
        except Exception as e:
            record["cupy"] = {"error": "%s: %s" % (type(e).__name__, e), "mismatches": 1}
        try:
            record["triton_after"] = triton_add(torch, triton)
        except Exception as e:
            record["triton_after"] = "%s: %s" % (type(e).__name__, e)
    if not args.compile_only and args.fly_run:
        with open(results / "fly-run.txt", "w") as log:
            t0 = time.perf_counter()
            status = subprocess.run(
                [args.fly_run, str(out_dir), args.launch_spec,
                 "--json=" + str(results / "fly-run.json")],
                stdout=log, stderr=subprocess.STDOUT).returncode
        record["fly_run"] = {"exit": status, "seconds": time.perf_counter() - t0}
        if (results / "fly-run.json").is_file():
            timed = json.loads((results / "fly-run.json").read_text())
            record["fly_run"]["summary"] = {k: timed[k] for k in timed
                                            if k not in ("variants",)}
            by_id = {v.get("id"): v for v in timed.get("variants", [])}
            for v in variants:
                v["fly_run"] = by_id.get(v["id"])
    record["variants"] = variants
    (results / "results.json").write_text(json.dumps(record, indent=1, default=str) + "\n")
    with open(results / "results.txt", "w") as table:
        for key in ("device", "python", "torch", "triton", "cupy_version", "fly_snapshot",
                    "library", "toolkit_found", "toolkit", "libdevice", "ptxas",
                    "hint_sets", "sweeps", "triton_before", "triton_after", "fly_run"):
            if key in record:
                table.write("%s: %s\n" % (key, record[key]))
        if "cupy" in record:
            table.write("cupy: %s\n" % {k: v for k, v in record["cupy"].items()
                                        if k != "variants"})
        for v in variants:
            cupy_ms = record.get("cupy", {}).get("variants", {}).get(v["id"], {})
            fly_run_ms = ((v.get("fly_run") or {}).get("timing") or {}).get("median_ms")
            table.write("%-48s %-6s regs=%-4s stack=%-5s cupy_ms=%-9s fly_run_ms=%s\n" % (
                v["id"], v["status"], v["registers"], v["stack"], cupy_ms.get("ms"),
                fly_run_ms))
    print((results / "results.txt").read_text())
    bad = bool(failed) or (not args.compile_only and (
        record["triton_before"] is not True or record["triton_after"] is not True
        or record.get("fly_run", {}).get("exit", 0) != 0
        or record["cupy"].get("mismatches")))
    return 1 if bad else 0


def cupy_check(result, cupy, torch):
    """Every distinct variant loaded with CuPy from its cubin bytes, run on
    the 4096 x 4096 problem, checked against torch.matmul (fp32, no TF32)
    and timed with CUDA events (median of 5 after a warm-up)."""
    import numpy as np
    n = 4096
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.rand((n, n), device="cuda", generator=gen)
    b = torch.rand((n, n), device="cuda", generator=gen)
    expected = torch.matmul(a, b)
    scale = expected.abs().max().item()
    c = torch.zeros((n, n), device="cuda")

    def memref(t):
        # MLIR's memref<NxNxf32> descriptor: allocated, aligned, offset,
        # sizes, strides.
        return [np.uint64(t.data_ptr()), np.uint64(t.data_ptr()), np.int64(0),
                np.int64(n), np.int64(n), np.int64(n), np.int64(1)]

    args = tuple(memref(a) + memref(b) + memref(c))
    report = {"variants": {}, "mismatches": 0, "loaded": 0}
    for v in result.variants:
        if not v.ok or v.duplicate_of is not None:
            continue
        entry = {}
        try:
            path = Path("/tmp/fly-cupy-%s.cubin" % v.id)
            path.write_bytes(v.objects[0].data)
            module = cupy.RawModule(path=str(path))
            kernel = module.get_function(v.kernels[0].name)
            report["loaded"] += 1
            c.zero_()
            kernel((16, 32, 1), (16, 16, 1), args)
            torch.cuda.synchronize()
            err = (c - expected).abs().max().item()
            entry["max_abs_err"] = err
            # fp32 sums of 4096 products in another order than cuBLAS's.
            entry["ok"] = err <= 2e-4 * scale
            report["mismatches"] += 0 if entry["ok"] else 1
            start, stop = cupy.cuda.Event(), cupy.cuda.Event()
            times = []
            for _ in range(6):
                start.record()
                kernel((16, 32, 1), (16, 16, 1), args)
                stop.record()
                stop.synchronize()
                times.append(cupy.cuda.get_elapsed_time(start, stop))
            entry["ms"] = round(sorted(times[1:])[len(times[1:]) // 2], 4)
            path.unlink()
        except Exception as e:  # a variant that fails to load fails alone
            entry["error"] = "%s: %s" % (type(e).__name__, e)
            report["mismatches"] += 1
        report["variants"][v.id] = entry
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("install")
    p.add_argument("wheel")
    p.add_argument("site")
    p = sub.add_parser("sweep")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--jobs", type=int, default=16)
    p.add_argument("--fly-run")
    p.add_argument("--launch-spec", default=str(LAUNCH_SPEC))
    p.add_argument("--compile-only", action="store_true")
    args = parser.parse_args()
    if args.command == "install":
        install(args.wheel, args.site)
        return 0
    return sweep(args)


if __name__ == "__main__":
    sys.exit(main())
