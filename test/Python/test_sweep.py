"""Compiler.sweep / compile_many: several kernels x hint sets as one sweep,
variants handed over while the rest compile."""

import threading

import pytest

import fly_snapshot
from fly_snapshot import CompileError, InvalidInputError

from conftest import SRC_DIR


@pytest.fixture(scope="module")
def grid():
    return (SRC_DIR / "examples" / "tile_matmul_grid.mlir").read_text()


def test_compile_many_keys_by_kernel_and_hint_set(rocdl, tile_matmul, grid):
    variants = rocdl.compile_many({"tile": tile_matmul, "grid": grid},
                                  {"waves_per_eu": [1, 2]})
    assert sorted(variants) == [("grid", 0), ("grid", 1), ("tile", 0), ("tile", 1)]
    for (kernel, index), v in variants.items():
        assert v.kernel == kernel and v.index == index and v.ok
        assert v.hints == {"waves_per_eu": index + 1}
    # The objects are those of a compile of each kernel alone.
    for name, source in (("tile", tile_matmul), ("grid", grid)):
        with rocdl.compile(source, hint_sets=[{"waves_per_eu": 1}, {"waves_per_eu": 2}]) as alone:
            for v in alone:
                assert [o.data for o in variants[(name, v.index)].objects] == \
                    [o.data for o in v.objects]
                assert v.kernel == ""


def test_sweep_yields_the_first_variant_before_the_last_finishes(rocdl, tile_matmul, grid):
    """The library's later reports are held in a hook on its thread: the
    first Variant must reach the loop while they are still held."""
    reported = []
    release = threading.Event()

    def hook(entry):
        reported.append((entry["kernel"], entry["index"]))
        if len(reported) > 1:
            assert release.wait(timeout=120), "the consumer never got the first variant"

    rocdl._sweep_hook = hook
    try:
        it = rocdl.sweep([tile_matmul, grid], {"waves_per_eu": [1, 2]})
        first = next(it)
        # At most the second report is in flight (one report at a time): the
        # last of the four has not been reported, so it had not finished.
        assert len(reported) <= 2 < 4
        assert (first.kernel, first.index) == reported[0]
        release.set()
        rest = list(it)
    finally:
        release.set()
        rocdl._sweep_hook = None
    got = sorted([(first.kernel, first.index)] + [(v.kernel, v.index) for v in rest])
    assert got == [("0", 0), ("0", 1), ("1", 0), ("1", 1)]
    assert sorted(reported) == got


def test_closing_the_iterator_cancels(rocdl, tile_matmul):
    it = rocdl.sweep({"a": tile_matmul, "b": tile_matmul},
                     [{"waves_per_eu": w} for w in (1, 2, 3, 4, 5, 6)])
    first = next(it)
    assert first.ok
    it.close()
    # The library call returned: its thread is gone, the compiler is usable.
    assert not [t for t in threading.enumerate() if t.name == "fly-sweep"]
    again = rocdl.compile(tile_matmul, hint_sets=[{"waves_per_eu": 2}])
    assert again[0].ok
    again.close()


def test_closing_the_compiler_during_a_sweep(rocdl, tile_matmul):
    """close() from the loop while the library's thread still compiles: the
    sweep stops as a cancelled one does, and the library destroys the
    compiler once its call returned (not under it)."""
    it = rocdl.sweep({"a": tile_matmul, "b": tile_matmul},
                     [{"waves_per_eu": w} for w in (1, 2, 3, 4, 5, 6)])
    first = next(it)
    assert first.ok
    rocdl.close()
    rest = list(it)
    assert len(rest) < 11 and all(v.ok for v in rest)
    assert not [t for t in threading.enumerate() if t.name == "fly-sweep"]


def test_sweep_errors(rocdl, tile_matmul):
    with pytest.raises(InvalidInputError, match="kernels must be"):
        rocdl.sweep(tile_matmul)
    with pytest.raises(InvalidInputError, match="kernels is empty"):
        rocdl.sweep({})
    with pytest.raises(InvalidInputError, match="time_budget must be"):
        rocdl.sweep([tile_matmul], time_budget=-1)
    with pytest.raises(InvalidInputError, match="unknown hint"):
        rocdl.sweep([tile_matmul], {"wave_per_eu": [1]})
    # A kernel that fails as a whole: the others' variants come first, then
    # a CompileError naming it.
    got = []
    with pytest.raises(CompileError) as info:
        for v in rocdl.sweep({"good": tile_matmul, "bad": "module { func.func @f( }"}):
            got.append(v.kernel)
    assert got == ["good"]
    assert info.value.kernels == ["bad"]
    assert "bad" in str(info.value)


def test_sweep_rejects_what_the_library_cannot_carry(rocdl, tile_matmul):
    # An empty name or one with a NUL would come back under another name,
    # and the kernel reported as failed though it compiled.
    for name in ("", "a\0b"):
        with pytest.raises(InvalidInputError, match="must be non-empty and without NUL"):
            rocdl.compile_many({name: tile_matmul})
    with pytest.raises(InvalidInputError, match="kernel 'x'"):
        rocdl.compile_many({"x": "\udc80"})
    with pytest.raises(InvalidInputError, match="source must be non-empty"):
        rocdl.compile_many({"x": ""})
    # Seconds the library cannot hold (it would wrap them), and NaN.
    for seconds in (4294967297, 1e10, float("nan"), float("inf")):
        with pytest.raises(InvalidInputError, match="from 0 to 1e9"):
            rocdl.compile_many([tile_matmul], variant_timeout=seconds)
    # The library's own message reaches the exception.
    with pytest.raises(InvalidInputError, match="from 0 to 65536"):
        fly_snapshot.Compiler(jobs=70000)


def test_every_sweep_result_is_destroyed(rocdl, tile_matmul, monkeypatch):
    """Whatever raises (the loop, the callback's hook), the handle the
    library returned is destroyed, once."""
    lib = rocdl._lib
    created, destroyed = [], []
    sweep, destroy = lib.flyCompilerSweep, lib.flyResultDestroy

    def counting_sweep(*args):
        handle = sweep(*args)
        if handle.ptr:
            created.append(handle.ptr)
        return handle

    def counting_destroy(handle):
        destroyed.append(handle.ptr)
        destroy(handle)

    monkeypatch.setattr(lib, "flyCompilerSweep", counting_sweep)
    monkeypatch.setattr(lib, "flyResultDestroy", counting_destroy)
    with pytest.raises(KeyError):
        for _ in rocdl.sweep([tile_matmul], {"waves_per_eu": [1, 2]}):
            raise KeyError("the user's loop")

    def hook(entry):
        raise ValueError("the user's hook")

    rocdl._sweep_hook = hook
    try:
        with pytest.raises(ValueError, match="the user's hook"):
            list(rocdl.sweep([tile_matmul], {"waves_per_eu": [1, 2]}))
    finally:
        rocdl._sweep_hook = None
    assert len(created) == 2 and sorted(destroyed) == sorted(created)
