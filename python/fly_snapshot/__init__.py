"""fly_snapshot: compile one GPU kernel under many backend hint sets from
Python, running the pipeline before gpu-module-to-binary once.

    from fly_snapshot import Compiler
    with Compiler(jobs=8) as c:
        result = c.compile(open("kernel.mlir").read(), target="rocdl:gfx942",
                           hint_sets=[{}, {"waves_per_eu": 2}, {"maxnreg": 96}])
        for v in result:
            print(v.id, v.status, [(k.registers, k.spills) for k in v.kernels])
        result.write("out")   # the same out-dir and manifest.json as fly-tune

A thin ctypes layer over libFlySnapshotCAPI.so (include/fly-c/FlySnapshot.h);
no compiled Python extension.
"""

from ._capi import library_path
from .compiler import (Compiler, HintSet, HintValue, Kernel, Object, Result, Variant,
                       read_out_dir)
from .dsl import compile_variants
from .errors import CompileError, FlyError, InvalidInputError, LibraryNotFoundError

__version__ = "0.1.0"

__all__ = [
    "Compiler", "Result", "Variant", "Object", "Kernel", "HintSet", "HintValue",
    "compile_variants", "library_path", "read_out_dir",
    "FlyError", "InvalidInputError", "CompileError", "LibraryNotFoundError",
]
