"""fly_snapshot.Compiler: sweeps, typed results, errors, crash isolation."""

import json
import os
import re
import subprocess
import sys

import pytest

import fly_snapshot
from fly_snapshot import CompileError, Compiler, InvalidInputError

from conftest import SRC_DIR, TOOLS_DIR


def test_library_found_without_environment():
    path = fly_snapshot.library_path()
    assert path.name.startswith("libFlySnapshotCAPI.so")
    assert "FLY_CAPI_LIB" not in os.environ
    assert Compiler.version() == fly_snapshot.__version__


def test_library_not_found_is_a_fly_error():
    assert issubclass(fly_snapshot.LibraryNotFoundError, fly_snapshot.FlyError)
    assert issubclass(fly_snapshot.LibraryNotFoundError, OSError)


@pytest.mark.parametrize("kwargs", [{"jobs": -1}, {"jobs": "2"}, {"jobs": True},
                                    {"executor": "threads"}])
def test_bad_compiler_options(kwargs):
    with pytest.raises(InvalidInputError):
        Compiler(**kwargs)


def test_executor_is_the_one_name():
    """"isolate" was the old name of the executor choice: the library says
    which name replaced it, and Python has no such keyword."""
    from fly_snapshot import _capi
    lib = _capi.lib()
    assert not lib.flyCompilerCreate(b'{"isolate": false}').ptr
    assert b'"isolate" was removed: "executor"' in lib.flyGetLastError()
    with pytest.raises(TypeError):
        Compiler(isolate=False)


@pytest.mark.parametrize("kwargs, message", [
    ({"hint_sets": "waves_per_eu=2"}, "list of dicts"),
    ({"hint_sets": [["waves_per_eu", 2]]}, "must be a dict"),
    ({"hint_sets": [{"waves_per_eu": 2.5}]}, "values int, bool or str"),
    # bool is an int subclass; True must not compile as maxnreg=1.
    ({"hint_sets": [{"maxnreg": True}]}, "maxnreg takes an int, not a bool"),
    ({"target": "gfx942"}, "rocdl:<chip>"),
    ({"pipeline": "  "}, "non-empty"),
])
def test_invalid_arguments(compiler, tile_matmul, kwargs, message):
    with pytest.raises(InvalidInputError, match=message):
        compiler.compile(tile_matmul, **kwargs)
    with pytest.raises(InvalidInputError, match="str or bytes"):
        compiler.compile(42)


def test_unknown_target_family(compiler):
    with pytest.raises(InvalidInputError, match=r"rocdl:<chip> \(e.g. rocdl:gfx942\) or nvvm"):
        compiler.preset_pipeline("spirv:x")


def test_one_target_parser(compiler, tile_matmul):
    # The preset and the compile read a target through one parser, as
    # fly-tune's --target does: an unknown chip is refused by both, with
    # LLVM's processor table and the same message (the preset used to
    # accept it and build a pipeline that fails in the backend).
    message = "LLVM's AMDGPU backend does not know chip 'gfx9422'; did you mean 'gfx942'"
    with pytest.raises(InvalidInputError, match=message):
        compiler.preset_pipeline("rocdl:gfx9422")
    with pytest.raises(InvalidInputError, match=message):
        compiler.compile(tile_matmul, pipeline="builtin.module()", target="rocdl:gfx9422")


def test_library_rejects_bad_input(rocdl, tile_matmul):
    # Unknown hint, bad value, bad chip: rejected by the library's checks
    # before anything compiles, as InvalidInputError; hint sets numbered
    # from 0 as the library numbers them.
    with pytest.raises(InvalidInputError, match="unknown hint 'wave_per_eu'"):
        rocdl.compile(tile_matmul, hint_sets=[{"wave_per_eu": 2}])
    with pytest.raises(InvalidInputError, match=r"hint set #1: .*out of range"):
        rocdl.compile(tile_matmul, hint_sets=[{}, {"waves_per_eu": 99}])
    with pytest.raises(InvalidInputError, match="hint set #0"):
        rocdl.compile(tile_matmul, hint_sets=[{"maxnreg": "lots"}])
    with pytest.raises(InvalidInputError, match="hint set #1 must be a dict"):
        rocdl.compile(tile_matmul, hint_sets=[{}, 3])
    with pytest.raises(InvalidInputError, match="bad chip"):
        rocdl.compile(tile_matmul, target="rocdl:gfx9999",
                      pipeline="builtin.module(gpu-module-to-binary)")
    # Malformed IR: a located parse error.
    with pytest.raises(CompileError, match=r'<fly-capi>":1:23\): expected non-function type'):
        rocdl.compile("module { func.func @f( }")
    # A pipeline without the binary pass is never a silent full compile.
    with pytest.raises(CompileError, match="no gpu-module-to-binary") as info:
        rocdl.compile(tile_matmul, pipeline="builtin.module(canonicalize)")
    assert info.value.diagnostics


def test_sweep_typed_results(rocdl, tile_matmul):
    with rocdl.compile(tile_matmul, hint_sets=[
            {}, {"waves_per_eu": 4}, {"maxnreg": 64, "fast_fp_math": True}]) as result:
        assert len(result) == 3 and not result.failed
        default, waves4, capped = result
        assert default.hints == {} and default.id == "v0_default"
        assert waves4.hints == {"waves_per_eu": 4}
        assert capped.hints == {"fast_fp_math": True, "maxnreg": 64}
        for v in result:
            assert v.ok and v.error == ""
            (obj,) = v.objects
            assert obj.chip == "gfx942" and obj.gpu_module == "kernels"
            assert obj.data[:4] == b"\x7fELF"
            (kernel,) = v.kernels
            assert kernel.name == "tile_matmul"
            assert kernel.registers > 0 and kernel.sgprs > 0
        k0, k4 = default.kernels[0], waves4.kernels[0]
        # waves_per_eu=4 caps VGPRs at 128 on gfx942: fewer registers, more
        # waves, paid for with spills.
        assert k4.registers <= 128 < k0.registers
        assert k4.occupancy >= 4 > k0.occupancy
        assert k0.spills == 0 < k4.spills and k4.scratch > 0


def test_hint_set_product(rocdl, tile_matmul):
    """A dict of lists is the cartesian product, expanded by the library in
    the dict's order (the first key varies slowest); in a list it sits
    beside explicit sets."""
    with rocdl.compile(tile_matmul, hint_sets={"waves_per_eu": [1, 2], "O": [2, 3]}) as result:
        assert [v.hints for v in result] == [
            {"waves_per_eu": 1, "O": 2}, {"waves_per_eu": 1, "O": 3},
            {"waves_per_eu": 2, "O": 2}, {"waves_per_eu": 2, "O": 3}]
        assert all(v.ok for v in result)
    with rocdl.compile(tile_matmul, hint_sets=[{}, {"waves_per_eu": [2, 4]}]) as result:
        assert [v.hints for v in result] == [{}, {"waves_per_eu": 2}, {"waves_per_eu": 4}]
    # A bad element is located in the JSON the library was given.
    with pytest.raises(InvalidInputError, match=r"line 1, column \d+: hint 'O' .*out of range"):
        rocdl.compile(tile_matmul, hint_sets={"waves_per_eu": [1, 2], "O": [2, 9]})
    with pytest.raises(InvalidInputError, match="maxnreg takes an int, not a bool"):
        rocdl.compile(tile_matmul, hint_sets={"maxnreg": [64, True]})


def test_crashing_hint_set_fails_only_its_variant(rocdl, tile_matmul):
    """A backend that aborts (an LLVM fatal error in instruction selection
    for an unknown chip) fails its own variant; every other variant comes
    back and this interpreter keeps running."""
    hint_sets = [{}, {"target.triple": "r600-unknown-unknown"}, {"waves_per_eu": 2}]
    with rocdl.compile(tile_matmul, hint_sets=hint_sets) as result:
        assert [v.status for v in result] == ["ok", "failed", "ok"]
        crashed = result[1]
        assert re.search("crash|killed|abort|fatal error", crashed.error, re.I), crashed.error
        assert crashed.objects == []
        assert crashed.hints == {"target.triple": "r600-unknown-unknown"}
        assert all(v.objects and v.objects[0].data for v in (result[0], result[2]))
    # Still alive and still compiling.
    again = rocdl.compile(tile_matmul, hint_sets=[{"waves_per_eu": 8}])
    assert again[0].ok
    again.close()


def test_without_isolation_a_fatal_error_fails_only_its_variant(rocdl, tmp_path):
    """With executor="batch" the LLVM fatal error of the same hint set unwinds to
    the binary pass: the variant fails, the interpreter (a child here, in
    case it does not) lives."""
    script = tmp_path / "fatal.py"
    script.write_text(
        "import sys, fly_snapshot\n"
        "c = fly_snapshot.Compiler(cache=False, executor=\"batch\")\n"
        "r = c.compile(open(sys.argv[1]).read(), hint_sets=[{'waves_per_eu': 2}, "
        "{'target.triple': 'r600-unknown-unknown'}])\n"
        "print('survived', r[0].ok, r[1].ok, 'Cannot select' in r[1].error)\n")
    proc = subprocess.run([sys.executable, str(script),
                           str(SRC_DIR / "examples" / "tile_matmul.mlir")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "survived True False True" in proc.stdout


def test_write_matches_fly_tune(rocdl, tile_matmul, tmp_path):
    """Result.write uses the library's writer: same files, same manifest
    fields, same object bytes as fly-tune --out-dir."""
    fly_tune = TOOLS_DIR / "fly-tune"
    if not fly_tune.exists():
        pytest.skip("no fly-tune at %s" % fly_tune)
    hints = [{}, {"waves_per_eu": 2}, {"maxnreg": 96}]
    (tmp_path / "h.json").write_text(json.dumps(hints))
    kernel = SRC_DIR / "examples" / "tile_matmul.mlir"
    subprocess.run([str(fly_tune), str(kernel), "--quiet", "--no-cache",
                    "--hints-file", str(tmp_path / "h.json"),
                    "--out-dir", str(tmp_path / "tune")],
                   check=True, capture_output=True)
    with rocdl.compile(kernel.read_text(), hint_sets=hints) as result:
        manifest_path = result.write(tmp_path / "py")
    ours = json.loads(manifest_path.read_text())
    theirs = json.loads((tmp_path / "tune" / "manifest.json").read_text())
    assert ours["tool"] == "fly-capi" and theirs["tool"] == "fly-tune"
    assert set(ours) == set(theirs)
    assert ours["binary_pass"] == theirs["binary_pass"]
    assert sorted(os.listdir(tmp_path / "py")) == sorted(os.listdir(tmp_path / "tune"))
    # How a run got a variant (from the cache, continuing a kept code
    # generation) depends on the run, not on what it wrote.
    how = {"from_cache", "codegen_continued"}
    for a, b in zip(ours["variants"], theirs["variants"]):
        assert set(a) - how == set(b) - how
        assert (a["id"], a["hints"], a["files"]) == (b["id"], b["hints"], b["files"])
        for name in a["files"]:
            if not name.endswith(".mlir"):
                assert (tmp_path / "py" / name).read_bytes() == \
                    (tmp_path / "tune" / name).read_bytes(), name


def test_write_into_a_file_fails(rocdl, tile_matmul, tmp_path):
    (tmp_path / "file").write_text("x")
    with rocdl.compile(tile_matmul) as result:
        with pytest.raises(fly_snapshot.FlyError, match="cannot"):
            result.write(tmp_path / "file" / "out")


def test_cache_second_compile(tmp_path, tile_matmul):
    with Compiler(cache_dir=str(tmp_path / "c")) as c:
        try:
            c.preset_pipeline()
        except InvalidInputError:
            pytest.skip("no ROCm toolkit")
        first = c.compile(tile_matmul, hint_sets=[{"waves_per_eu": 2}])
        second = c.compile(tile_matmul, hint_sets=[{"waves_per_eu": 2}])
        assert not first.prefix_from_cache and second.prefix_from_cache
        assert second[0].from_cache
        assert first[0].objects[0].data == second[0].objects[0].data


def test_read_out_dir_round_trip(rocdl, tile_matmul, tmp_path):
    """An out-dir reads back into the same Variants without the library."""
    hint_sets = [{}, {"waves_per_eu": 4}, {"target.triple": "r600-unknown-unknown"}]
    with rocdl.compile(tile_matmul, hint_sets=hint_sets) as result:
        result.write(tmp_path / "out")
        written = result.variants
    back = fly_snapshot.read_out_dir(tmp_path / "out")
    assert [(v.id, v.hints, v.status) for v in back] == \
        [(v.id, v.hints, v.status) for v in written]
    assert back[1].objects[0].data == written[1].objects[0].data
    assert back[1].kernels == written[1].kernels
    assert back[2].error and back[2].objects == []
    with pytest.raises(fly_snapshot.FlyError, match="not a fly out-dir"):
        fly_snapshot.read_out_dir(tmp_path)


def test_read_out_dir_refuses_what_fly_run_refuses(tmp_path):
    """A manifest names only plain files of its out-dir; a FIFO, a device or
    a deeply nested manifest is a FlyError, never a hang, a MemoryError or a
    RecursionError."""
    import json
    import os
    out = tmp_path / "out"
    out.mkdir()

    def manifest(files):
        (out / "manifest.json").write_text(json.dumps(
            {"variants": [{"id": "v0", "status": "ok", "files": files,
                           "objects": [{"target": "#rocdl.target"}]}]}))

    for escape in ["/etc/passwd", "../../../../etc/hostname", "..", "a/b"]:
        manifest([escape])
        with pytest.raises(fly_snapshot.FlyError, match="not a plain file name"):
            fly_snapshot.read_out_dir(out)
    os.mkfifo(out / "fifo.hsaco")
    os.symlink("/dev/zero", out / "zero.hsaco")
    for special in ["fifo.hsaco", "zero.hsaco"]:
        manifest([special])
        with pytest.raises(fly_snapshot.FlyError, match="regular file|symbolic link|link"):
            fly_snapshot.read_out_dir(out)
    (out / "manifest.json").write_text("[" * 50000 + "]" * 50000)
    with pytest.raises(fly_snapshot.FlyError, match="nested deeper than the 256"):
        fly_snapshot.read_out_dir(out)
    (out / "manifest.json").unlink()
    os.mkfifo(out / "manifest.json")
    with pytest.raises(fly_snapshot.FlyError, match="not a regular file"):
        fly_snapshot.read_out_dir(out)


def test_c_api_host_survives_deeply_nested_json():
    """Compiler options and hint sets nested 50,000 deep are an error the
    host reads, not a stack overflow that kills it."""
    from fly_snapshot import _capi
    lib = _capi.lib()
    deep = b"[" * 50000 + b"]" * 50000
    handle = lib.flyCompilerCreate(deep)
    assert not handle.ptr
    assert b"nested deeper than the 256 levels" in lib.flyGetLastError()
    compiler = lib.flyCompilerCreate(b"{}")
    assert compiler.ptr
    try:
        source = b"module {}"
        result = lib.flyCompilerCompile(compiler, source, len(source),
                                        b"builtin.module(gpu-module-to-binary)", deep, b"rocdl:gfx942")
        assert not result.ptr
        assert b"nested deeper than the 256 levels" in lib.flyGetLastError()
    finally:
        lib.flyCompilerDestroy(compiler)


_RELATIVE_LOAD = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
for name, res in (("flyCompilerCreate", ctypes.c_void_p), ("flyGetLastError", ctypes.c_char_p),
                  ("flyCompilerCompile", ctypes.c_void_p)):
    getattr(lib, name).restype = res
lib.flyCompilerCompile.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                   ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
lib.flyResultVariantSucceeded.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
lib.flyResultVariantSucceeded.restype = ctypes.c_bool
lib.flyResultGetVariantJSON.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
lib.flyResultGetVariantJSON.restype = ctypes.c_char_p
lib.flyResultDestroy.argtypes = [ctypes.c_void_p]
lib.flyCompilerDestroy.argtypes = [ctypes.c_void_p]
compiler = lib.flyCompilerCreate(b'{"cache": false}')
source = open(sys.argv[2], "rb").read()
result = lib.flyCompilerCompile(compiler, source, len(source), sys.argv[3].encode(), None,
                                b"rocdl:gfx942")
if not result:
    print("null:", lib.flyGetLastError().decode())
else:
    print("ok" if lib.flyResultVariantSucceeded(result, 0) else
          lib.flyResultGetVariantJSON(result, 0).decode())
    lib.flyResultDestroy(result)
lib.flyCompilerDestroy(compiler)
"""


def test_process_executor_when_loaded_by_a_relative_path(rocdl, tile_matmul, tmp_path):
    # dlopen("lib/libFlySnapshotCAPI.so") from the prefix: the library still
    # finds ../bin/fly-tune for its default executor (not the interpreter's).
    library = fly_snapshot.library_path()
    source = tmp_path / "kernel.mlir"
    source.write_text(tile_matmul)
    run = subprocess.run(
        [sys.executable, "-c", _RELATIVE_LOAD,
         os.path.join(library.parent.name, library.name), str(source),
         rocdl.preset_pipeline("rocdl:gfx942")],
        cwd=library.parent.parent, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"
