#!/usr/bin/env python3
"""ROCDL: what one optimizeModule per gpu.module buys (issue 22 item 5).

  rocdl_share.py --build build [--reps 3] [--n 16] [-o bench/ROCDL-SHARE.md]

1. Where one ROCDL serialization spends its CPU (fly-rocdl-stages, per hint
   set of bench/hints/rocdl.json, on each workload's pre-binary module), and
   whether its translation + link or its optimisation, done once for the
   unhinted module, gives the same ISA per hint set.
2. fly-bench's serial mode (SplitCompiler, jobs=1, reuse-isa as shipped)
   and parallel mode (jobs=P) against the ideal(1) of the same repetition,
   CPU time, in four settings taken in a rotating order: nothing shared
   (FLY_ROCDL_SHARE_OPT=0 FLY_ROCDL_REUSE_TM=0 FLY_ROCDL_CODEGEN_CUT=0),
   the shared optimisation alone, with kept TargetMachines, and as shipped
   (shared code generation too, RocdlSharedCodegen.h): the median
   per-repetition ratios and each setting ÷ nothing shared.
3. Which codegen passes the register hints reach (rocdl_passes.py, from
   fly-rocdl-stages --pass-report): the share of code generation one shared
   run of the passes before them could save, the floor that no exact
   sharing of pass results can go below, and what either would make of
   section 2's ratio without shared code generation.
4. Whether code generation can stop once before that pass and go on per
   hint set (fly-rocdl-stages --mir-cut), through MIR text and with the
   machine functions copied in memory: ISA byte for byte, and what each
   costs against a whole code generation, projected onto section 2's ratio
   without shared code generation (the shipped setting measures it).

Workloads: the bundled example, gen_workload.py's backend kernel, three
gen_gemm.py gfx942 MFMA GEMMs (32x32 u1 and 64x64 u4, the smallest of
scaling.py's crossover set, and 128x128 u4), and test/Tools/Inputs/rocdl-ocml-softmax.mlir
(device-library math).
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

import rocdl_passes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PREFIX = ("builtin.module(canonicalize,cse,canonicalize,cse,canonicalize,cse,"
          "rocdl-attach-target{chip=gfx942 O=3},gpu.module(convert-scf-to-cf,"
          "convert-gpu-to-rocdl{chipset=gfx942}),reconcile-unrealized-casts)")
# The pass section 3 finds the register hints reach first ("AMDGPU Prepare
# AGPR Alloc"), by the name -stop-before and -start-before take.
MIR_CUT = "amdgpu-prepare-agpr-alloc"
STAGES = ["translate", "load", "link", "optimize", "codegen", "assemble"]
# Setting name -> environment; the first is the baseline of the ratios.
SETTINGS = {
    "off": {"FLY_ROCDL_SHARE_OPT": "0", "FLY_ROCDL_REUSE_TM": "0",
            "FLY_ROCDL_CODEGEN_CUT": "0"},
    "shared opt": {"FLY_ROCDL_SHARE_OPT": "1", "FLY_ROCDL_REUSE_TM": "0",
                   "FLY_ROCDL_CODEGEN_CUT": "0"},
    "shared opt + kept TM": {"FLY_ROCDL_SHARE_OPT": "1", "FLY_ROCDL_REUSE_TM": "1",
                             "FLY_ROCDL_CODEGEN_CUT": "0"},
    "+ shared codegen": {"FLY_ROCDL_SHARE_OPT": "1", "FLY_ROCDL_REUSE_TM": "1",
                         "FLY_ROCDL_CODEGEN_CUT": "1"},
}


def run(cmd, env=None, **kw):
    return subprocess.run(cmd, check=True, env=env, **kw)


def workloads(tmp):
    gen = [sys.executable, os.path.join(ROOT, "bench", "gen_workload.py")]
    gemm = [sys.executable, os.path.join(ROOT, "bench", "gen_gemm.py")]
    backend = os.path.join(tmp, "backend.mlir")
    run(gen + ["--kernels", "2", "--rows", "8", "--vec", "16", "--fold", "0", "-o", backend])
    gemms = []
    # The two smallest crossover GEMMs (scaling.py), where N <= P is decided,
    # and a larger one.
    for tile, unroll in (("32x32", 1), ("64x64", 4), ("128x128", 4)):
        gemm_file = os.path.join(tmp, "gemm-%s.mlir" % tile)
        run(gemm + ["--target", "rocdl", "--tiles", tile, "--unroll", str(unroll),
                    "-o", gemm_file])
        gemms.append(("gemm %s u%d" % (tile, unroll), gemm_file))
    return [
        ("example", os.path.join(ROOT, "examples", "tile_matmul.mlir")),
        ("backend", backend),
        *gemms,
        ("ocml softmax", os.path.join(ROOT, "test", "Tools", "Inputs",
                                      "rocdl-ocml-softmax.mlir")),
    ]


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--n", type=int, default=16)
    p.add_argument("-o", "--output", default=os.path.join(ROOT, "bench", "ROCDL-SHARE.md"))
    p.add_argument("--report-only", action="store_true",
                   help="rewrite the report from the JSON beside it")
    a = p.parse_args(argv)
    if a.report_only:
        with open(os.path.splitext(a.output)[0] + ".json") as f:
            data = json.load(f)
        return write_report(a, data["stages"], data["bench"], data["passes"],
                            data["mir_cut"],
                            datetime.datetime.fromisoformat(data["start"]),
                            data["elapsed_s"])
    bindir = os.path.join(os.path.abspath(a.build), "bin")
    toolkit = os.path.join(os.path.abspath(a.build), "rocm-toolkit")
    hints = os.path.join(ROOT, "bench", "hints", "rocdl.json")
    start = datetime.datetime.now(datetime.timezone.utc)
    stages = {}
    bench = {}
    passes = {}
    mir_cut = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in workloads(tmp):
            pre = os.path.join(tmp, "pre.mlir")
            run([os.path.join(bindir, "fly-opt"), path, "--pass-pipeline=" + PREFIX, "-o", pre])
            out = os.path.join(tmp, "stages.json")
            run([os.path.join(bindir, "fly-rocdl-stages"), "--input=" + pre,
                 "--hints-file=" + hints, "--toolkit=" + toolkit,
                 "--reps=%d" % a.reps, "--n=%d" % a.n, "--json=" + out])
            with open(out) as f:
                stages[name] = json.load(f)
            passes[name] = pass_report(bindir, pre, hints, toolkit, a, tmp)
            run([os.path.join(bindir, "fly-rocdl-stages"), "--input=" + pre,
                 "--hints-file=" + hints, "--toolkit=" + toolkit, "--mir-cut=" + MIR_CUT,
                 "--reps=%d" % a.reps, "--n=%d" % a.n, "--json=" + out])
            with open(out) as f:
                mir_cut[name] = json.load(f)
            bench[name] = {setting: [] for setting in SETTINGS}
            for rep in range(a.reps):
                names = list(SETTINGS)
                order = names[rep % len(names):] + names[:rep % len(names)]
                for setting in order:
                    env = dict(os.environ, **SETTINGS[setting])
                    js = os.path.join(tmp, "bench.json")
                    run([os.path.join(bindir, "fly-bench"), "--name=" + name.split()[0],
                         "--input=" + path, "--target=rocdl:gfx942", "--toolkit=" + toolkit,
                         "--hints-file=" + hints, "--n=%d" % a.n, "--reps=1",
                         "--modes=singles,serial,parallel", "--quiet-wait-s=1", "--retries=0",
                         "--work-dir=" + os.path.join(tmp, "work"), "--json=" + js],
                        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    with open(js) as f:
                        s = json.load(f)["runs"][0]
                    single = s["samples"]["singles"][0]
                    serial = s["samples"]["serial"][0]
                    ideal_cpu = single["t_pre_cpu"] + single["t_bin_cpu_sum"]
                    parallel = s["samples"]["parallel"][0]
                    bench[name][setting].append({
                        "rep": rep,
                        "serial_cpu_ms": serial["cpu_ms"],
                        "ideal1_cpu_ms": ideal_cpu,
                        "ratio": serial["cpu_ms"] / ideal_cpu,
                        "parallel_cpu_ms": parallel["cpu_ms"],
                        "parallel_ratio": parallel["cpu_ms"] / ideal_cpu,
                        "foreign_cores": serial.get("foreign_cores"),
                    })
    elapsed = (datetime.datetime.now(datetime.timezone.utc) - start).total_seconds()
    with open(os.path.splitext(a.output)[0] + ".json", "w") as f:
        json.dump({"stages": stages, "bench": bench, "passes": passes, "mir_cut": mir_cut,
                   "start": start.isoformat(), "elapsed_s": elapsed}, f, indent=1)
    write_report(a, stages, bench, passes, mir_cut, start, elapsed)


def pass_report(bindir, pre, hints, toolkit, a, tmp):
    """rocdl_passes.bound of the workload's gpu.module(s) over the first n hint
    sets: one -print-after-all run and --reps -time-passes runs (each its own
    process: LLVM's legacy pass timers number instances process-wide), the
    dumps hashed and deleted as they come."""
    folder = os.path.join(tmp, "passes")
    os.makedirs(folder, exist_ok=True)
    stages = [os.path.join(bindir, "fly-rocdl-stages"), "--input=" + pre,
              "--hints-file=" + hints, "--toolkit=" + toolkit, "--json=" + os.devnull,
              "--pass-report=" + folder, "--n=%d" % a.n]
    by_module = {}
    for index in range(a.n):
        run(stages + ["--hint-index=%d" % index])
        for _ in range(a.reps):
            run(stages + ["--hint-index=%d" % index, "--timed"])
        for stem in module_stems(folder, index):
            module = os.path.basename(stem).rsplit(".", 1)[0]
            by_module.setdefault(module, {})[index] = rocdl_passes.load(stem)
            for suffix in (".dump", ".times", ".s"):
                os.remove(stem + suffix)
    with open(hints) as f:
        hint_sets = json.load(f)
    return {module: dict(rocdl_passes.bound(variants, hint_sets),
                         mapped_min=min(v["mapped"] for v in variants.values()))
            for module, variants in by_module.items()}


def module_stems(folder, index):
    suffix = ".%d.times" % index
    return [os.path.join(folder, f[:-len(".times")]) for f in sorted(os.listdir(folder))
            if f.endswith(suffix)]


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def write_report(a, stages, bench, passes, mir_cut, start, elapsed):
    L = []
    L.append("# ROCDL: one optimisation per gpu.module, kept TargetMachines, shared code "
             "generation (issue 22, item 5)\n")
    L.append("Generated by `bench/rocdl_share.py --reps %d --n %d` on %s, %.0f s; %s, %d CPUs "
             "(shared with other sessions: CPU time is the measure).\n" % (
                 a.reps, a.n, start.strftime("%Y-%m-%d %H:%M UTC"), elapsed,
                 platform.machine(), os.cpu_count()))
    L.append("## 1. Where one ROCDL serialization spends its CPU\n")
    L.append("`fly-rocdl-stages`: thread-CPU of upstream's steps (ModuleToObject::run, "
             "moduleToObjectImpl, compileToBinary; LLVM 22), median of %d per hint set, "
             "then the mean over the %d hint sets of `bench/hints/rocdl.json`; percent of "
             "their sum (the in-process ld.lld, the MLIR side and, in T_bin, the ld.lld "
             "process come on top, so shares of T_bin are smaller).\n" % (a.reps, a.n))
    L.append("| workload | " + " | ".join(STAGES) + " | sum ms | translate+load+link | "
             "parse+attrs per variant |")
    L.append("|---|" + "---|" * (len(STAGES) + 3))
    for name, rows in stages.items():
        means = {s: statistics.mean(r["stages_ms"][s] for r in rows) for s in STAGES}
        total = sum(means.values())
        once = means["translate"] + means["load"] + means["link"]
        L.append("| %s | %s | %.1f | %.1f %% | %.2f ms |" % (
            name, " | ".join("%.2f (%.1f %%)" % (means[s], 100 * means[s] / total) for s in STAGES),
            total, 100 * once / total,
            statistics.mean(r["per_variant_shared_ms"] for r in rows)))
    L.append("")
    shares = {n: {s_: statistics.mean(r["stages_ms"][s_] for r in rows) for s_ in STAGES}
              for n, rows in stages.items()}
    def span(f):
        v = [100 * f(m) / sum(m.values()) for m in shares.values()]
        return "%.1f–%.1f %%" % (min(v), max(v))
    L.append("Hint-independent (translation, device-library load, link): %s of the steps; "
             "optimizeModule: %s; code generation and assembling, which read every register "
             "hint and so stay per variant: %s.%s Sharing the optimisation as well removes "
             "at most the first two shares.\n" % (
                 span(lambda m: m["translate"] + m["load"] + m["link"]),
                 span(lambda m: m["optimize"]),
                 span(lambda m: m["codegen"] + m["assemble"]),
                 " Under 10 % everywhere: sharing translation and link alone cannot take "
                 "0.65 × T_bin to 0.6." if all(
                     100 * (m["translate"] + m["load"] + m["link"]) / sum(m.values()) < 10
                     for m in shares.values()) else ""))
    L.append("Whether doing it once is exact, per hint set (ISA text byte for byte against "
             "the plain serialization of that hint set): **shared translation+link** = the "
             "unhinted module translated and linked once, per variant parsed from bitcode with "
             "the hinted translation's function attributes; **shared O3** = the unhinted "
             "module also optimised once, per variant only what the hints changed in the "
             "function attributes written on after.\n")
    L.append("| hint set | " + " | ".join("%s: shared translation+link / shared O3" % n
                                          for n in stages) + " |")
    L.append("|---|" + "---|" * len(stages))
    names = list(stages)
    for i, row in enumerate(stages[names[0]]):
        cells = []
        for n in names:
            r = stages[n][i]
            cells.append("%s / %s" % ("same" if r["isa_equal"] else "**differs**",
                                      "same" if r["post_o3_isa_equal"] else "**differs**"))
        L.append("| `%s` | %s |" % (row["hints"] or "(none)", " | ".join(cells)))
    L.append("")
    settings = list(next(iter(bench.values())))
    base = settings[0]

    def env_of(setting):
        return " ".join("%s=%s" % kv for kv in SETTINGS.get(setting, {}).items()) or "as is"

    def table(key, cpu_key):
        L.append("| workload | N | " + " | ".join(
            "%s ÷ ideal(1)" % s_ for s_ in settings) + " | " + " | ".join(
            "%s ÷ %s" % (s_, base) for s_ in settings[1:]) + " |")
        L.append("|---|---|" + "---|" * (2 * len(settings) - 1))
        for name, by in bench.items():
            cells = []
            for s_ in settings:
                xs = [x[key] for x in by[s_]]
                cells.append("%.2f (%.2f–%.2f)" % (med(xs), min(xs), max(xs)))
            for s_ in settings[1:]:
                cells.append("%.2f" % med([b[cpu_key] / a_[cpu_key] for a_ in by[base]
                                           for b in by[s_] if a_["rep"] == b["rep"]]))
            L.append("| %s | %d | %s |" % (name, a.n, " | ".join(cells)))
        L.append("")

    L.append("## 2. fly serial ÷ ideal(1), CPU, in %d settings\n" % len(settings))
    L.append("Settings: " + "; ".join("**%s** = %s" % (s_, env_of(s_)) for s_ in settings)
             + ". `fly-bench --modes=singles,serial,parallel --n=%d --reps=1` per "
             "repetition and setting, in a rotating order; ratio = fly-bench's `cpu_x_ideal_1`: "
             "the serial child's CPU over the compile (its threads plus the tools it ran) ÷ "
             "(T_pre + Σ T_bin) CPU of the same run's singles child (upstream's "
             "`gpu-module-to-binary`, a new TargetMachine per variant, which the settings do "
             "not touch). Medians over %d repetitions (min–max); the last columns: serial CPU "
             "÷ that of **%s**, per repetition.\n" % (a.n, a.reps, base))
    table("ratio", "serial_cpu_ms")
    last = settings[-1]
    L.append("≤ 0.6 × ideal(1) (the #22 target for the per-variant cost) with **%s**: %s.\n" % (
        last, ", ".join("%s %s" % (name, "**met**" if med([x["ratio"] for x in by[last]]) <= 0.6
                                   else "not met") for name, by in bench.items())))
    L.append("fly parallel (jobs = P = %d, batches on the context's threads; variants "
             "started at once wait for one shared optimisation) on the same runs, CPU "
             "÷ ideal(1) CPU (work, not wall: the machine is shared):\n" % (os.cpu_count()))
    table("parallel_ratio", "parallel_cpu_ms")
    # Sections 3 and 4 project a shared part onto the setting without it.
    uncut = settings[-2]
    write_passes(L, a, stages, bench, passes, uncut)
    write_mir_cut(L, a, bench, mir_cut, uncut)
    with open(a.output, "w") as f:
        f.write("\n".join(L))
    print("wrote", a.output)


def write_passes(L, a, stages, bench, passes, shipped):
    L.append("## 3. Which codegen passes the hints reach\n")
    L.append("`fly-rocdl-stages --pass-report` per hint set: the code generation of the "
             "optimised module with LLVM's `-debug-pass=Structure -print-after-all` (what "
             "each pass left; IR attribute groups, which hold the hints, left out) and, in "
             "%d other processes, `-time-passes` (median CPU per pass; an analysis counts "
             "with the pass it runs for). **Shared prefix**: the passes before the first "
             "whose output differs from the unhinted variant's, as a share of code "
             "generation (mean over hint sets): what one shared run of them could save at "
             "most (the MachineFunctionInfo, which the hints also set, is not compared). "
             "**Floor**: every pass run once per distinct (input, output) among the %d hint "
             "sets, as a share of their code generation: the least that any exact sharing "
             "of pass results could leave, knowing in advance which hint sets coincide. "
             "The last columns apply them to section 2's **%s** serial CPU, per "
             "repetition: (serial − N × removable codegen) ÷ ideal(1), with section 1's "
             "codegen time per hint set (it includes creating a TargetMachine, so the "
             "projection errs low).\n" % (a.reps, a.n, shipped))
    L.append("| workload | gpu.module | codegen ms | the cut (hint sets cut there) | shared "
             "prefix | floor | distinct ISA | serial ÷ ideal(1) | with the prefix shared | at "
             "the floor |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for name, modules in passes.items():
        rows = stages[name]
        for module, b in modules.items():
            codegen = [r["stages_ms"]["codegen"] for r in rows if r["gpu_module"] == module]
            mean_cg = statistics.mean(codegen)
            prefix_ms = b["prefix_share_mean"] * mean_cg
            floor_ms = (1 - b["floor_share"]) * mean_cg
            reps = bench[name][shipped]
            now = [x["ratio"] for x in reps]
            with_prefix = [(x["serial_cpu_ms"] - a.n * prefix_ms) / x["ideal1_cpu_ms"] for x in reps]
            at_floor = [(x["serial_cpu_ms"] - a.n * floor_ms) / x["ideal1_cpu_ms"] for x in reps]
            L.append("| %s | %s | %.1f | %s | %.0f %% | %.0f %% | %d of %d | %.2f | %.2f | %.2f |" % (
                name, module, b["codegen_ms_mean"],
                ", ".join("%s (%d)" % kv for kv in b["cuts"].items()) or "none",
                100 * b["prefix_share_mean"], 100 * b["floor_share"], b["distinct_isa"], b["n"],
                med(now), med(with_prefix), med(at_floor)))
    L.append("")


def write_mir_cut(L, a, bench, mir_cut, shipped):
    L.append("## 4. Code generation cut once before `%s`\n" % MIR_CUT)
    L.append("`fly-rocdl-stages --mir-cut=%s` on the first gpu.module, two ways. **Text**: the "
             "unhinted optimised module's code generation stopped before the pass and printed "
             "as MIR, once (**shared**); per hint set of register hints only (waves_per_eu, "
             "maxnreg; an SGPR budget, `passthrough.amdgpu-num-sgpr`, is not in this hint file: "
             "there MIR text is inexact, see `MIR-CUT-AUDIT.md`), that MIR parsed with the hint set's function attributes (**parse**) and "
             "code generation continued from the pass (**rest**). **In memory**: the same "
             "stop, its machine functions kept (**kept**); per hint set, the module's "
             "functions given the hint set's attributes, the machine functions copied with a "
             "MachineFunctionInfo built anew from them and given the kept one's serialisable "
             "state, what finalize-isel derives from the register budget recomputed "
             "(**copy**), and code generation continued "
             "(**rest**). **ISA** compares each with the plain serialization's, byte for byte. "
             "Thread-CPU, medians of %d; means over the hint sets; the route columns are "
             "(copy or parse + rest) ÷ codegen. The last column applies the in-memory route "
             "to section 2's **%s** serial CPU, per repetition: (serial − Σ (codegen − copy − "
             "rest) + kept) ÷ ideal(1).\n" % (MIR_CUT, a.reps, shipped))
    L.append("| workload | gpu.module | hint sets | ISA equal, text / in memory | codegen ms "
             "| shared / kept ms | text: parse + rest ms | in memory: copy + rest ms | text "
             "route | in-memory route | serial ÷ ideal(1) | with the cut in memory |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    summary = []
    for name, rows in mir_cut.items():
        cut = [r for r in rows if r["applicable"]]
        if not cut or not all(r.get("copyable") for r in cut):
            L.append("| %s | | %d of %d | not copied | | | | | | | | |" % (
                name, len(cut), len(rows)))
            continue
        mean = lambda key: statistics.mean(r[key] for r in cut)
        codegen, parse, rest = mean("codegen_ms"), mean("mir_parse_ms"), mean("rest_ms")
        copy, copy_rest = mean("copy_ms"), mean("copy_rest_ms")
        saved = (sum(r["codegen_ms"] - r["copy_ms"] - r["copy_rest_ms"] for r in cut)
                 - cut[0]["kept_ms"])
        reps = bench[name][shipped]
        now = [x["ratio"] for x in reps]
        with_cut = [(x["serial_cpu_ms"] - saved) / x["ideal1_cpu_ms"] for x in reps]
        text_equal = sum(1 for r in cut if r["isa_equal"])
        copy_equal = sum(1 for r in cut if r["copy_isa_equal"])
        L.append("| %s | %s | %d of %d | %d / %d of %d | %.1f | %.1f / %.1f | %.1f + %.1f | "
                 "%.1f + %.1f | %.2f | %.2f | %.2f | %.2f |" % (
                     name, cut[0]["gpu_module"], len(cut), len(rows), text_equal, copy_equal,
                     len(cut), codegen, cut[0]["shared_ms"], cut[0]["kept_ms"], parse, rest,
                     copy, copy_rest, (parse + rest) / codegen, (copy + copy_rest) / codegen,
                     med(now), med(with_cut)))
        summary.append(((parse + rest) / codegen, (copy + copy_rest) / codegen, med(with_cut),
                        text_equal, copy_equal, len(cut)))
    if summary:
        text, memory, projected, text_equal, copy_equal, total = zip(*summary)
        L.append("")
        L.append("ISA equal for %d (text) and %d (in memory) of %d hint sets. Through MIR text a "
                 "variant's code generation costs %.2f–%.2f of a whole one (parsing takes what "
                 "the cut saves); in memory %.2f–%.2f, serial ÷ ideal(1) %.2f–%.2f (≤ 0.6: %d of "
                 "%d workloads). Measured in one thread with one module whose attributes change "
                 "per hint set; fly does not do this yet." % (
                     sum(text_equal), sum(copy_equal), sum(total), min(text), max(text),
                     min(memory), max(memory), min(projected), max(projected),
                     sum(1 for x in projected if x <= 0.6), len(projected)))
    L.append("")


if __name__ == "__main__":
    main(sys.argv[1:])
