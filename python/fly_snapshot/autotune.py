"""Autotuning a config space on the caller's own tensors, in the spirit of
Triton's ``triton.autotune`` and FlyDSL's autotune: kernel configs (each its
own MLIR module, e.g. one per tile size) x backend hint sets, compiled in one
sweep whose variants are timed as they arrive, each checked against a
reference before it may win; the winner is kept on disk per (kernel, user
key, chip, toolchain, fly version) and reused by later processes while its
object is unchanged.

    tuner = autotune("scale", configs=[{"BLOCK": 128}, {"BLOCK": 256}],
                     source=lambda meta: make_mlir(meta["BLOCK"]),
                     hint_sets={"maxnreg": [None, 32, 64]},
                     launch=lambda k, meta, x, y: k.launch(
                         grid=(cdiv(x.numel(), meta["BLOCK"]),), block=(meta["BLOCK"],),
                         args=[memref(x), memref(y)]),
                     key=lambda x, y: (tuple(x.shape), str(x.dtype)),
                     outputs=[1], reference=lambda x, y: 2 * x + 1)
    tuner(x, y)          # tunes once per key, then launches the winner

A variant is timed only if it compiled, is not a copy of an already timed
object, passed ``prune`` (which sees the register / occupancy report) and
computed the reference's outputs within ``rtol`` / ``atol``. Hint sets that
change numerics (``fast_fp_math``, ``unsafe_fp_math``) are neither compiled
nor ranked unless ``allow_numerics_change=True``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence,
                    Tuple, Union)

from . import _hints, runtime
from .compiler import Compiler, HintSet, HintValue, Variant
from .errors import CompileError, FlyError, InvalidInputError

#: Hints whose true value lets the backend change floating-point results.
NUMERICS_HINTS = ("fast_fp_math", "unsafe_fp_math")

Meta = Dict[str, Any]


def changes_numerics(hints: Mapping[str, HintValue]) -> Optional[str]:
    """``name=value`` of the first hint that changes numerics, else None."""
    for key, value in hints.items():
        name = _hints.split_hint_name(key)
        if name and name[0] in NUMERICS_HINTS and value not in (0, False, "0", "false"):
            return "%s=%s" % (key, value)
    return None


def hint_space(spec: Union[None, Mapping[str, Any], Sequence[Mapping[str, Any]]]
               ) -> List[HintSet]:
    """Hint sets from a dict of lists (the cartesian product; a None value
    leaves the hint unset) or a list of such dicts (concatenated); repeats
    dropped, order kept. None is the backend's defaults only."""
    if spec is None:
        return [{}]
    parts = [spec] if isinstance(spec, Mapping) else list(spec)
    out: List[HintSet] = []
    seen = set()
    for part in parts:
        if not isinstance(part, Mapping):
            raise InvalidInputError("a hint space is a dict of lists or a list of dicts, "
                                    "got %r" % (part,))
        names = list(part)
        choices = [v if isinstance(v, (list, tuple)) else [v] for v in part.values()]
        for values in itertools.product(*choices):
            hints = {n: v for n, v in zip(names, values) if v is not None}
            marker = json.dumps(hints, sort_keys=True)
            if marker not in seen:
                seen.add(marker)
                out.append(hints)
    return out or [{}]


@dataclass(frozen=True)
class KernelConfig:
    """One kernel variant: its name, the meta-parameters the launch sees and
    the MLIR it compiles from."""

    name: str
    meta: Meta
    source: Union[str, bytes] = field(repr=False)


def _config_name(meta: Mapping[str, Any]) -> str:
    return ",".join("%s=%s" % kv for kv in meta.items()) or "default"


def kernel_configs(configs: Union[Mapping[str, Union[str, bytes]], Sequence[Any]],
                   source: Optional[Callable[[Meta], Union[str, bytes]]] = None
                   ) -> List[KernelConfig]:
    """KernelConfigs from a ``{name: mlir}`` mapping, a list of
    KernelConfig, or a list of meta dicts with ``source(meta) -> mlir``."""
    if isinstance(configs, Mapping):
        return [KernelConfig(str(n), {}, s) for n, s in configs.items()]
    out = []
    for c in configs:
        if isinstance(c, KernelConfig):
            out.append(c)
        elif isinstance(c, Mapping):
            if source is None:
                raise InvalidInputError("meta-parameter configs need source=lambda meta: mlir")
            out.append(KernelConfig(_config_name(c), dict(c), source(dict(c))))
        else:
            raise InvalidInputError("a config is a KernelConfig or a dict, got %r" % (c,))
    names = [c.name for c in out]
    if len(set(names)) != len(names) or not out:
        raise InvalidInputError("kernel config names must be unique and non-empty: %s" % names)
    return out


def _spills(v: Variant) -> bool:
    return any((k.spills or 0) > 0 or (k.scratch or 0) > 0 for k in v.kernels)


def static_rank(variants: Sequence[Variant], allow_numerics_change: bool = False
                ) -> List[Variant]:
    """The ranking without a GPU, from the backend's report: compiled
    variants, non-spilling first, then occupancy (higher), registers
    (fewer). A hint set that changes numerics is left out unless
    ``allow_numerics_change``."""
    kept = [v for v in variants if v.ok and (allow_numerics_change
                                             or not changes_numerics(v.hints))]

    def order(v: Variant) -> Tuple[Any, ...]:
        occupancy = min((k.occupancy or 0) for k in v.kernels) if v.kernels else 0
        registers = max((k.registers or 0) for k in v.kernels) if v.kernels else 0
        return (_spills(v), -occupancy, registers)

    return sorted(kept, key=order)


@dataclass
class Candidate:
    """One (kernel config, hint set) and what became of it."""

    kernel: str
    meta: Meta
    hints: HintSet
    #: ``timed``, ``failed`` (compile), ``pruned``, ``duplicate``,
    #: ``wrong`` (outputs differ), ``launch-failed``, ``numerics`` (not
    #: compiled: changes numerics), ``reference`` (the default variant the
    #: others are checked against, timed too), ``cached``.
    status: str = "pending"
    reason: str = ""
    variant: Optional[Variant] = field(default=None, repr=False)
    object_sha256: str = ""
    timing: Optional[runtime.Timing] = None
    #: Seconds after tune() started (its clock) that the compile came in /
    #: the timing ended.
    compiled_s: Optional[float] = None
    timed_s: Optional[float] = None

    @property
    def median_ms(self) -> Optional[float]:
        return self.timing.median if self.timing else None

    def to_json(self) -> Dict[str, Any]:
        v = self.variant
        return {"kernel": self.kernel, "meta": self.meta, "hints": self.hints,
                "status": self.status, "reason": self.reason,
                "object_sha256": self.object_sha256,
                "registers": [k.registers for k in v.kernels] if v else None,
                "timing": self.timing.to_json() if self.timing else None,
                "compiled_s": self.compiled_s, "timed_s": self.timed_s}


@dataclass
class TuneResult:
    name: str
    key: Any
    winner: Optional[Candidate]
    candidates: List[Candidate]
    #: The winner came from the on-disk cache (object unchanged).
    from_cache: bool
    #: Why a cache entry was not used ("" if none or used).
    cache_note: str
    first_timed_s: Optional[float]
    total_s: float

    def by_status(self, status: str) -> List[Candidate]:
        return [c for c in self.candidates if c.status == status]

    def to_json(self) -> Dict[str, Any]:
        return {"name": self.name, "key": repr(self.key), "from_cache": self.from_cache,
                "cache_note": self.cache_note,
                "winner": self.winner.to_json() if self.winner else None,
                "first_timed_s": self.first_timed_s, "total_s": self.total_s,
                "candidates": [c.to_json() for c in self.candidates]}


def _sha256(v: Variant) -> str:
    h = hashlib.sha256()
    for o in v.objects:
        h.update(o.data)
    return h.hexdigest()


def stream_variants(compiler: Compiler, kernels: Mapping[str, Union[str, bytes]],
                    hint_sets: Sequence[HintSet], *, target: str,
                    pipeline: Optional[str] = None, variant_timeout: Optional[float] = None,
                    time_budget: Optional[float] = None
                    ) -> Iterator[Tuple[str, Union[Variant, CompileError]]]:
    """(kernel name, Variant) as the compiler finishes them: one
    ``Compiler.sweep`` over every kernel where the library has it, else one
    ``compile`` per kernel (a kernel whose compile fails as a whole yields
    its CompileError once)."""
    sweep = getattr(compiler, "sweep", None)
    if sweep is not None:
        options: Dict[str, Any] = {}
        if variant_timeout is not None:
            options["variant_timeout"] = variant_timeout
        if time_budget is not None:
            options["time_budget"] = time_budget
        try:
            for v in sweep(dict(kernels), hint_sets=list(hint_sets), target=target,
                           pipeline=pipeline, **options):
                yield v.kernel, v
        except CompileError as e:
            # After every variant that came: the kernels that failed whole.
            for name in getattr(e, "kernels", None) or list(kernels):
                yield name, e
        return
    for name, source in kernels.items():
        try:
            result = compiler.compile(source, pipeline=pipeline, target=target,
                                      hint_sets=list(hint_sets))
        except CompileError as e:
            yield name, e
            continue
        with result:
            for v in result:
                yield name, v


def _default_key(args: Sequence[Any]) -> Tuple[Any, ...]:
    key = []
    for a in args:
        try:
            v = runtime.view(a)
            key.append((v.shape, v.typestr))
        except InvalidInputError:
            key.append(type(a).__name__)
    return tuple(key)


def default_cache_dir() -> Path:
    base = os.environ.get("FLY_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "fly-snapshot")
    return Path(base) / "autotune"


class _Saved:
    """Device copies of some arguments, to put them back."""

    def __init__(self, device: runtime.Device, args: Sequence[Any], indices: Sequence[int]):
        self.device = device
        self.copies = []
        for i in indices:
            v = runtime.view(args[i])
            copy = device.alloc(max(v.span_bytes, 1))
            device.copy_on_device(copy, v.data, v.span_bytes)
            self.copies.append((v, copy))

    def restore(self) -> None:
        for v, copy in self.copies:
            self.device.copy_on_device(v.data, copy, v.span_bytes)

    def free(self) -> None:
        for _, copy in self.copies:
            self.device.free(copy)
        self.copies = []


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def _values(obj: Any, device: runtime.Device) -> Any:
    """A copy of a tensor's values to compare: a torch tensor stays one."""
    if _is_torch(obj):
        return obj.detach().clone()
    return runtime.host_values(obj, device)


def _compare(got: Any, want: Any, rtol: float, atol: float) -> Optional[str]:
    if _is_torch(got) or _is_torch(want):
        import torch
        g = got if _is_torch(got) else torch.tensor(got)
        w = (want if _is_torch(want) else torch.tensor(want)).to(g.device, g.dtype)
        g, w = g.reshape(-1), w.reshape(-1)
        if g.numel() != w.numel():
            return "%d elements, the reference has %d" % (g.numel(), w.numel())
        close = torch.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        bad = int((~close).sum())
        if not bad:
            return None
        i = int((~close).nonzero()[0])
        return "%d of %d elements differ (max |diff| %g; first [%d]: %r, expected %r)" % (
            bad, g.numel(), float((g - w).abs().nan_to_num(float("inf")).max()), i,
            float(g[i]), float(w[i]))
    if len(got) != len(want):
        return "%d elements, the reference has %d" % (len(got), len(want))
    bad, worst, first = 0, 0.0, None
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = float(g), float(w)
        ok = (math.isnan(g) and math.isnan(w)) or abs(g - w) <= atol + rtol * abs(w)
        if not ok:
            bad += 1
            worst = max(worst, abs(g - w)) if not math.isnan(g - w) else math.inf
            if first is None:
                first = "[%d]: %r, expected %r" % (i, g, w)
    if not bad:
        return None
    return "%d of %d elements differ (max |diff| %g; first %s)" % (bad, len(got), worst, first)


class Autotuner:
    """See the module's docstring. ``launch(kernel, meta, *args)`` launches
    a loaded runtime.Kernel the way the kernel config wants (grid, block,
    argument packing); ``outputs`` are the indices of the arguments it
    writes, compared against ``reference(*args)`` (returning their expected
    values, in order) or, without one, against the default variant."""

    def __init__(self, name: str, configs: Union[Mapping[str, Union[str, bytes]], Sequence[Any]],
                 *, launch: Callable[..., Any],
                 source: Optional[Callable[[Meta], Union[str, bytes]]] = None,
                 hint_sets: Any = None, target: str = "nvvm:sm_90",
                 pipeline: Optional[str] = None,
                 function: Union[None, str, Callable[[Meta], str]] = None,
                 key: Optional[Callable[..., Any]] = None,
                 prune: Optional[Callable[[Variant, Meta], Union[bool, str]]] = None,
                 outputs: Sequence[int] = (), reference: Optional[Callable[..., Any]] = None,
                 rtol: float = 1e-5, atol: float = 1e-6,
                 reset_to_zero: Sequence[int] = (), restore_value: Sequence[int] = (),
                 warmup: float = 25, rep: float = 100,
                 allow_numerics_change: bool = False,
                 compiler: Optional[Compiler] = None, jobs: int = 0,
                 cache_dir: Union[None, str, os.PathLike] = None, use_cache: bool = True,
                 toolchain: Optional[str] = None, device: Optional[runtime.Device] = None,
                 bench: Callable[..., runtime.Timing] = runtime.do_bench,
                 flush_bytes: int = 256 << 20, clock: Callable[[], float] = time.monotonic,
                 variant_timeout: Optional[float] = None,
                 time_budget: Optional[float] = None) -> None:
        self.name = name
        self.configs = kernel_configs(configs, source)
        all_hints = hint_space(hint_sets)
        self.numerics_skipped = [] if allow_numerics_change else [
            h for h in all_hints if changes_numerics(h)]
        self.hint_sets = [h for h in all_hints if h not in self.numerics_skipped]
        if not self.hint_sets:
            raise InvalidInputError("every hint set changes numerics; pass "
                                    "allow_numerics_change=True to tune them")
        self.launch, self.target, self.pipeline = launch, target, pipeline
        self.function, self.prune, self.reference = function, prune, reference
        self.key = key
        self.outputs = list(outputs) or sorted(set(reset_to_zero) | set(restore_value))
        self.rtol, self.atol = rtol, atol
        self.reset_to_zero, self.restore_value = list(reset_to_zero), list(restore_value)
        self.warmup, self.rep = warmup, rep
        self._compiler, self._own_compiler, self.jobs = compiler, compiler is None, jobs
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.use_cache = use_cache
        self._toolchain, self._device = toolchain, device
        self.bench, self.flush_bytes, self.clock = bench, flush_bytes, clock
        self.variant_timeout, self.time_budget = variant_timeout, time_budget
        self._winners: Dict[Any, Tuple[Candidate, runtime.Kernel]] = {}
        self.last_result: Optional[TuneResult] = None

    # -- parts --------------------------------------------------------------
    @property
    def device(self) -> runtime.Device:
        if self._device is None:
            self._device = runtime.Device.default()
        return self._device

    @property
    def compiler(self) -> Compiler:
        if self._compiler is None:
            self._compiler = Compiler(jobs=self.jobs)
        return self._compiler

    def toolchain(self) -> str:
        """What else decides the objects: the target and the full pipeline
        (the preset names its toolkit)."""
        if self._toolchain is None:
            pipeline = self.pipeline or self.compiler.preset_pipeline(self.target)
            self._toolchain = "%s|%s" % (self.target, pipeline)
        return self._toolchain

    def _cache_file(self, key: Any) -> Path:
        from . import __version__
        identity = json.dumps([self.name, repr(key), self.device.name, self.device.arch,
                               self.toolchain(), __version__, Compiler.version()])
        return self.cache_dir / (hashlib.sha256(identity.encode()).hexdigest()[:32] + ".json")

    def _function_name(self, meta: Meta, v: Variant) -> str:
        if callable(self.function):
            return self.function(meta)
        if self.function:
            return self.function
        names = sorted({k.name for k in v.kernels})
        if len(names) != 1:
            raise FlyError("variant %s has kernels %s: pass function= to say which one "
                           "to launch" % (v.id, names or "none"))
        return names[0]

    def _load(self, c: Candidate) -> runtime.Kernel:
        v = c.variant
        assert v is not None
        objects = [o for o in v.objects if o.chip == self.device.arch] or v.objects
        module = runtime.Module.load(objects[0].data, self.device)
        return module.kernel(self._function_name(c.meta, v))

    def _key_of(self, args: Sequence[Any]) -> Any:
        return self.key(*args) if self.key else _default_key(args)

    # -- tuning -------------------------------------------------------------
    def tune(self, *args: Any,
             variants: Optional[Iterable[Tuple[str, Union[Variant, CompileError]]]] = None
             ) -> TuneResult:
        """Tunes for ``args`` (or reuses the cached winner) and returns what
        happened to every candidate. ``variants``: (kernel config name,
        Variant) pairs compiled elsewhere (read_out_dir, another process) to
        time instead of compiling here; the winner cache is then not used."""
        start = self.clock()
        key = self._key_of(args)
        note = ""
        cache_file = self._cache_file(key) if self.use_cache and variants is None else None
        if cache_file is not None and cache_file.is_file():
            reused, note = self._try_cached(cache_file, key, args, start)
            if reused is not None:
                self.last_result = reused
                return reused

        configs = {c.name: c for c in self.configs}
        candidates: List[Candidate] = [
            Candidate(c.name, c.meta, h, status="numerics",
                      reason="changes numerics (%s); allow_numerics_change=True to tune it"
                      % changes_numerics(h))
            for c in self.configs for h in self.numerics_skipped]
        first_timed: Optional[float] = None
        # Per kernel config: another config's meta may launch the same object
        # differently.
        seen_objects: Dict[Tuple[str, str], Candidate] = {}
        saved = _Saved(self.device, args, sorted(set(self.outputs) | set(self.restore_value)))
        flusher = runtime.L2Flusher(self.device, self.flush_bytes)
        expected: Optional[List[List[float]]] = None
        if self.reference is not None:
            expected = self._reference_values(args)
        # Expected values per output: a torch tensor (compared by torch) or a
        # list of numbers.
        default_hints = {} if {} in self.hint_sets else self.hint_sets[0]
        waiting: List[Tuple[Candidate, runtime.Kernel]] = []

        def setup() -> None:
            for i in self.reset_to_zero:
                v = runtime.view(args[i])
                self.device.memset(v.data, 0, v.span_bytes)

        def run_once(kernel: runtime.Kernel, meta: Meta) -> None:
            saved.restore()
            setup()
            self.launch(kernel, meta, *args)
            self.device.synchronize()

        def time_it(c: Candidate, kernel: runtime.Kernel) -> None:
            nonlocal first_timed
            try:
                c.timing = self.bench(lambda: self.launch(kernel, c.meta, *args),
                                      self.warmup, self.rep, setup=setup, device=self.device,
                                      flusher=flusher)
            except FlyError as e:
                c.status, c.reason = "launch-failed", str(e)
                return
            finally:
                saved.restore()
            c.timed_s = self.clock() - start
            if first_timed is None:
                first_timed = c.timed_s

        def check(c: Candidate, kernel: runtime.Kernel) -> bool:
            try:
                run_once(kernel, c.meta)
                got = [_values(args[i], self.device) for i in self.outputs]
            except FlyError as e:
                c.status, c.reason = "launch-failed", str(e)
                return False
            assert expected is not None
            for i, g, w in zip(self.outputs, got, expected):
                diff = _compare(g, w, self.rtol, self.atol)
                if diff:
                    c.status, c.reason = "wrong", "argument %d: %s" % (i, diff)
                    return False
            return True

        try:
            for name, item in (self._stream(configs) if variants is None else variants):
                now = self.clock() - start
                if isinstance(item, CompileError):
                    for h in self.hint_sets:
                        candidates.append(Candidate(name, configs[name].meta, h, "failed",
                                                    str(item), compiled_s=now))
                    continue
                c = Candidate(name, configs[name].meta, dict(item.hints), variant=item,
                              compiled_s=now)
                candidates.append(c)
                if not item.ok:
                    c.status, c.reason = "failed", item.error
                    continue
                c.object_sha256 = _sha256(item)
                if (name, c.object_sha256) in seen_objects:
                    other = seen_objects[(name, c.object_sha256)]
                    c.status = "duplicate"
                    c.reason = "same object as %s %s" % (other.kernel, other.hints)
                    continue
                seen_objects[(name, c.object_sha256)] = c
                if self.prune is not None:
                    why = self.prune(item, c.meta)
                    if why:
                        c.status = "pruned"
                        c.reason = why if isinstance(why, str) else "prune() dropped it"
                        continue
                try:
                    kernel = self._load(c)
                except FlyError as e:
                    c.status, c.reason = "launch-failed", str(e)
                    continue
                if expected is None and not self.outputs:
                    c.status, c.reason = "timed", "unchecked: no outputs= to compare"
                    time_it(c, kernel)
                    continue
                if expected is None:
                    is_default = name == self.configs[0].name and c.hints == default_hints
                    if not is_default:
                        waiting.append((c, kernel))
                        continue
                    try:
                        run_once(kernel, c.meta)
                        expected = [_values(args[i], self.device) for i in self.outputs]
                    except FlyError as e:
                        c.status, c.reason = "launch-failed", str(e)
                        raise FlyError("the default variant %s %s, the reference, failed: %s"
                                       % (name, c.hints, e)) from e
                    c.status, c.reason = "reference", "the outputs the others must match"
                    time_it(c, kernel)
                    for w, wk in waiting:
                        if check(w, wk):
                            w.status = "timed"
                            time_it(w, wk)
                    waiting.clear()
                    continue
                if check(c, kernel):
                    c.status = "timed"
                    time_it(c, kernel)
            for w, _ in waiting:
                w.status, w.reason = "unchecked", "the default variant (the reference) " \
                                                  "did not compile"
        finally:
            saved.restore()
            saved.free()

        timed = [c for c in candidates if c.status in ("timed", "reference") and c.timing]
        # Ties go to the earlier config and hint set, whatever order the
        # compiler finished them in.
        order = {(c.name, json.dumps(h, sort_keys=True)): i for i, (c, h) in
                 enumerate(itertools.product(self.configs, self.hint_sets))}
        winner = min(timed, key=lambda c: (c.timing.median, order.get(
            (c.kernel, json.dumps(c.hints, sort_keys=True)), len(order)))) if timed else None
        result = TuneResult(self.name, key, winner, candidates, False, note, first_timed,
                            self.clock() - start)
        if winner is not None:
            self._winners[key] = (winner, self._load(winner))
            if cache_file is not None:
                self._store(cache_file, key, winner)
        self.last_result = result
        return result

    def _stream(self, configs: Mapping[str, KernelConfig]
                ) -> Iterator[Tuple[str, Union[Variant, CompileError]]]:
        """The compiler's results from a thread, so timing here overlaps the
        compile there (ctypes lets go of the GIL inside the library)."""
        items: "queue.Queue[Any]" = queue.Queue()
        done = object()

        def produce() -> None:
            try:
                for item in stream_variants(
                        self.compiler, {n: c.source for n, c in configs.items()},
                        self.hint_sets, target=self.target, pipeline=self.pipeline,
                        variant_timeout=self.variant_timeout, time_budget=self.time_budget):
                    items.put(item)
            except BaseException as e:  # handed to the consumer
                items.put(e)
            items.put(done)

        thread = threading.Thread(target=produce, name="fly-autotune-compile", daemon=True)
        thread.start()
        while True:
            item = items.get()
            if item is done:
                break
            if isinstance(item, BaseException):
                raise item
            yield item
        thread.join()

    def _reference_values(self, args: Sequence[Any]) -> List[List[float]]:
        assert self.reference is not None
        got = self.reference(*args)
        values = list(got) if isinstance(got, (tuple, list)) and self.outputs and \
            len(self.outputs) > 1 else [got]
        if len(values) != len(self.outputs):
            raise InvalidInputError("reference() returned %d values for %d outputs"
                                    % (len(values), len(self.outputs)))
        return [[float(x) for x in v] if isinstance(v, (list, tuple)) else _values(v, self.device)
                for v in values]

    def _store(self, path: Path, key: Any, winner: Candidate) -> None:
        entry = {"name": self.name, "key": repr(key), "chip": self.device.arch,
                 "device": self.device.name, "toolchain": self.toolchain(),
                 "winner": {"kernel": winner.kernel, "hints": winner.hints,
                            "object_sha256": winner.object_sha256,
                            "median_ms": winner.median_ms}}
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp%d" % os.getpid())
        tmp.write_text(json.dumps(entry, indent=1))
        os.replace(tmp, path)

    def _try_cached(self, path: Path, key: Any, args: Sequence[Any], start: float
                    ) -> Tuple[Optional[TuneResult], str]:
        """Recompiles the stored winner alone (the compile cache makes that
        cheap) and reuses it if its object is the one stored."""
        try:
            entry = json.loads(path.read_text())
            stored = entry["winner"]
            config = next(c for c in self.configs if c.name == stored["kernel"])
        except (OSError, ValueError, KeyError, StopIteration) as e:
            return None, "cache entry %s unusable: %s" % (path, e)
        hints = stored["hints"]
        variants = list(stream_variants(self.compiler, {config.name: config.source}, [hints],
                                        target=self.target, pipeline=self.pipeline))
        v = variants[0][1] if variants else None
        if not isinstance(v, Variant) or not v.ok:
            return None, "cache entry's winner no longer compiles"
        sha = _sha256(v)
        if sha != stored["object_sha256"]:
            return None, "cache entry invalidated: the winner's object changed"
        c = Candidate(config.name, config.meta, dict(v.hints), "cached",
                      "winner of an earlier tune (%s)" % path.name, v, sha,
                      compiled_s=self.clock() - start)
        self._winners[key] = (c, self._load(c))
        return TuneResult(self.name, key, c, [c], True, "", None, self.clock() - start), ""

    def __call__(self, *args: Any) -> Candidate:
        """Launches the winner for these arguments' key, tuning first if
        this key has none yet. Returns the winner."""
        key = self._key_of(args)
        if key not in self._winners:
            result = self.tune(*args)
            if result.winner is None:
                raise FlyError("autotune %s: no candidate passed (%s)" % (self.name, ", ".join(
                    "%s %s: %s %s" % (c.kernel, c.hints, c.status, c.reason)
                    for c in result.candidates)))
        winner, kernel = self._winners[key]
        self.launch(kernel, winner.meta, *args)
        return winner

    def close(self) -> None:
        if self._own_compiler and self._compiler is not None:
            self._compiler.close()
            self._compiler = None


def autotune(name: str, configs: Union[Mapping[str, Union[str, bytes]], Sequence[Any]],
             **options: Any) -> Autotuner:
    """An Autotuner (see there for the options)."""
    return Autotuner(name, configs, **options)
