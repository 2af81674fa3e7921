"""fly_snapshot.runtime: argument packing, loading and launching an object,
do_bench, on the stand-in CUDA driver (and on a GPU where there is one)."""

import os
import pathlib
import re
import struct
import subprocess
import sys

import pytest

from fly_snapshot import FlyError, InvalidInputError, runtime

from conftest import LLVM_TOOLS_DIR
# Fixtures: fake_device, nvvm.
from runtime_fixtures import fake_device, nvvm  # noqa: F401,F811
from runtime_fixtures import SCALE_1D, counters, fake_ms, launch_scale, scale_inputs


class CudaArray:
    """A device array seen only through __cuda_array_interface__ (strides
    in bytes), as cupy and numba present one."""

    def __init__(self, data, shape, strides=None, typestr="<f4"):
        self.__cuda_array_interface__ = {"data": (data, False), "shape": shape,
                                         "strides": strides, "typestr": typestr,
                                         "version": 3}


def unpack(buffer, offsets, fmt="q"):
    return [struct.unpack_from("<" + fmt, buffer, o)[0] for o in offsets]


def test_memref_descriptor_is_3_plus_2_rank_params():
    # memref<?x?xf32> after convert-gpu-to-nvvm: allocated, aligned, offset,
    # size0, size1, stride0, stride1; strides in elements.
    a = CudaArray(0x1000, (4, 6), strides=(6 * 4 * 2, 4))  # every other row
    buffer, offsets = runtime.pack_args([runtime.memref(a)])
    assert len(offsets) == 7
    assert unpack(buffer, offsets) == [0x1000, 0x1000, 0, 4, 6, 12, 1]
    buffer, offsets = runtime.pack_args([runtime.memref(CudaArray(0x2000, (5,)))])
    assert unpack(buffer, offsets) == [0x2000, 0x2000, 0, 5, 1]
    buffer, offsets = runtime.pack_args([runtime.memref(CudaArray(0x3000, ()))])
    assert unpack(buffer, offsets) == [0x3000, 0x3000, 0]
    with pytest.raises(InvalidInputError, match="rank 1 for a tensor of shape"):
        runtime.pack_args([runtime.memref(a, rank=1)])


KERNEL_SIGNATURES = """
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @dynamic(%x: memref<?xf32>, %y: memref<?x?xf32>, %s: memref<f32>) kernel { gpu.return }
    gpu.func @static(%x: memref<16xf32>, %y: memref<4x8xf32>, %n: i32) kernel { gpu.return }
  }
}
"""


@pytest.mark.parametrize("bare", [False, True])
def test_packing_matches_upstream_lowering(bare, tmp_path):
    # What convert-gpu-to-nvvm makes of each memref argument, counted from
    # mlir-opt's output: as many kernel parameters as pack_args produces.
    mlir_opt = LLVM_TOOLS_DIR / "mlir-opt"
    if not mlir_opt.exists():
        pytest.skip("no mlir-opt")
    source = KERNEL_SIGNATURES
    if bare:  # the bare-pointer convention takes static shapes only
        source = "\n".join(l for l in source.split("\n") if "@dynamic" not in l)
    option = "{use-bare-ptr-memref-call-conv=1}" if bare else ""
    out = subprocess.run([str(mlir_opt), "--pass-pipeline=builtin.module(gpu.module("
                          "convert-gpu-to-nvvm%s))" % option], input=source,
                         capture_output=True, text=True, check=True).stdout
    params = {m.group(1): m.group(2).count("%arg") for m in
              re.finditer(r"llvm.func @(\w+)\((.*?)\) attributes", out)}
    x16, y48 = CudaArray(0x1000, (16,)), CudaArray(0x2000, (4, 8))
    wrap = (lambda t: t) if bare else runtime.memref
    assert params["static"] == len(runtime.pack_args([wrap(x16), wrap(y48), runtime.i32(1)])[1])
    if not bare:
        args = [wrap(CudaArray(0, (3,))), wrap(CudaArray(0, (3, 4))), wrap(CudaArray(0, ()))]
        assert params["dynamic"] == len(runtime.pack_args(args)[1]) == 5 + 7 + 3


def test_bare_pointers_and_typed_scalars():
    # A tensor alone is its pointer (use-bare-ptr-memref-call-conv); each
    # parameter aligned to its own size.
    buffer, offsets = runtime.pack_args([CudaArray(0x4000, (8,)), runtime.i32(-3),
                                         runtime.f64(0.5), runtime.f32(2.0), 7])
    assert offsets == [0, 8, 16, 24, 32]
    assert struct.unpack_from("<Q", buffer, 0)[0] == 0x4000
    assert struct.unpack_from("<i", buffer, 8)[0] == -3
    assert struct.unpack_from("<d", buffer, 16)[0] == 0.5
    assert struct.unpack_from("<f", buffer, 24)[0] == 2.0
    assert struct.unpack_from("<q", buffer, 32)[0] == 7
    with pytest.raises(InvalidInputError, match=r"f32\(1.5\) or f64"):
        runtime.pack_args([1.5])
    with pytest.raises(InvalidInputError, match="not a device tensor"):
        runtime.pack_args([object()])


class ScriptedTimer:
    """An injected timer: each elapsed_ms() is the next scripted value."""

    def __init__(self, values):
        self.values = list(values)
        self.records = 0

    def record(self):
        self.records += 1
        return self.records

    def elapsed_ms(self, a, b):
        return self.values.pop(0)


def test_do_bench_reruns_a_noisy_round():
    calls = []
    # 5 estimate runs of 1 ms -> 2 warm-up runs, 10 timed runs per round; a
    # noisy first round (cv > 5%), then a quiet one.
    noisy = [1.0, 3.0] * 5
    quiet = [1.0, 1.02] * 5
    timer = ScriptedTimer([1.0] * 5 + noisy + quiet)
    t = runtime.do_bench(lambda: calls.append(1), warmup=2, rep=10, flush=False, timer=timer)
    assert t.reruns == 1 and not t.noisy
    assert t.median == pytest.approx(1.01)
    assert t.cv < 0.05
    assert len(calls) == 5 + 2 + 10 + 10
    assert timer.values == []


def test_do_bench_keeps_the_least_noisy_round():
    rounds = [[1.0, 3.0] * 2, [1.0, 1.5] * 2, [1.0, 4.0] * 2]
    timer = ScriptedTimer([1.0] * 5 + [x for r in rounds for x in r])
    t = runtime.do_bench(lambda: None, warmup=0, rep=4, flush=False, timer=timer,
                         max_reruns=2)
    assert t.noisy and t.reruns == 2
    assert sorted(t.times) == [1.0, 1.0, 1.5, 1.5]


def test_no_driver_is_a_clean_error(monkeypatch, tmp_path):
    monkeypatch.setenv("FLY_LIBCUDA", str(tmp_path / "missing.so"))
    with pytest.raises(runtime.NoDeviceError, match="cannot load the CUDA driver library"):
        runtime.Device("cuda")


@pytest.mark.skipif(os.path.exists("/dev/kfd"), reason="an AMD GPU is here")
def test_hip_backend_without_device(monkeypatch, tmp_path):
    # The HIP plugin beside the library, where it was built (libamdhip64),
    # finds no device; without it, the error names the plugin.
    with pytest.raises(runtime.NoDeviceError, match=r"hip: .*(hipErrorNoDevice|libFlyRuntimeHip)"):
        runtime.Device("hip")
    monkeypatch.setenv("FLY_HIP_BACKEND", str(tmp_path / "missing.so"))
    with pytest.raises(runtime.NoDeviceError, match="libFlyRuntimeHip.so could not be loaded"):
        runtime.Device("hip")
    with pytest.raises(runtime.DeviceError, match="unknown backend 'opencl'"):
        runtime.Device("opencl")


_RELATIVE_HIP_OPEN = r"""
import ctypes, os, sys
lib = ctypes.CDLL(sys.argv[1])
os.chdir("/")
class Handle(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]
lib.flyRtDeviceOpen.restype = Handle
lib.flyRtDeviceOpen.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
lib.flyRtGetLastError.restype = ctypes.c_char_p
status = ctypes.c_int(-1)
lib.flyRtDeviceOpen(b"hip", 0, ctypes.byref(status))
print(lib.flyRtGetLastError().decode())
"""


@pytest.mark.skipif(os.path.exists("/dev/kfd"), reason="an AMD GPU is here")
def test_hip_plugin_beside_a_library_loaded_by_a_relative_path():
    # dlopen("lib/libFlyRuntimeCAPI.so"), then a chdir: the plugin beside the
    # library is still found (it reports no device, not a missing plugin).
    library = pathlib.Path(runtime.lib()._name)
    if not (library.parent / "libFlyRuntimeHip.so").is_file():
        pytest.skip("the HIP plugin is not built")
    env = {k: v for k, v in os.environ.items() if k != "FLY_HIP_BACKEND"}
    run = subprocess.run(
        [sys.executable, "-c", _RELATIVE_HIP_OPEN,
         os.path.join(library.parent.name, library.name)],
        cwd=library.parent.parent, env=env, capture_output=True, text=True,
        timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("hipGetDeviceCount: "), run.stdout


def test_fake_driver_without_device(fake_device, monkeypatch):
    monkeypatch.setenv("FAKE_CUDA_MODE", "nodevice")
    with pytest.raises(runtime.NoDeviceError, match="CUDA_ERROR_NO_DEVICE"):
        runtime.Device("cuda")


def test_load_launch_and_read_back(fake_device, nvvm):
    assert fake_device.info["name"] == "Fake CUDA Device"
    assert fake_device.arch == "sm_90"
    (v,) = nvvm.compile(SCALE_1D, target="nvvm:sm_90")
    module = runtime.Module.load(v.objects[0].data)
    k = module.kernel("scale_1d")
    # The driver's count is the cubin's, as the compile reported it.
    assert k.attributes.registers == v.kernels[0].registers
    x, y = scale_inputs()
    launch_scale(k, {"BLOCK": 128}, x, y)
    fake_device.synchronize()
    assert y.tolist() == [2 * i * 0.5 + 1 for i in range(1000)]
    # A grid covering 300 threads writes 300 entries.
    y.write([-7.0] * 1000)
    k.launch(grid=(3,), block=(100,), args=[runtime.memref(x), runtime.memref(y)])
    assert runtime.host_values(y)[299:301] == [300.0, -7.0]
    with pytest.raises(runtime.DeviceError, match="CUDA_ERROR_NOT_FOUND"):
        module.kernel("no_such_kernel")
    module.unload()
    with pytest.raises(FlyError, match="unloaded"):
        k.launch(1, 1, [runtime.memref(x), runtime.memref(y)])


def test_strided_host_values(fake_device):
    b = runtime.Buffer.from_list(list(range(12)), shape=(12,), typestr="i4")
    # Columns 0 and 2 of a 3 x 4 row-major matrix, through byte strides.
    view = CudaArray(b.data_ptr() + 0, (3, 2), strides=(16, 8), typestr="<i4")
    assert runtime.host_values(view) == [0, 2, 4, 6, 8, 10]


def test_do_bench_times_with_events_and_flushes(fake_device, nvvm):
    (v,) = nvvm.compile(SCALE_1D, target="nvvm:sm_90")
    k = runtime.Module.load(v.objects[0].data).kernel("scale_1d")
    x, y = scale_inputs()
    launches0, memsets0, _ = counters()
    t = runtime.do_bench(lambda: launch_scale(k, {}, x, y), warmup=10, rep=20,
                         flush_bytes=1 << 20)
    launches, memsets, _ = counters()
    # The fake clock: every timed launch took exactly fake_ms(registers).
    ms = fake_ms(v.kernels[0].registers)
    assert t.median == pytest.approx(ms) and t.cv == pytest.approx(0, abs=1e-6)
    runs = 5 + max(1, int(10 / ms)) + max(1, int(20 / ms))
    assert len(t.times) == max(1, int(20 / ms))
    # One L2 flush (a memset) before every run.
    assert launches - launches0 == runs
    assert memsets - memsets0 == runs


def test_primary_context_is_shared_and_released(fake_device):
    # The device retained the primary context (torch's) and gives it back.
    before = counters()[2]
    d = runtime.Device("cuda")
    assert counters()[2] == before + 1
    d.close()
    assert counters()[2] == before


def test_loads_beside_nothing_llvm():
    # The library links no LLVM or MLIR: safe beside torch's own LLVM.
    out = subprocess.run(["ldd", str(runtime.lib()._name)], capture_output=True,
                         text=True).stdout
    assert "libLLVM" not in out and "libMLIR" not in out, out


@pytest.mark.skipif(not os.path.exists("/dev/nvidia0"), reason="no NVIDIA GPU")
def test_real_gpu_scale(nvvm, monkeypatch):
    monkeypatch.delenv("FLY_LIBCUDA", raising=False)
    device = runtime.Device("cuda")
    (v,) = nvvm.compile(SCALE_1D, target="nvvm:" + device.arch)
    k = runtime.Module.load(v.objects[0].data, device).kernel("scale_1d")
    x, y = scale_inputs(device=device)
    launch_scale(k, {}, x, y)
    device.synchronize()
    assert y.tolist() == [2 * i * 0.5 + 1 for i in range(1000)]
    t = runtime.do_bench(lambda: launch_scale(k, {}, x, y), device=device)
    assert t.median > 0


# Every handle null, and NULL where a pointer is needed: each call fails with
# the reason in flyRtGetLastError(), none crashes (run in a child, so a crash
# is a failed test and not a dead pytest).
_NULL_HANDLE_CALLS = r"""
import ctypes, sys
from fly_snapshot import runtime
lib = runtime.lib()
lib.flyRtLaunch.argtypes = None
lib.flyRtAlloc.argtypes = None
lib.flyRtEventElapsedMs.argtypes = None
null = runtime._Handle()
device = lib.flyRtDeviceOpen(b"cuda", 0, None)
assert device.ptr, lib.flyRtGetLastError()
def expect(what, ok):
    print("%s: ok=%d error=%s" % (what, ok, lib.flyRtGetLastError().decode()))
    sys.stdout.flush()
print("info: %r" % lib.flyRtDeviceGetInfoJSON(null))
expect("synchronize", lib.flyRtDeviceSynchronize(null))
expect("load", bool(lib.flyRtModuleLoad(null, b"x", 1).ptr))
expect("function", bool(lib.flyRtModuleGetFunction(null, b"k").ptr))
expect("attributes", lib.flyRtFunctionGetAttributes(null, None, None, None, None))
grid = (ctypes.c_uint * 3)(1, 1, 1)
expect("launch", lib.flyRtLaunch(null, grid, grid, ctypes.c_uint(0), None, None, None,
                                 ctypes.c_size_t(0)))
expect("alloc", lib.flyRtAlloc(null, ctypes.c_size_t(16), None))
expect("alloc into NULL", lib.flyRtAlloc(device, ctypes.c_size_t(16), None))
expect("free", lib.flyRtFree(null, 0))
expect("to device", lib.flyRtCopyToDevice(null, 0, b"x", 1))
expect("to host", lib.flyRtCopyToHost(device, None, 0, 1))
expect("on device", lib.flyRtCopyOnDevice(null, 0, 0, 1))
expect("memset", lib.flyRtMemset(null, 0, 0, 1, None))
expect("event", bool(lib.flyRtEventCreate(null).ptr))
expect("record", lib.flyRtEventRecord(null, None))
event = lib.flyRtEventCreate(device)
expect("elapsed", lib.flyRtEventElapsedMs(null, null, None))
expect("elapsed into NULL", lib.flyRtEventElapsedMs(event, event, None))
lib.flyRtEventDestroy(event)
lib.flyRtModuleUnload(null)
lib.flyRtEventDestroy(null)
lib.flyRtDeviceDestroy(null)
lib.flyRtDeviceDestroy(device)
print("alive")
"""


def test_null_handles_fail_without_crashing(fake_device):
    run = subprocess.run([sys.executable, "-c", _NULL_HANDLE_CALLS], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "info: None"
    assert lines[-1] == "alive"
    results = lines[1:-1]
    assert len(results) == 16, lines
    for line in results:
        assert re.match(r"[a-z A-Z]+: ok=0 error=\S", line), line
    assert "synchronize: ok=0 error=null device" in results
    assert "alloc into NULL: ok=0 error=no pointer to receive the allocation" in results
    assert "elapsed into NULL: ok=0 error=no pointer to receive the milliseconds" in results
