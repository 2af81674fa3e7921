"""A backend crash inside flyCompilerCompile fails only its variant and the
calling Python process lives (the C API's "executor": "process" default). Run with:

    python3 ctypes_isolation.py <libFlySnapshotCAPI.so> <kernel.mlir> <toolkit> <options JSON>
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from ctypes_smoke import compile_, load  # noqa: E402


def main():
    lib = load(sys.argv[1])
    with open(sys.argv[2], "rb") as f:
        source = f.read()
    toolkit, options = sys.argv[3], sys.argv[4]
    compiler = lib.flyCompilerCreate(options.encode())
    assert compiler.ptr, lib.flyGetLastError().decode()
    pipeline = (
        "builtin.module(rocdl-attach-target{chip=gfx942 O=3},"
        "gpu.module(convert-scf-to-cf,convert-gpu-to-rocdl{chipset=gfx942}),"
        "reconcile-unrealized-casts,"
        "gpu-module-to-binary{format=fatbin toolkit=%s})" % toolkit)
    try:
        # The r600 backend does not know gfx942: instruction selection ends
        # in an LLVM fatal error ("Cannot select"), which exits a process.
        # (An unknown chip such as gfx9999 is rejected before compiling.)
        out = compile_(lib, compiler, source, pipeline,
                       [{}, {"target.triple": "r600-unknown-unknown"}, {"waves_per_eu": 8}])
        print("compile ok:", out["ok"], out["error"])
        for meta, objects in out["variants"]:
            status = meta.get("status")
            print("variant", meta.get("id"), status, len(objects),
                  meta.get("error", "").splitlines()[0] if status != "ok" else "")
    finally:
        lib.flyCompilerDestroy(compiler)
    print("the interpreter lives, pid", os.getpid())


if __name__ == "__main__":
    main()
