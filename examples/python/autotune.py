#!/usr/bin/env python3
"""A small autotuner on fly_snapshot: compile every config once (the
pipeline before gpu-module-to-binary runs once), prune configs that spill or
fail, rank the rest by what the backend reported (occupancy, then registers),
and, given a GPU, time the survivors with fly-run and pick the fastest.

    python3 examples/python/autotune.py                       # tile_matmul, gfx942
    python3 examples/python/autotune.py kernel.mlir --target rocdl:gfx90a \\
        --launch-spec kernel.launch.json --out-dir tune-out

With --prebinary the input is a module already lowered up to the binary pass
(what a DSL such as FlyDSL holds) and --binary-pass is run on it per config
(compile_variants). Without a GPU (fly-run exits 77) the timing step is
skipped and the static ranking stands.

Compile here, time elsewhere (a GPU machine without LLVM needs only fly-run
and this script; fly_snapshot reads an out-dir without its library):

    python3 examples/python/autotune.py --target nvvm:sm_90 --compile-only --out-dir sweep
    python3 examples/python/autotune.py --from-out-dir sweep   # on the GPU machine
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence

HERE = Path(__file__).resolve().parent
# The build tree's package, else the source tree's (enough to read an out-dir
# on a machine without the library); an installed package wins over neither.
sys.path[:0] = [str(HERE.parents[1] / "build" / "python"), str(HERE.parents[1] / "python")]

import fly_snapshot  # noqa: E402
from fly_snapshot import Compiler, Variant, compile_variants, read_out_dir  # noqa: E402

NO_DEVICE = 77


def default_configs(target: str) -> List[Dict[str, int]]:
    """The grid a DSL autotuner would try: waves_per_eu x maxnreg on ROCDL,
    maxnreg on NVVM."""
    if target.startswith("nvvm:"):
        return [{}] + [{"maxnreg": n} for n in (128, 96, 64, 48, 32)]
    configs = []
    for waves, maxnreg in itertools.product([0, 1, 2, 4, 8], [None, 128, 96, 64]):
        config: Dict[str, int] = {}
        if waves:
            config["waves_per_eu"] = waves
        if maxnreg:
            config["maxnreg"] = maxnreg
        configs.append(config)
    return configs


def spills(v: Variant) -> bool:
    """Whether a kernel spills (ROCDL spill counts; scratch / stack frame)."""
    return any((k.spills or 0) > 0 or (k.scratch or 0) > 0 for k in v.kernels)


def rank(variants: Sequence[Variant], prune_spills: bool = True) -> List[Variant]:
    """Drops failed variants, duplicates (same objects as an earlier config)
    and, with `prune_spills`, spilling ones; orders the rest: non-spilling
    first, then occupancy (higher first), then registers (fewer first)."""
    kept = [v for v in variants if v.ok and v.duplicate_of is None
            and not (prune_spills and spills(v))]

    def key(v: Variant):
        occupancy = min((k.occupancy or 0) for k in v.kernels) if v.kernels else 0
        registers = max((k.registers or 0) for k in v.kernels) if v.kernels else 0
        return (spills(v), -occupancy, registers, v.index)

    return sorted(kept, key=key)


def describe(v: Variant) -> str:
    k = v.kernels[0] if v.kernels else None
    hints = ",".join("%s=%s" % kv for kv in sorted(v.hints.items())) or "(default)"
    if not v.ok:
        return "%-34s FAILED: %s" % (hints, v.error.splitlines()[0] if v.error else "")
    return "%-34s regs=%-4s spills=%-4s scratch=%-5s occupancy=%s%s" % (
        hints, k.registers, k.spills, k.scratch, k.occupancy,
        "  (same as #%d)" % v.duplicate_of if v.duplicate_of is not None else "")


def time_on_gpu(fly_run: str, out_dir: Path, spec: Path,
                candidates: Sequence[Variant]) -> Optional[Dict[str, float]]:
    """Median ms per variant id from fly-run, or None without a device."""
    report = out_dir / "fly-run.json"
    proc = subprocess.run(
        [fly_run, str(out_dir), str(spec), "--quiet", "--retune",
         "--variants=" + ",".join(v.id for v in candidates), "--json=" + str(report)])
    if proc.returncode == NO_DEVICE:
        return None
    if not report.exists():
        raise SystemExit("fly-run failed (exit %d) and wrote no report" % proc.returncode)
    doc = json.loads(report.read_text())
    return {v["id"]: v["timing"]["median_ms"] for v in doc["variants"] if "timing" in v}


def main(argv: Optional[Sequence[str]] = None) -> int:
    root = HERE.parents[1]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel", nargs="?", default=str(root / "examples" / "tile_matmul.mlir"))
    parser.add_argument("--target", default="rocdl:gfx942")
    parser.add_argument("--configs", help="JSON list of hint sets (default: a grid for the target)")
    parser.add_argument("--prebinary", action="store_true",
                        help="the input is already lowered up to gpu-module-to-binary")
    parser.add_argument("--binary-pass", default="gpu-module-to-binary{format=fatbin}",
                        help="with --prebinary: the binary pass to run per config")
    parser.add_argument("--launch-spec", help="fly-run launch spec (default: the kernel's "
                        "<name>.launch.json beside it, if any)")
    parser.add_argument("--fly-run", default=shutil.which("fly-run") or str(root / "build" / "bin" / "fly-run"))
    parser.add_argument("--out-dir", help="keep the variants here (default: a temporary directory)")
    parser.add_argument("--compile-only", action="store_true", help="rank, write --out-dir, do not time")
    parser.add_argument("--from-out-dir", help="rank and time the variants of an existing out-dir")
    parser.add_argument("--top", type=int, default=4, help="how many ranked configs to time")
    parser.add_argument("--allow-spills", action="store_true",
                        help="rank spilling configs last instead of pruning them")
    args = parser.parse_args(argv)

    if args.from_out_dir:
        out_dir = Path(args.from_out_dir)
        variants = read_out_dir(out_dir)
        print("%d variants read from %s" % (len(variants), out_dir))
    else:
        configs = json.loads(args.configs) if args.configs else default_configs(args.target)
        source = Path(args.kernel).read_text()
        out_dir = Path(args.out_dir or tempfile.mkdtemp(prefix="fly-autotune-"))
        with Compiler() as compiler:
            if args.prebinary:
                variants = compile_variants(source, args.binary_pass, configs, args.target,
                                            compiler=compiler)
                out_dir = None  # compile_variants keeps no result to write
            else:
                with compiler.compile(source, target=args.target, hint_sets=configs) as result:
                    result.write(out_dir)
                    variants = result.variants
        print("%d configs compiled (%s)" % (len(variants), args.target))
    for v in variants:
        print("  " + describe(v))
    ranked = rank(variants, prune_spills=not args.allow_spills)
    print("\n%d configs left after pruning failures, %sduplicates:"
          % (len(ranked), "" if args.allow_spills else "spills and "))
    for i, v in enumerate(ranked):
        print("  %d. %s" % (i + 1, describe(v)))
    if not ranked:
        return 1
    if args.compile_only or out_dir is None:
        print("\nstatic pick: %s%s" % (ranked[0].id, "" if out_dir is None else
                                       " (variants in %s)" % out_dir))
        return 0

    spec = Path(args.launch_spec) if args.launch_spec else Path(args.kernel).with_suffix(".launch.json")
    if not spec.exists() or not os.access(args.fly_run, os.X_OK):
        print("\nno timing (needs a launch spec and fly-run); static pick: %s" % ranked[0].id)
        return 0
    candidates = ranked[: args.top]
    if ranked[0].index != 0 and variants[0].ok:
        candidates.append(variants[0])  # the default config, as fly-run's baseline
    timings = time_on_gpu(args.fly_run, out_dir, spec, candidates)
    if timings is None:
        print("\nno GPU (fly-run: no device); static pick: %s" % ranked[0].id)
        return 0
    print("\nmeasured (median ms):")
    for v in candidates:
        print("  %-40s %s" % (v.id, timings.get(v.id, "excluded")))
    timed = [v for v in candidates if v.id in timings]
    if not timed:
        return 1
    best = min(timed, key=lambda v: timings[v.id])
    print("\nwinner: %s (%.4f ms)" % (best.id, timings[best.id]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
