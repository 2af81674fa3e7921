"""Load a variant's object and launch it on the caller's own device buffers,
and time it: ctypes over libFlyRuntimeCAPI.so (include/fly-c/FlyRuntime.h),
which links no LLVM or MLIR and so loads beside torch or cupy.

    from fly_snapshot import runtime as rt
    module = rt.Module.load(variant.objects[0].data)
    k = module.kernel("scale_1d")
    k.launch(grid=(4,), block=(256,), args=[rt.memref(x), rt.memref(y)])
    print(rt.do_bench(lambda: k.launch((4,), (256,), [rt.memref(x), rt.memref(y)])))

Arguments are torch / cupy tensors (or anything with ``data_ptr()``,
``__cuda_array_interface__`` or ``__dlpack__``), passed as one pointer (the
bare-pointer convention) or, wrapped in ``memref(t)``, as the descriptor an
MLIR kernel takes after convert-gpu-to-nvvm / -rocdl: allocated pointer,
aligned pointer, offset, sizes..., strides... (3 + 2 x rank parameters).
Scalars say their type: ``i32(4)``, ``f32(0.5)``; a plain int is an i64
(MLIR's ``index``). The device is the GPU's primary context, the one torch
and cupy use, so their pointers and streams are valid here.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import statistics
import struct
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from .errors import FlyError, InvalidInputError

LIBRARY_NAME = "libFlyRuntimeCAPI.so"
_PACKAGE_DIR = Path(__file__).resolve().parent


class DeviceError(FlyError):
    """A driver call failed (the driver's message)."""


class NoDeviceError(DeviceError):
    """No driver, or a driver without a usable device."""


class _Handle(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]


_u64p = ctypes.POINTER(ctypes.c_uint64)
_SIGNATURES = {
    "flyRtGetLastError": (ctypes.c_char_p, []),
    "flyRtDeviceOpen": (_Handle, [ctypes.c_char_p, ctypes.c_int,
                                  ctypes.POINTER(ctypes.c_int)]),
    "flyRtDeviceDestroy": (None, [_Handle]),
    "flyRtDeviceGetInfoJSON": (ctypes.c_char_p, [_Handle]),
    "flyRtDeviceSynchronize": (ctypes.c_bool, [_Handle]),
    "flyRtModuleLoad": (_Handle, [_Handle, ctypes.c_char_p, ctypes.c_size_t]),
    "flyRtModuleUnload": (None, [_Handle]),
    "flyRtModuleGetFunction": (_Handle, [_Handle, ctypes.c_char_p]),
    "flyRtFunctionGetAttributes": (
        ctypes.c_bool, [_Handle, ctypes.POINTER(ctypes.c_int),
                        ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64),
                        ctypes.POINTER(ctypes.c_int)]),
    "flyRtLaunch": (ctypes.c_bool, [_Handle, ctypes.c_uint * 3, ctypes.c_uint * 3,
                                    ctypes.c_uint, ctypes.c_void_p, ctypes.c_char_p,
                                    ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t]),
    "flyRtAlloc": (ctypes.c_bool, [_Handle, ctypes.c_size_t, _u64p]),
    "flyRtFree": (ctypes.c_bool, [_Handle, ctypes.c_uint64]),
    "flyRtCopyToDevice": (ctypes.c_bool, [_Handle, ctypes.c_uint64, ctypes.c_char_p,
                                          ctypes.c_size_t]),
    "flyRtCopyToHost": (ctypes.c_bool, [_Handle, ctypes.c_void_p, ctypes.c_uint64,
                                        ctypes.c_size_t]),
    "flyRtCopyOnDevice": (ctypes.c_bool, [_Handle, ctypes.c_uint64, ctypes.c_uint64,
                                          ctypes.c_size_t]),
    "flyRtMemset": (ctypes.c_bool, [_Handle, ctypes.c_uint64, ctypes.c_uint8,
                                    ctypes.c_size_t, ctypes.c_void_p]),
    "flyRtEventCreate": (_Handle, [_Handle]),
    "flyRtEventDestroy": (None, [_Handle]),
    "flyRtEventRecord": (ctypes.c_bool, [_Handle, ctypes.c_void_p]),
    "flyRtEventElapsedMs": (ctypes.c_bool, [_Handle, _Handle,
                                            ctypes.POINTER(ctypes.c_float)]),
}


def candidate_paths() -> List[Path]:
    """Where libFlyRuntimeCAPI.so is looked for, in order: $FLY_RUNTIME_LIBRARY,
    the package's ``lib/``, beside the libFlySnapshotCAPI.so recorded in
    ``_locations.json`` (the build or install tree)."""
    candidates = []
    if os.environ.get("FLY_RUNTIME_LIBRARY"):
        candidates.append(Path(os.environ["FLY_RUNTIME_LIBRARY"]))
    candidates.append(_PACKAGE_DIR / "lib" / LIBRARY_NAME)
    locations = _PACKAGE_DIR / "_locations.json"
    if locations.is_file():
        recorded = json.loads(locations.read_text()).get("library")
        if recorded:
            path = Path(recorded)
            path = path if path.is_absolute() else _PACKAGE_DIR / path
            candidates.append(path.parent / LIBRARY_NAME)
    return candidates


_lib: Optional[ctypes.CDLL] = None
_lib_lock = threading.Lock()


def lib() -> ctypes.CDLL:
    """The loaded runtime C API (no LLVM: safe beside torch)."""
    global _lib
    with _lib_lock:
        if _lib is None:
            path = next((p for p in candidate_paths() if p.is_file()), None)
            if path is None:
                raise NoDeviceError("fly_snapshot.runtime cannot find %s; looked at: %s "
                                    "(ninja -C build FlyRuntimeCAPI)" % (
                                        LIBRARY_NAME, ", ".join(map(str, candidate_paths()))))
            loaded = ctypes.CDLL(os.fspath(path.resolve()))
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(loaded, name)
                fn.restype, fn.argtypes = restype, argtypes
            _lib = loaded
        return _lib


def _error(what: str) -> DeviceError:
    return DeviceError("%s: %s" % (what, (lib().flyRtGetLastError() or b"").decode(
        errors="replace")))


# --- arguments ----------------------------------------------------------------

@dataclass(frozen=True)
class Scalar:
    """A kernel parameter of an explicit type."""

    value: Union[int, float]
    #: struct format: ``b h i q`` (signed), ``B H I Q``, ``f d``.
    format: str


def i8(v: int) -> Scalar: return Scalar(int(v), "b")
def i16(v: int) -> Scalar: return Scalar(int(v), "h")
def i32(v: int) -> Scalar: return Scalar(int(v), "i")
def i64(v: int) -> Scalar: return Scalar(int(v), "q")
def u32(v: int) -> Scalar: return Scalar(int(v), "I")
def u64(v: int) -> Scalar: return Scalar(int(v), "Q")
def f32(v: float) -> Scalar: return Scalar(float(v), "f")
def f64(v: float) -> Scalar: return Scalar(float(v), "d")
def ptr(v: int) -> Scalar: return Scalar(int(v), "Q")


@dataclass(frozen=True)
class ArrayView:
    """What a tensor argument is to the runtime: its first element's device
    address, shape, strides in elements, element size and type code."""

    data: int
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]
    itemsize: int
    #: numpy's typestr kind + size, e.g. ``f4``, ``i8``, ``f2``, ``b1``.
    typestr: str

    @property
    def span_bytes(self) -> int:
        """Bytes from the first element to the end of the last one."""
        if any(s == 0 for s in self.shape):
            return 0
        last = sum((n - 1) * s for n, s in zip(self.shape, self.strides))
        return (last + 1) * self.itemsize


def _contiguous_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


_TORCH_TYPES = {"float32": "f4", "float16": "f2", "bfloat16": "V2", "float64": "f8",
                "int32": "i4", "int64": "i8", "int16": "i2", "int8": "i1", "uint8": "u1",
                "bool": "b1", "float8_e4m3fn": "V1", "float8_e5m2": "V1"}
_DL_CODES = {0: "i", 1: "u", 2: "f", 4: "V", 6: "b"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def _from_dlpack(obj: Any) -> ArrayView:
    """Reads a DLPack capsule without consuming it (the capsule's own
    destructor frees it; ``obj`` keeps the memory alive)."""
    capsule = obj.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    t = ctypes.cast(get(capsule, b"dltensor"), ctypes.POINTER(_DLTensor)).contents
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = (tuple(t.strides[i] for i in range(t.ndim)) if t.strides
               else _contiguous_strides(shape))
    itemsize = t.dtype.bits * t.dtype.lanes // 8
    typestr = _DL_CODES.get(t.dtype.code, "V") + str(itemsize)
    return ArrayView((t.data or 0) + t.byte_offset, shape, strides, itemsize, typestr)


def view(obj: Any) -> ArrayView:
    """The ArrayView of a tensor: a Buffer, a torch tensor, anything with
    ``__cuda_array_interface__`` (cupy, numba) or ``__dlpack__``."""
    if isinstance(obj, ArrayView):
        return obj
    if isinstance(obj, Buffer):
        return obj.view
    if callable(getattr(obj, "data_ptr", None)) and callable(getattr(obj, "stride", None)):
        itemsize = obj.element_size()
        typestr = _TORCH_TYPES.get(str(obj.dtype).replace("torch.", ""), "V%d" % itemsize)
        return ArrayView(int(obj.data_ptr()), tuple(obj.shape), tuple(obj.stride()),
                         itemsize, typestr)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        shape = tuple(cai["shape"])
        itemsize = int(cai["typestr"][2:])
        strides = (tuple(s // itemsize for s in cai["strides"]) if cai.get("strides")
                   else _contiguous_strides(shape))
        return ArrayView(int(cai["data"][0]), shape, strides, itemsize, cai["typestr"][1:])
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj)
    raise InvalidInputError("%s is not a device tensor (no data_ptr(), "
                            "__cuda_array_interface__ or __dlpack__)" % type(obj).__name__)


@dataclass(frozen=True)
class MemRef:
    """A tensor passed as an MLIR memref descriptor."""

    array: Any
    #: The descriptor's rank (None: the tensor's). A rank-0 memref is 3
    #: parameters.
    rank: Optional[int] = None


def memref(tensor: Any, rank: Optional[int] = None) -> MemRef:
    """``tensor`` as the memref descriptor of MLIR's default calling
    convention for gpu kernels after convert-gpu-to-nvvm / -rocdl: allocated
    pointer, aligned pointer, offset, then one size and one stride per
    dimension, each a separate kernel parameter (pointers and index values
    are 64-bit). With ``use-bare-ptr-memref-call-conv`` the kernel takes the
    pointer alone: pass the tensor itself."""
    return MemRef(tensor, rank)


def memref_params(arg: MemRef) -> List[Scalar]:
    """The descriptor's parameters. The tensor's own address is both
    pointers (its storage offset is already in it), offset 0."""
    v = view(arg.array)
    rank = len(v.shape) if arg.rank is None else arg.rank
    if rank != len(v.shape):
        raise InvalidInputError("memref of rank %d for a tensor of shape %s"
                                % (rank, list(v.shape)))
    return ([ptr(v.data), ptr(v.data), i64(0)] + [i64(n) for n in v.shape]
            + [i64(s) for s in v.strides])


def pack_args(args: Sequence[Any]) -> Tuple[bytes, List[int]]:
    """The kernel parameters as one buffer and each one's offset in it, each
    aligned to its size."""
    params: List[Scalar] = []
    for i, a in enumerate(args):
        if isinstance(a, Scalar):
            params.append(a)
        elif isinstance(a, MemRef):
            params.extend(memref_params(a))
        elif isinstance(a, bool):
            raise InvalidInputError("argument %d: a bool needs a type, e.g. i8(True)" % i)
        elif isinstance(a, int):
            params.append(i64(a))
        elif isinstance(a, float):
            raise InvalidInputError("argument %d: a float needs a type: f32(%r) or f64(%r)"
                                    % (i, a, a))
        else:
            params.append(ptr(view(a).data))
    buffer, offsets = bytearray(), []
    for p in params:
        size = struct.calcsize(p.format)
        buffer.extend(b"\0" * (-len(buffer) % size))
        offsets.append(len(buffer))
        buffer.extend(struct.pack("<" + p.format, p.value))
    return bytes(buffer), offsets


def _stream_handle(stream: Any) -> Optional[int]:
    """A raw stream from None, an int, a torch stream (``cuda_stream``) or a
    cupy stream (``ptr``). None is torch's current stream once torch has
    initialised CUDA, else the default stream."""
    if stream is None:
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            return torch.cuda.current_stream().cuda_stream or None
        return None
    if isinstance(stream, int):
        return stream or None
    for attribute in ("cuda_stream", "ptr", "handle"):
        raw = getattr(stream, attribute, None)
        if isinstance(raw, int):
            return raw or None
    raise InvalidInputError("not a stream: %r" % (stream,))


def _dim3(d: Union[int, Sequence[int]], what: str) -> Any:
    dims = [d] if isinstance(d, int) else list(d)
    if not 1 <= len(dims) <= 3 or any(not isinstance(x, int) or x < 1 for x in dims):
        raise InvalidInputError("%s must be 1 to 3 positive ints, got %r" % (what, d))
    return (ctypes.c_uint * 3)(*(dims + [1] * (3 - len(dims))))


# --- device, modules, kernels -------------------------------------------------

class Device:
    """One GPU through the CUDA driver or HIP, in the process's primary
    context. ``Device.default()`` is the one everything here uses unless
    told otherwise."""

    _default: Optional["Device"] = None
    _default_lock = threading.Lock()

    def __init__(self, backend: Optional[str] = None, ordinal: int = 0) -> None:
        status = ctypes.c_int(0)
        errors = []
        for name in ([backend] if backend else ["cuda", "hip"]):
            handle = lib().flyRtDeviceOpen(name.encode(), ordinal, ctypes.byref(status))
            if handle.ptr:
                self._handle = handle
                self.info: Dict[str, Any] = json.loads(lib().flyRtDeviceGetInfoJSON(handle))
                return
            errors.append("%s: %s" % (name, lib().flyRtGetLastError().decode(errors="replace")))
            if status.value == 3:  # a device that failed to open: say so
                raise DeviceError("; ".join(errors))
        raise NoDeviceError("no GPU: " + "; ".join(errors))

    @classmethod
    def default(cls) -> "Device":
        with cls._default_lock:
            if cls._default is None:
                cls._default = cls()
            return cls._default

    @property
    def arch(self) -> str:
        """``sm_90``, ``gfx942``."""
        return self.info["arch"]

    @property
    def name(self) -> str:
        return self.info["name"]

    def synchronize(self) -> None:
        if not lib().flyRtDeviceSynchronize(self._handle):
            raise _error("synchronize")

    def alloc(self, nbytes: int) -> int:
        out = ctypes.c_uint64()
        if not lib().flyRtAlloc(self._handle, nbytes, ctypes.byref(out)):
            raise _error("alloc(%d)" % nbytes)
        return out.value

    def free(self, address: int) -> None:
        if not lib().flyRtFree(self._handle, address):
            raise _error("free")

    def memset(self, address: int, value: int, nbytes: int, stream: Any = None) -> None:
        if not lib().flyRtMemset(self._handle, address, value, nbytes,
                                 _stream_handle(stream)):
            raise _error("memset")

    def copy_to_device(self, address: int, data: bytes) -> None:
        if not lib().flyRtCopyToDevice(self._handle, address, data, len(data)):
            raise _error("copy to device")

    def copy_to_host(self, address: int, nbytes: int) -> bytes:
        out = ctypes.create_string_buffer(nbytes)
        if nbytes and not lib().flyRtCopyToHost(self._handle, out, address, nbytes):
            raise _error("copy to host")
        return out.raw

    def copy_on_device(self, dst: int, src: int, nbytes: int) -> None:
        if nbytes and not lib().flyRtCopyOnDevice(self._handle, dst, src, nbytes):
            raise _error("copy on device")

    def close(self) -> None:
        """Releases the device (the primary context stays for its other
        users)."""
        if getattr(self, "_handle", None) is not None:
            lib().flyRtDeviceDestroy(self._handle)
            self._handle = None


_FORMATS = {"f4": "f", "f8": "d", "i4": "i", "i8": "q", "i2": "h", "i1": "b",
            "u1": "B", "u4": "I", "u8": "Q", "b1": "?"}


class Buffer:
    """Device memory this package owns, shaped like a tensor: for callers
    without torch or cupy (and the tests). ``data_ptr()`` like torch."""

    def __init__(self, shape: Sequence[int], typestr: str = "f4",
                 device: Optional[Device] = None) -> None:
        if typestr not in _FORMATS:
            raise InvalidInputError("typestr must be one of %s" % sorted(_FORMATS))
        self.device = device or Device.default()
        self.shape = tuple(shape)
        self.typestr = typestr
        self.itemsize = struct.calcsize(_FORMATS[typestr])
        self.nbytes = math.prod(self.shape) * self.itemsize
        self.address = self.device.alloc(max(self.nbytes, 1))

    @classmethod
    def from_list(cls, values: Sequence[Union[int, float]], shape: Optional[Sequence[int]] = None,
                  typestr: str = "f4", device: Optional[Device] = None) -> "Buffer":
        b = cls(shape if shape is not None else (len(values),), typestr, device)
        b.write(values)
        return b

    @property
    def view(self) -> ArrayView:
        return ArrayView(self.address, self.shape, _contiguous_strides(self.shape),
                         self.itemsize, self.typestr)

    def data_ptr(self) -> int:
        return self.address

    def write(self, values: Sequence[Union[int, float]]) -> None:
        self.device.copy_to_device(self.address, struct.pack(
            "<%d%s" % (len(values), _FORMATS[self.typestr]), *values))

    def tolist(self) -> List[Union[int, float]]:
        return list(struct.unpack("<%d%s" % (self.nbytes // self.itemsize,
                                             _FORMATS[self.typestr]),
                                  self.device.copy_to_host(self.address, self.nbytes)))

    def __del__(self) -> None:
        try:
            self.device.free(self.address)
        except Exception:
            pass


def host_values(obj: Any, device: Optional[Device] = None) -> List[Union[int, float]]:
    """A tensor's elements in row-major order, read through this runtime
    (any tensor kind; torch tensors go through torch)."""
    if callable(getattr(obj, "cpu", None)) and callable(getattr(obj, "tolist", None)):
        return obj.detach().flatten().cpu().tolist()
    if isinstance(obj, Buffer):
        return obj.tolist()
    v = view(obj)
    fmt = _FORMATS.get(v.typestr)
    if fmt is None:
        raise InvalidInputError("cannot read elements of type %s" % v.typestr)
    raw = (device or Device.default()).copy_to_host(v.data, v.span_bytes)
    flat = struct.unpack("<%d%s" % (len(raw) // v.itemsize, fmt), raw)
    out: List[Union[int, float]] = []

    def walk(dim: int, base: int) -> None:
        if dim == len(v.shape):
            out.append(flat[base])
            return
        for i in range(v.shape[dim]):
            walk(dim + 1, base + i * v.strides[dim])

    walk(0, 0)
    return out


@dataclass(frozen=True)
class KernelAttributes:
    registers: int
    local_bytes: int
    shared_bytes: int
    max_threads_per_block: int


class Kernel:
    """One kernel function of a loaded module."""

    def __init__(self, module: "Module", name: str, handle: _Handle) -> None:
        self.module, self.name, self._handle = module, name, handle

    @property
    def attributes(self) -> KernelAttributes:
        regs, threads = ctypes.c_int(), ctypes.c_int()
        local, shared = ctypes.c_int64(), ctypes.c_int64()
        if not lib().flyRtFunctionGetAttributes(self._handle, ctypes.byref(regs),
                                                ctypes.byref(local), ctypes.byref(shared),
                                                ctypes.byref(threads)):
            raise _error("attributes of %s" % self.name)
        return KernelAttributes(regs.value, local.value, shared.value, threads.value)

    def launch(self, grid: Union[int, Sequence[int]], block: Union[int, Sequence[int]],
               args: Sequence[Any] = (), shared: int = 0, stream: Any = None) -> None:
        """Launches asynchronously on ``stream`` (see _stream_handle)."""
        if self.module._handle is None:
            raise FlyError("the module of %s was unloaded" % self.name)
        buffer, offsets = pack_args(args)
        if not lib().flyRtLaunch(self._handle, _dim3(grid, "grid"), _dim3(block, "block"),
                                 shared, _stream_handle(stream), buffer,
                                 (ctypes.c_size_t * max(len(offsets), 1))(*offsets),
                                 len(offsets)):
            raise _error("launch %s" % self.name)


class Module:
    """A loaded object: a cubin / PTX / HSA code object."""

    def __init__(self, handle: _Handle, device: Device) -> None:
        self._handle: Optional[_Handle] = handle
        self.device = device
        self._kernels: Dict[str, Kernel] = {}

    @classmethod
    def load(cls, data: bytes, device: Optional[Device] = None) -> "Module":
        device = device or Device.default()
        handle = lib().flyRtModuleLoad(device._handle, bytes(data), len(data))
        if not handle.ptr:
            raise _error("load object (%d bytes)" % len(data))
        return cls(handle, device)

    def kernel(self, name: str) -> Kernel:
        if self._handle is None:
            raise FlyError("this module was unloaded")
        if name not in self._kernels:
            handle = lib().flyRtModuleGetFunction(self._handle, name.encode())
            if not handle.ptr:
                raise _error("kernel %r" % name)
            self._kernels[name] = Kernel(self, name, handle)
        return self._kernels[name]

    def unload(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            lib().flyRtModuleUnload(handle)

    def __enter__(self) -> "Module":
        return self

    def __exit__(self, *exc: object) -> None:
        self.unload()


# --- timing ---------------------------------------------------------------------

class EventTimer:
    """Times with device events on ``stream``: ``record()`` puts an event on
    the stream, ``elapsed_ms(a, b)`` waits for ``b``."""

    def __init__(self, device: Optional[Device] = None, stream: Any = None) -> None:
        self.device = device or Device.default()
        self.stream = stream
        self._events: List[_Handle] = []

    def record(self) -> _Handle:
        event = lib().flyRtEventCreate(self.device._handle)
        if not event.ptr:
            raise _error("event create")
        self._events.append(event)
        if not lib().flyRtEventRecord(event, _stream_handle(self.stream)):
            raise _error("event record")
        return event

    def elapsed_ms(self, start: _Handle, stop: _Handle) -> float:
        ms = ctypes.c_float()
        if not lib().flyRtEventElapsedMs(start, stop, ctypes.byref(ms)):
            raise _error("event elapsed time")
        return float(ms.value)

    def release(self) -> None:
        for e in self._events:
            lib().flyRtEventDestroy(e)
        self._events.clear()


class L2Flusher:
    """Writes over a buffer larger than the L2 cache (Triton writes 256 MB)
    so each timed run starts cold."""

    def __init__(self, device: Optional[Device] = None, nbytes: int = 256 << 20) -> None:
        self.device = device or Device.default()
        self.nbytes = nbytes
        self.address = self.device.alloc(nbytes) if nbytes else 0

    def flush(self, stream: Any = None) -> None:
        if self.nbytes:
            self.device.memset(self.address, 0, self.nbytes, stream)

    def __del__(self) -> None:
        try:
            if self.nbytes:
                self.device.free(self.address)
        except Exception:
            pass


@dataclass(frozen=True)
class Timing:
    """What do_bench measured, in milliseconds."""

    median: float
    mean: float
    min: float
    max: float
    stdev: float
    #: stdev / mean of the kept run.
    cv: float
    times: Tuple[float, ...] = field(repr=False)
    #: How many extra measurement rounds noise caused.
    reruns: int = 0
    #: Every round stayed above the threshold.
    noisy: bool = False

    def to_json(self) -> Dict[str, Any]:
        return {"median_ms": self.median, "mean_ms": self.mean, "min_ms": self.min,
                "max_ms": self.max, "stdev_ms": self.stdev, "cv": self.cv,
                "repetitions": len(self.times), "reruns": self.reruns, "noisy": self.noisy}


def _summary(times: Sequence[float], reruns: int, noisy: bool) -> Timing:
    mean = statistics.fmean(times)
    stdev = statistics.pstdev(times) if len(times) > 1 else 0.0
    return Timing(statistics.median(times), mean, min(times), max(times), stdev,
                  stdev / mean if mean > 0 else 0.0, tuple(times), reruns, noisy)


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, *,
             setup: Optional[Callable[[], Any]] = None, flush: bool = True,
             flush_bytes: int = 256 << 20, cv_threshold: float = 0.05, max_reruns: int = 2,
             timer: Any = None, device: Optional[Device] = None, stream: Any = None,
             flusher: Optional[L2Flusher] = None) -> Timing:
    """Times ``fn`` (which launches work on ``stream``), Triton-style: five
    runs estimate its time, then ``warmup`` ms of untimed runs and ``rep`` ms
    of timed ones, each after ``setup()`` (untimed: reset in-place outputs
    here) and a write over ``flush_bytes`` bytes (L2 flush), each between two
    events. A round whose coefficient of variation exceeds ``cv_threshold``
    is measured again, up to ``max_reruns`` times; the least noisy round is
    kept. ``timer`` (default: EventTimer) is anything with ``record()`` and
    ``elapsed_ms(a, b)``: tests inject one and need no clock or GPU."""
    own_timer = timer is None
    if own_timer:
        timer = EventTimer(device, stream)
    if flush and flusher is None:
        flusher = L2Flusher(device, flush_bytes)

    def one(timed: bool) -> Optional[Tuple[Any, Any]]:
        if setup is not None:
            setup()
        if flush and flusher is not None:
            flusher.flush(stream)
        if not timed:
            fn()
            return None
        a = timer.record()
        fn()
        return a, timer.record()

    try:
        marks = [one(True) for _ in range(5)]
        estimate = statistics.median(timer.elapsed_ms(*m) for m in marks)
        n_warmup = max(1, int(warmup / estimate)) if estimate > 0 else 1
        n_repeat = max(1, int(rep / estimate)) if estimate > 0 else 1
        for _ in range(n_warmup):
            one(False)
        best: Optional[Timing] = None
        for round_ in range(max_reruns + 1):
            marks = [one(True) for _ in range(n_repeat)]
            result = _summary([timer.elapsed_ms(*m) for m in marks], round_, False)
            if best is None or result.cv < best.cv:
                best = result
            if result.cv <= cv_threshold:
                return Timing(**{**best.__dict__, "reruns": round_})
            if hasattr(timer, "release") and own_timer:
                timer.release()
        assert best is not None
        return Timing(**{**best.__dict__, "reruns": max_reruns, "noisy": True})
    finally:
        if own_timer:
            timer.release()
