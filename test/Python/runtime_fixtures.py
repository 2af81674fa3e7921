"""The stand-in CUDA driver (test/Runtime/Inputs/fake_libcuda.cpp) for the
runtime and autotune tests: device memory is host memory, scale_1d runs on
the host, each launch advances a fake clock by 1 + |registers - 64| / 64 ms,
so timings and winners are exact."""

import ctypes
import os
from pathlib import Path

import pytest

from fly_snapshot import Compiler, InvalidInputError, runtime

from conftest import SRC_DIR, TOOLS_DIR

FAKE_LIBCUDA = Path(os.environ.get("FLY_FAKE_LIBCUDA") or TOOLS_DIR.parent / "test" / "Runtime"
                    / "fake-libcuda" / "libcuda.so.1")
SCALE_1D = (SRC_DIR / "test" / "Runtime" / "Inputs" / "scale_1d.mlir").read_text()

# y = 2 x + 1 again, through f64 (more registers, so another fake time).
SCALE_1D_F64 = SCALE_1D.replace(
    """        %m = arith.mulf %v, %two : f32
        %r = arith.addf %m, %one : f32""",
    """        %vd = arith.extf %v : f32 to f64
        %twod = arith.extf %two : f32 to f64
        %oned = arith.extf %one : f32 to f64
        %md = arith.mulf %vd, %twod : f64
        %rd = arith.addf %md, %oned : f64
        %r = arith.truncf %rd : f64 to f32""")
assert SCALE_1D_F64 != SCALE_1D


def with_unused_kernel(source):
    """The same module plus a kernel nobody launches: another object."""
    return source.replace("  gpu.module @kernels {\n",
                          "  gpu.module @kernels {\n    gpu.func @unused() kernel { gpu.return }\n",
                          1)


SOURCES = {"f32": SCALE_1D, "f64": SCALE_1D_F64,
           "f32+unused": with_unused_kernel(SCALE_1D),
           "f64+unused": with_unused_kernel(SCALE_1D_F64)}
assert SOURCES["f32+unused"] != SCALE_1D


def fake_ms(registers):
    """What the fake driver's clock says one launch takes."""
    return 1.0 + abs(registers - 64) / 64.0


def counters():
    """(launches, memsets, live primary-context retains) of the fake."""
    out = (ctypes.c_long * 3)()
    ctypes.CDLL(os.fspath(FAKE_LIBCUDA)).fakeCudaCounters(out)
    return tuple(out)


@pytest.fixture
def fake_device(monkeypatch):
    """A runtime.Device on the fake driver, also the default device."""
    if not FAKE_LIBCUDA.is_file():
        pytest.skip("no fake driver at %s" % FAKE_LIBCUDA)
    monkeypatch.setenv("FLY_LIBCUDA", os.fspath(FAKE_LIBCUDA))
    device = runtime.Device("cuda")
    monkeypatch.setattr(runtime.Device, "_default", device)
    yield device
    device.close()


@pytest.fixture
def nvvm(tmp_path):
    """A compiler that finds ptxas (the NVVM preset), or a skip."""
    with Compiler(jobs=2, cache_dir=str(tmp_path / "cache")) as c:
        try:
            c.preset_pipeline("nvvm:sm_90")
        except InvalidInputError as e:
            pytest.skip("no CUDA toolkit: %s" % e)
        yield c


def scale_inputs(n=1000, device=None):
    x = runtime.Buffer.from_list([i * 0.5 for i in range(n)], device=device)
    y = runtime.Buffer.from_list([-7.0] * n, device=device)
    return x, y


def launch_scale(kernel, meta, x, y):
    block = meta.get("BLOCK", 256)
    n = x.shape[0]
    kernel.launch(grid=(-(-n // block),), block=(block,),
                  args=[runtime.memref(x), runtime.memref(y)])
