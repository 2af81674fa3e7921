#!/usr/bin/env python3
"""Where does the binary pass spend its time? A perf profile of one
`fly-bench --child=serial-plain` run (prefix once, N variants one after
another, reuse-isa off so that every variant runs the whole plain pass),
broken down into the stages of gpu-module-to-binary.

  profile.py --fly-bench B --input K --target T --toolkit D --hints H --n N -o out.json

Percentages are of CPU samples of the binary pass: in-process samples under
mlir::gpu::transformGpuModulesToBinaries plus every sample of the external
tools it runs (ld.lld for ROCDL, ptxas / fatbinary for NVVM). Sampled CPU
time, so time spent waiting for a tool counts as the tool's. Writes
{"skipped": reason} if perf is missing or not permitted.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

EXTERNAL = ("ld.lld", "ptxas", "fatbinary", "nvlink")

# (label, symbols whose inclusive samples count), in-process.
STAGES = [
    ("MLIR -> LLVM IR translation", ["mlir::translateModuleToLLVMIR"]),
    ("device-library linking (bitcode load + link)",
     ["mlir::LLVM::ModuleToObject::linkFiles",
      "mlir::LLVM::ModuleToObject::loadBitcodeFiles",
      "mlir::ROCDL::SerializeGPUModuleBase::loadBitcodeFiles"]),
    ("LLVM IR optimisation (O3)", ["mlir::LLVM::ModuleToObject::optimizeModule"]),
    ("codegen to ISA / PTX text", ["mlir::LLVM::ModuleToObject::translateModuleToISA"]),
    ("assembling the ISA text (MC, ROCDL)", ["mlir::ROCDL::assembleIsa"]),
]


def perf_lines(args):
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return [l for l in out.splitlines() if l.strip() and not l.startswith("#")]


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--fly-bench", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--target", required=True)
    p.add_argument("--toolkit", required=True)
    p.add_argument("--hints", required=True)
    p.add_argument("--n", type=int, default=8)
    p.add_argument("--freq", type=int, default=800)
    p.add_argument("-o", "--output", required=True)
    a = p.parse_args(argv)

    def done(obj):
        with open(a.output, "w") as f:
            json.dump(obj, f, indent=2)

    perf = shutil.which("perf")
    if not perf:
        return done({"skipped": "perf not found"})
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        child_out = os.path.join(tmp, "child.json")
        cmd = [perf, "record", "-q", "-o", data, "-F", str(a.freq),
               "--call-graph=dwarf,16384", "--", a.fly_bench,
               "--child=serial-plain", "--input=" + a.input, "--target=" + a.target,
               "--toolkit=" + a.toolkit, "--hints-file=" + a.hints,
               "--child-n=%d" % a.n, "--child-out=" + child_out]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(child_out):
            return done({"skipped": "perf record failed: " + r.stderr.strip()[-300:]})
        with open(child_out) as f:
            child = json.load(f)
        comm = {}
        for l in perf_lines([perf, "report", "-i", data, "--no-children",
                             "--sort=comm", "--stdio", "-g", "none", "--no-inline"]):
            m = re.match(r"\s*([\d.]+)%\s+(\S+)", l)
            if m:
                comm[m.group(2)] = comm.get(m.group(2), 0) + float(m.group(1))
        inclusive = {}
        for l in perf_lines([perf, "report", "-i", data, "--children",
                             "--sort=comm,sym", "--stdio", "-g", "none", "--no-inline"]):
            m = re.match(r"\s*([\d.]+)%\s+([\d.]+)%\s+(\S+)\s+\[.\]\s+(.*)$", l)
            if m:
                key = (m.group(3), m.group(4).strip())
                inclusive[key] = max(inclusive.get(key, 0), float(m.group(1)))
        dso = {}
        for l in perf_lines([perf, "report", "-i", data, "--no-children",
                             "--sort=comm,dso", "--stdio", "-g", "none", "--no-inline"]):
            m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+(\S+)", l)
            if m:
                key = (m.group(2), m.group(3))
                dso[key] = dso.get(key, 0) + float(m.group(1))
    main_comm = max((c for c in comm if c not in EXTERNAL),
                    key=lambda c: comm[c], default="fly-bench")
    binary_in = inclusive.get((main_comm, "mlir::gpu::transformGpuModulesToBinaries"), 0)
    external = {c: comm[c] for c in comm if c in EXTERNAL}
    ext_total = sum(external.values())
    total = binary_in + ext_total
    if total <= 0:
        return done({"skipped": "no samples in the binary pass"})
    rows = []
    accounted = 0
    for label, syms in STAGES:
        v = sum(inclusive.get((main_comm, s), 0) for s in syms)
        if v > 0:
            rows.append((label, v))
            accounted += v
    rows.append(("other in-process (target machine setup, object handling)",
                 max(0.0, binary_in - accounted)))
    ext_loader = 0
    for c, v in sorted(external.items()):
        loader = sum(x for (cc, d), x in dso.items() if cc == c and d.startswith("ld-linux"))
        kernel = sum(x for (cc, d), x in dso.items() if cc == c and d.startswith("[kernel"))
        ext_loader += loader
        rows.append((f"external {c}: dynamic loader (ld-linux: relocating its shared libraries)", loader))
        rows.append((f"external {c}: kernel (exec, page faults, file I/O)", kernel))
        rows.append((f"external {c}: its own code", max(0.0, v - loader - kernel)))
    prefix_in = inclusive.get((main_comm, "mlir::PassManager::run"), 0) - binary_in
    done({
        "target": a.target,
        "child": "serial-plain",
        "n": a.n,
        "serial_ms": child.get("ms"),
        "prefix_ms": child.get("prefix_ms"),
        "binary_share_of_samples": total / max(1e-9, sum(comm.values())),
        "stages": [{"stage": l, "percent": 100.0 * v / total} for l, v in rows],
        "external_tools_percent": 100.0 * ext_total / total,
        "external_loader_percent": 100.0 * ext_loader / total,
        "prefix_samples_percent_of_all": prefix_in,
    })


if __name__ == "__main__":
    main(sys.argv[1:])
