"""The compiler: one module, one pipeline, N hint sets -> N variants."""

from __future__ import annotations

import ctypes
import json
import os
import queue
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import (Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence,
                    Tuple, Union)

from . import _capi, _files, _hints
from .errors import CompileError, FlyError, InvalidInputError

HintValue = Union[int, bool, str]
HintSet = Dict[str, HintValue]


def _typed_hints(hint_set: Mapping[str, Union[int, str]]) -> HintSet:
    """The manifest's hint values (typed since schema_version 1: JSON numbers
    for integer and boolean hints, strings otherwise) as Python values, by
    the type the hint registry gives each name (selectors such as
    ``O[gfx942]`` ignored)."""
    typed: HintSet = {}
    for key, value in hint_set.items():
        kind = _hints.hint_type(key)
        if kind == "int":
            typed[key] = int(value)
        elif kind == "bool":
            typed[key] = int(value) == 1
        else:
            typed[key] = value
    return typed


@dataclass(frozen=True)
class Kernel:
    """Resource usage of one kernel of one object, as the backend reported
    it: ROCDL from the object's kernel table, NVVM from the cubin."""

    name: str
    #: VGPRs on ROCDL (VGPRs and AGPRs on chips that share one file), registers
    #: per thread on NVVM.
    registers: Optional[int]
    sgprs: Optional[int]
    agprs: Optional[int]
    #: VGPR + SGPR spills (ROCDL); None where the backend does not say.
    spills: Optional[int]
    #: Scratch bytes per work item (ROCDL private segment, NVVM stack frame).
    scratch: Optional[int]
    #: Static LDS / shared memory bytes.
    lds: Optional[int]
    #: What the register counts allow (``occupancy_unit``: waves/SIMD on
    #: AMDGPU, blocks/SM on NVIDIA with the kernel's block size); None where
    #: unknown.
    occupancy: Optional[int]
    occupancy_unit: Optional[str]
    #: Every metadata field as the library reported it.
    metadata: Dict[str, Any] = field(repr=False)

    @classmethod
    def _from_json(cls, entry: Mapping[str, Any]) -> "Kernel":
        """The library's normalised ``resources`` of a manifest kernel; read,
        never derived again from the metadata."""
        res = entry.get("resources") or {}
        registers = res.get("vgpr")
        return cls(
            name=entry.get("name", ""),
            registers=res.get("registers") if registers is None else registers,
            sgprs=res.get("sgpr"),
            agprs=res.get("agpr"),
            spills=res.get("spills"),
            scratch=res.get("scratch"),
            lds=res.get("shared"),
            occupancy=res.get("occupancy"),
            occupancy_unit=res.get("occupancy_unit"),
            metadata=dict(entry.get("metadata", {})),
        )


@dataclass(frozen=True)
class Object:
    """One #gpu.object of a variant: the bytes the backend produced for one
    gpu.module and target."""

    gpu_module: str
    #: The printed target attribute, e.g. ``#rocdl.target<chip = "gfx942">``.
    target: str
    chip: str
    #: ``bin``, ``fatbin``, ``isa`` or ``offload``.
    format: str
    data: bytes = field(repr=False)
    kernels: List[Kernel]


@dataclass(frozen=True)
class Variant:
    """The outcome of one hint set."""

    index: int
    #: ``v<index>_<label>``, also the file stem in an out-dir.
    id: str
    hints: HintSet
    #: ``"ok"`` or ``"failed"``.
    status: str
    #: Why it failed (the backend's message); "" when ok.
    error: str
    objects: List[Object]
    #: Objects identical to an earlier variant's: this hint set had no effect.
    duplicate_of: Optional[int]
    from_cache: bool
    replay_ms: Optional[float]
    #: The manifest entry as the library wrote it.
    manifest: Dict[str, Any] = field(repr=False)
    #: The kernel it was compiled from (Compiler.sweep's name for it; "" from
    #: compile).
    kernel: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def kernels(self) -> List[Kernel]:
        """Every kernel of every object, in order."""
        return [k for o in self.objects for k in o.kernels]


class _OwnedHandle:
    """A library object this Python object owns: released by close(), at the
    end of a ``with`` block or when collected."""

    _handle: Any = None

    def _destroy(self, handle: Any) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Releases the library's object (idempotent)."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            self._destroy(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class Result(_OwnedHandle):
    """The variants of one compile, in hint-set order. Holds the library's
    result until closed, so that ``write`` can use the library's writer."""

    def __init__(self, handle: _capi._FlyResult, variants: List[Variant],
                 prefix_from_cache: bool, diagnostics: str) -> None:
        self._handle: Optional[_capi._FlyResult] = handle
        self.variants = variants
        #: Whether the pipeline before the binary pass came from the cache.
        self.prefix_from_cache = prefix_from_cache
        #: Warnings the compile produced, one per line ("" if none).
        self.diagnostics = diagnostics

    def __len__(self) -> int:
        return len(self.variants)

    def __iter__(self) -> Iterator[Variant]:
        return iter(self.variants)

    def __getitem__(self, i: int) -> Variant:
        return self.variants[i]

    @property
    def failed(self) -> List[Variant]:
        return [v for v in self.variants if not v.ok]

    def write(self, out_dir: Union[str, "os.PathLike[str]"]) -> Path:
        """Writes the variants the way ``fly-tune --out-dir`` does (the same
        writer in the library): per successful variant ``<id>.mlir`` and
        its raw objects, then ``manifest.json``. Returns the manifest path."""
        if self._handle is None:
            raise FlyError("this result was closed")
        lib = _capi.lib()
        if not lib.flyResultWrite(self._handle, os.fsencode(out_dir)):
            raise FlyError("cannot write %s: %s" % (out_dir, _capi.last_error()))
        return Path(out_dir) / "manifest.json"

    def _destroy(self, handle: Any) -> None:
        """Releases the library's copy of the result (variants stay)."""
        _capi.lib().flyResultDestroy(handle)


def _variant_from_entry(entry: Mapping[str, Any], data: Sequence[bytes],
                        index: int) -> Variant:
    """A Variant from its manifest entry and its objects' bytes, in order."""
    objects = []
    for obj, blob in zip(entry.get("objects", []), data):
        objects.append(Object(
            gpu_module=obj.get("gpu_module", ""),
            target=obj.get("target", ""),
            chip=obj.get("chip", ""),
            format=obj.get("format", ""),
            data=blob,
            kernels=[Kernel._from_json(k) for k in obj.get("kernels", [])],
        ))
    return Variant(
        index=entry.get("index", index),
        id=entry.get("id", ""),
        hints=_typed_hints(entry.get("hint_set", {})),
        status=entry.get("status", "failed"),
        error=entry.get("error", ""),
        objects=objects,
        duplicate_of=entry.get("duplicate_of"),
        from_cache=bool(entry.get("from_cache", False)),
        replay_ms=entry.get("replay_ms"),
        manifest=dict(entry),
        kernel=entry.get("kernel", ""),
    )


def read_out_dir(out_dir: Union[str, "os.PathLike[str]"]) -> List[Variant]:
    """The variants an out-dir holds (fly-tune, fly-opt, Result.write), read
    back from its manifest.json and object files. Needs no library, so a
    machine with a GPU and no LLVM can rank and time a sweep made elsewhere.

    :raises FlyError: no or a malformed manifest, a missing object file.
    """
    root = Path(out_dir)
    manifest_path = root / "manifest.json"
    try:
        text = _files.read_regular_file(manifest_path, _MAX_MANIFEST_BYTES).decode()
    except (FlyError, UnicodeDecodeError) as e:
        raise FlyError("%s is not a fly out-dir: %s" % (root, e)) from e
    manifest = _files.loads_bounded(text, str(manifest_path))
    entries = manifest.get("variants") if isinstance(manifest, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise FlyError("%s is not a fly out-dir: 'variants' is not a list of objects"
                       % manifest_path)
    variants = []
    for i, entry in enumerate(entries):
        # files: <id>.mlir, then one object file per object, in order.
        files = entry.get("files", [])
        if not isinstance(files, list):
            raise FlyError("%s: variants[%d].files is not a list" % (manifest_path, i))
        for f in files:
            # Only names inside the out-dir: a manifest names no other file.
            if not _files.is_plain_file_name(f):
                raise FlyError("%s: variants[%d].files: %r is not a plain file name "
                               "(no '/', '.' or '..')" % (manifest_path, i, f))
        data = [_files.read_regular_file(root / f, _MAX_OBJECT_BYTES)
                for f in files if not f.endswith(".mlir")]
        variants.append(_variant_from_entry(entry, data, i))
    return variants


# As fly-run reads an out-dir (lib/Runtime/SweepManifest.cpp).
_MAX_MANIFEST_BYTES = 256 << 20
_MAX_OBJECT_BYTES = 1 << 30


HintSets = Union[Sequence[Mapping[str, Any]], Mapping[str, Any]]


def _check_hint_value(where: str, key: Any, value: Any) -> None:
    if not isinstance(key, str) or not isinstance(value, (int, bool, str)):
        raise InvalidInputError(
            "%s: %r = %r: names are strings, values int, bool or str (or a list "
            "of them: a product)" % (where, key, value))
    # bool is an int subclass: True would compile as maxnreg=1.
    if isinstance(value, bool) and _hints.hint_type(key) == "int":
        raise InvalidInputError(
            "%s: %r = %r: %s takes an int, not a bool" % (where, key, value, key))


def _check_hint_set(where: str, hints: Mapping[str, Any]) -> Dict[str, Any]:
    """One dict of a hint-set list: scalars, or lists (the product of them,
    which the library expands)."""
    out: Dict[str, Any] = {}
    for key, value in hints.items():
        if isinstance(value, (list, tuple)):
            for v in value:
                _check_hint_value(where, key, v)
            out[key] = list(value)
        else:
            _check_hint_value(where, key, value)
            out[key] = value
    return out


def _check_hint_sets(hint_sets: Optional[HintSets]) -> str:
    """The hint sets as the library's JSON: a list of dicts, or a dict of
    lists ``{"waves_per_eu": [1, 2], "maxnreg": [64, 128]}`` (their
    cartesian product, expanded and counted by the library, in this
    order)."""
    if hint_sets is None:
        return "[{}]"
    if isinstance(hint_sets, Mapping):
        return json.dumps(_check_hint_set("hint_sets", hint_sets))
    if isinstance(hint_sets, (str, bytes)) or not isinstance(hint_sets, Sequence):
        raise InvalidInputError("hint_sets must be a list of dicts, e.g. "
                                "[{}, {'waves_per_eu': 2}], or a dict of lists, "
                                "got %r" % (hint_sets,))
    checked = []
    for i, hints in enumerate(hint_sets):
        if not isinstance(hints, Mapping):
            raise InvalidInputError("hint set #%d must be a dict, got %r" % (i, hints))
        checked.append(_check_hint_set("hint set #%d" % i, hints))
    return json.dumps(checked or [{}])


class Compiler(_OwnedHandle):
    """A compiler: the library's MLIR context, thread pool and compile cache.

    :param jobs: variants compiled at once (0: hardware threads).
    :param cache_dir: the compile cache directory (None: ``FLY_CACHE_DIR`` or
        ``$XDG_CACHE_HOME/fly-snapshot``).
    :param cache: False disables both cache levels.
    :param executor: where variants compile: ``"process"`` (child fly-tune
        processes, so a backend that aborts, hits an LLVM fatal error or
        corrupts its heap fails only its own variants and the interpreter
        lives), ``"isolated"`` (this process, under crash recovery) or
        ``"batch"`` (this process, fastest).
    :param reuse_isa: one ISA compile for variants that share it.
    :param toolkit: the toolkit for the preset pipeline (None: found by the
        library, see ``flyGetPresetPipeline``).
    """

    def __init__(self, jobs: int = 0, cache_dir: Optional[str] = None, *,
                 cache: bool = True, executor: str = "process", reuse_isa: bool = True,
                 toolkit: Optional[str] = None) -> None:
        if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 0:
            raise InvalidInputError("jobs must be a non-negative int, got %r" % (jobs,))
        if executor not in ("process", "isolated", "batch"):
            raise InvalidInputError("executor must be 'process', 'isolated' or 'batch', "
                                    "got %r" % (executor,))
        options: Dict[str, Any] = {"jobs": jobs, "cache": bool(cache),
                                   "executor": executor, "reuse_isa": bool(reuse_isa)}
        if cache_dir is not None:
            options["cache_dir"] = os.fspath(cache_dir)
        self.toolkit = toolkit
        self._lib = _capi.lib()
        handle = self._lib.flyCompilerCreate(json.dumps(options).encode())
        if not handle.ptr:
            raise InvalidInputError(_capi.last_error())
        self._handle: Optional[_capi._FlyCompiler] = handle

    @staticmethod
    def version() -> str:
        """The library's version."""
        return _capi.lib().flyGetVersion().decode()

    def preset_pipeline(self, target: str = "rocdl:gfx942") -> str:
        """The lowering preset fly-tune uses for plain gpu-dialect input."""
        toolkit = self.toolkit.encode() if self.toolkit else None
        text = _capi.get_string(lambda callback: self._lib.flyGetPresetPipeline(
            target.encode(), toolkit, callback, None))
        if text is None:
            raise InvalidInputError(_capi.last_error())
        return text

    def compile(self, source: Union[str, bytes], *, pipeline: Optional[str] = None,
                target: str = "rocdl:gfx942",
                hint_sets: Optional[HintSets] = None) -> Result:
        """Compiles ``source`` (MLIR text or bytecode) once per hint set.

        :param pipeline: the full pass pipeline, gpu-module-to-binary
            included; None: fly-tune's preset for ``target``.
        :param target: ``rocdl:<chip>`` or ``nvvm:<sm_XX>``; part of the
            cache key.
        :param hint_sets: dicts such as ``{"waves_per_eu": 2, "maxnreg": 128}``;
            None or [] is one empty set (the backend's defaults). A dict of
            lists, ``{"waves_per_eu": [1, 2], "maxnreg": [64, 128]}``, alone
            or in the list, is the cartesian product of the lists (the
            first varies slowest).
        :raises InvalidInputError: bad arguments, before anything compiles.
        :raises CompileError: the compile as a whole failed.
        :returns: one Variant per hint set; a failing (or crashing) variant
            is reported on its own Variant.
        """
        if self._handle is None:
            raise FlyError("this compiler was closed")
        if isinstance(source, str):
            data = source.encode()
        elif isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
        else:
            raise InvalidInputError("source must be str or bytes, got %s"
                                    % type(source).__name__)
        hints_json, pipeline = self._check_call(target, pipeline, hint_sets)

        lib = self._lib
        handle = lib.flyCompilerCompile(self._handle, data, len(data), pipeline.encode(),
                                        hints_json.encode(), target.encode())
        if not handle.ptr:
            raise CompileError(_capi.last_error())
        diagnostics = (lib.flyResultGetDiagnostics(handle) or b"").decode(errors="replace")
        try:
            variants = [self._variant(handle, i) for i in
                        range(lib.flyResultGetNumVariants(handle))]
        except BaseException:
            lib.flyResultDestroy(handle)
            raise
        return Result(handle, variants, bool(lib.flyResultPrefixFromCache(handle)),
                      diagnostics)

    def _check_call(self, target: str, pipeline: Optional[str],
                    hint_sets: Optional[HintSets]) -> Tuple[str, str]:
        """The hint sets' JSON and the pipeline, checked as compile checks them."""
        if self._handle is None:
            raise FlyError("this compiler was closed")
        if not isinstance(target, str) or ":" not in target:
            raise InvalidInputError("target must be 'rocdl:<chip>' or 'nvvm:<sm_XX>', "
                                    "got %r" % (target,))
        hints_json = _check_hint_sets(hint_sets)
        # The library's own checks (hint names, values, ranges, the chip),
        # before anything compiles.
        if not self._lib.flyCheckCompileArguments(hints_json.encode(), target.encode()):
            raise InvalidInputError(_capi.last_error())
        if pipeline is None:
            pipeline = self.preset_pipeline(target)
        elif not isinstance(pipeline, str) or not pipeline.strip():
            raise InvalidInputError("pipeline must be a non-empty pass pipeline string")
        return hints_json, pipeline

    def sweep(self, kernels: Union[Mapping[str, Union[str, bytes]], Sequence[Union[str, bytes]]],
              hint_sets: Optional[HintSets] = None, *, target: str = "rocdl:gfx942",
              pipeline: Optional[str] = None, variant_timeout: Optional[float] = None,
              time_budget: Optional[float] = None) -> Iterator[Variant]:
        """Compiles several kernels under ``hint_sets`` as one sweep and yields
        each Variant the moment it is final, while the rest compile.

        :param kernels: name -> MLIR source (str or bytes), or a sequence of
            sources (named ``"0"``, ``"1"``, ...); ``Variant.kernel`` is the
            name.
        :param hint_sets: as for compile, the same for every kernel.
        :param variant_timeout: seconds one variant may compile (None: the
            compiler's).
        :param time_budget: seconds after which no new variant starts.
        :raises InvalidInputError: bad arguments, before anything compiles.
        :raises CompileError: after the variants, when a kernel failed as a
            whole (its diagnostics).

        The compile runs on a library thread; closing the iterator or the
        compiler (or an exception such as KeyboardInterrupt in the loop)
        cancels the rest: nothing more starts, what runs finishes, then the
        call returns.
        """
        if isinstance(kernels, Mapping):
            named = [(str(k), v) for k, v in kernels.items()]
        elif isinstance(kernels, Sequence) and not isinstance(kernels, (str, bytes)):
            named = [(str(i), v) for i, v in enumerate(kernels)]
        else:
            raise InvalidInputError("kernels must be a dict name -> source or a list of "
                                    "sources, got %s" % type(kernels).__name__)
        if not named:
            raise InvalidInputError("kernels is empty")
        sources = []
        for name, source in named:
            # The library reads a name up to its first NUL, and names an
            # empty one itself ("<kernel 0>").
            if not name or "\0" in name:
                raise InvalidInputError("kernel name %r must be non-empty and without NUL"
                                        % name)
            try:
                encoded = name.encode()
                data = source.encode() if isinstance(source, str) else None
            except UnicodeEncodeError as e:
                raise InvalidInputError("kernel %r: %s" % (name, e)) from e
            if isinstance(source, (bytes, bytearray, memoryview)):
                data = bytes(source)
            if not data:
                raise InvalidInputError("kernel %r: source must be non-empty str or bytes"
                                        % name)
            sources.append((encoded, data))
        options: Dict[str, Any] = {}
        for key, value in (("variant_timeout", variant_timeout),
                           ("time_budget", time_budget)):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    not 0 <= value <= 1e9:
                raise InvalidInputError("%s must be a number of seconds from 0 to 1e9, "
                                        "got %r" % (key, value))
            options[key] = value
        hints_json, pipeline = self._check_call(target, pipeline, hint_sets)
        return self._sweep(sources, pipeline, hints_json, target, json.dumps(options))

    #: Test hook: called on the library's thread with each variant's entry
    #: before it is handed over (pytest uses it to hold the compile).
    _sweep_hook: Optional[Callable[[Dict[str, Any]], None]] = None

    def _sweep(self, sources: List[Tuple[bytes, bytes]], pipeline: str, hints_json: str,
               target: str, options_json: str) -> Iterator[Variant]:
        lib = self._lib
        handed: "queue.Queue[Tuple[str, Any]]" = queue.Queue()
        cancel = threading.Event()
        hook = self._sweep_hook

        def on_variant(variant: Any, text: bytes, _user: Any) -> bool:
            try:
                if cancel.is_set():
                    return True
                entry = _files.loads_bounded(text.decode(), "sweep variant")
                data = []
                for o in range(lib.flyVariantGetNumObjects(variant)):
                    size = ctypes.c_size_t()
                    ptr = lib.flyVariantGetObject(variant, o, ctypes.byref(size))
                    data.append(ctypes.string_at(ptr, size.value) if ptr else b"")
                if hook is not None:
                    hook(entry)
                handed.put(("variant", (entry, data)))
            except BaseException as e:  # Never into the library's frames.
                handed.put(("error", e))
                cancel.set()
            return cancel.is_set()

        callback = _capi.VARIANT_CALLBACK(on_variant)
        array = (_capi._FlySweepKernel * len(sources))(
            *[_capi._FlySweepKernel(name, data, len(data)) for name, data in sources])

        def run() -> None:
            handle = lib.flyCompilerSweep(self._handle, array, len(sources), pipeline.encode(),
                                          hints_json.encode(), target.encode(),
                                          options_json.encode(), callback, None)
            # The last error is this thread's: read it here.
            handed.put(("done", (handle, None if handle.ptr else _capi.last_error())))

        thread = threading.Thread(target=run, name="fly-sweep", daemon=True)
        thread.start()
        handle = None
        error_text: Optional[str] = None
        failure: Optional[BaseException] = None
        seen = set()
        try:
            while True:
                kind, payload = handed.get()
                if kind == "variant":
                    entry, data = payload
                    seen.add(entry.get("kernel", ""))
                    yield _variant_from_entry(entry, data, entry.get("index", 0))
                elif kind == "error":
                    failure = payload
                else:
                    handle, error_text = payload
                    break
        finally:
            cancel.set()
            if handle is None:
                # Drain until the library returned: the callback and the
                # kernels' array must outlive the call.
                while True:
                    kind, payload = handed.get()
                    if kind == "done":
                        handle, error_text = payload
                        break
            thread.join()
            succeeded = bool(handle.ptr)
            if succeeded:
                diagnostics = (lib.flyResultGetDiagnostics(handle) or b"").decode(
                    errors="replace")
                lib.flyResultDestroy(handle)
            else:
                diagnostics = error_text or ""
        if failure is not None:
            raise failure
        if self._handle is None:
            # close() during the sweep cancelled it, as closing the iterator
            # does; the library destroyed the compiler once it returned.
            return
        failed = [name.decode() for name, _ in sources if name.decode() not in seen]
        if failed or not succeeded:
            error = CompileError(diagnostics)
            #: The kernels that failed as a whole (none of their variants came).
            error.kernels = failed  # type: ignore[attr-defined]
            raise error

    def compile_many(self, kernels: Union[Mapping[str, Union[str, bytes]],
                                          Sequence[Union[str, bytes]]],
                     hint_sets: Optional[HintSets] = None, *, target: str = "rocdl:gfx942",
                     pipeline: Optional[str] = None, variant_timeout: Optional[float] = None,
                     time_budget: Optional[float] = None) -> Dict[Tuple[str, int], Variant]:
        """Compiler.sweep, collected: {(kernel name, hint-set index): Variant}."""
        return {(v.kernel, v.index): v for v in self.sweep(
            kernels, hint_sets, target=target, pipeline=pipeline,
            variant_timeout=variant_timeout, time_budget=time_budget)}

    def _variant(self, handle: _capi._FlyResult, i: int) -> Variant:
        lib = self._lib
        entry = _files.loads_bounded(lib.flyResultGetVariantJSON(handle, i).decode(),
                                     "variant %d" % i)
        data = []
        for o in range(len(entry.get("objects", []))):
            size = ctypes.c_size_t()
            ptr = lib.flyResultGetObject(handle, i, o, ctypes.byref(size))
            data.append(ctypes.string_at(ptr, size.value) if ptr else b"")
        return _variant_from_entry(entry, data, i)

    def _destroy(self, handle: Any) -> None:
        """Destroys the library's compiler."""
        self._lib.flyCompilerDestroy(handle)
