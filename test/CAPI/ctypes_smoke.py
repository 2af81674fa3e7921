"""Loads libFlySnapshotCAPI.so with ctypes (standard library only) and drives
it the way a Python DSL would.

    python3 ctypes_smoke.py <libFlySnapshotCAPI.so> <kernel.mlir> [toolkit]

Without a toolkit only the error paths run."""

import ctypes
import json
import os
import sys


class FlyCompiler(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]


class FlyResult(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]


def load(path):
    lib = ctypes.CDLL(path)
    sig = {
        "flyGetVersion": (ctypes.c_char_p, []),
        "flyGetLastError": (ctypes.c_char_p, []),
        "flyCompilerCreate": (FlyCompiler, [ctypes.c_char_p]),
        "flyCompilerDestroy": (None, [FlyCompiler]),
        "flyCompilerCompile": (
            FlyResult,
            [FlyCompiler, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
             ctypes.c_char_p, ctypes.c_char_p],
        ),
        "flyResultGetDiagnostics": (ctypes.c_char_p, [FlyResult]),
        "flyResultPrefixFromCache": (ctypes.c_bool, [FlyResult]),
        "flyResultGetNumVariants": (ctypes.c_size_t, [FlyResult]),
        "flyResultGetVariantJSON": (ctypes.c_char_p, [FlyResult, ctypes.c_size_t]),
        "flyResultGetNumObjects": (ctypes.c_size_t, [FlyResult, ctypes.c_size_t]),
        "flyResultGetObject": (
            ctypes.c_void_p,
            [FlyResult, ctypes.c_size_t, ctypes.c_size_t,
             ctypes.POINTER(ctypes.c_size_t)],
        ),
        "flyResultDestroy": (None, [FlyResult]),
    }
    for name, (res, args) in sig.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


def compile_(lib, compiler, source, pipeline, hints):
    """The compile's outcome: a null result is a failed compile, its reason
    the thread's last error; else the variants and the diagnostics."""
    r = lib.flyCompilerCompile(compiler, source, len(source), pipeline.encode(),
                               json.dumps(hints).encode(), b"rocdl:gfx942")
    if not r.ptr:
        return {"ok": False, "error": lib.flyGetLastError().decode(), "variants": []}
    try:
        out = {
            "ok": True,
            "error": lib.flyResultGetDiagnostics(r).decode(),
            "variants": [],
        }
        for v in range(lib.flyResultGetNumVariants(r)):
            objects = []
            for o in range(lib.flyResultGetNumObjects(r, v)):
                size = ctypes.c_size_t()
                ptr = lib.flyResultGetObject(r, v, o, ctypes.byref(size))
                objects.append(ctypes.string_at(ptr, size.value))
            out["variants"].append(
                (json.loads(lib.flyResultGetVariantJSON(r, v)), objects))
        return out
    finally:
        lib.flyResultDestroy(r)


def main():
    lib = load(sys.argv[1])
    with open(sys.argv[2], "rb") as f:
        source = f.read()
    toolkit = sys.argv[3] if len(sys.argv) > 3 else ""
    print("version:", lib.flyGetVersion().decode())

    bad = lib.flyCompilerCreate(b"not json")
    print("bad options null:", bad.ptr is None)
    print("bad options error:", lib.flyGetLastError().decode())

    compiler = lib.flyCompilerCreate(json.dumps({"cache": False}).encode())
    assert compiler.ptr, lib.flyGetLastError().decode()
    try:
        out = compile_(lib, compiler, source, "builtin.module(no-such-pass)", [{}])
        print("bad pipeline ok:", out["ok"])
        print("bad pipeline error:", out["error"].splitlines()[0])

        if toolkit and os.path.isdir(toolkit):
            pipeline = (
                "builtin.module(rocdl-attach-target{chip=gfx942 O=3},"
                "gpu.module(convert-scf-to-cf,convert-gpu-to-rocdl{chipset=gfx942}),"
                "reconcile-unrealized-casts,"
                "gpu-module-to-binary{format=fatbin toolkit=%s})" % toolkit)
            out = compile_(lib, compiler, source, pipeline,
                           [{}, {"waves_per_eu": 8}])
            print("compile ok:", out["ok"], out["error"] if not out["ok"] else "")
            for meta, objects in out["variants"]:
                print("variant", meta.get("id"), "objects:", len(objects),
                      "nonempty:", all(len(o) > 0 for o in objects))
    finally:
        lib.flyCompilerDestroy(compiler)
    print("done")


if __name__ == "__main__":
    main()
