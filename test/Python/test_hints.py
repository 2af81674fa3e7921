"""Hint values typed by the hint registry: the library's flyGetHintSpecsJSON,
or without a library the _hint_specs.json generated from the same registry."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fly_snapshot
from fly_snapshot import _capi, _hints
from fly_snapshot.compiler import _typed_hints

# A manifest's hint_set (HintSet::toJSON: integer and boolean hints as JSON
# numbers, the rest as strings), selectors included, and its Python values.
MANIFEST_HINTS = {
    "waves_per_eu": 4, "maxnreg": 128, "O": 2, "target.O": 1,
    "fast_fp_math": 1, "unsafe_fp_math": 0,
    "O[gfx942]": 3, "target[gfx90a].O": 0, "fast_fp_math[rocdl]": 1,
    "unsafe_fp_math[sm_90]": 0, "target[sm_90].chip": "sm_90a",
    "target.features": "+ptx80", "func.rocdl.flat_work_group_size": "1,256",
    "passthrough.amdgpu-num-sgpr": "64", "opts": "-O3",
}
TYPED_HINTS = {
    "waves_per_eu": 4, "maxnreg": 128, "O": 2, "target.O": 1,
    "fast_fp_math": True, "unsafe_fp_math": False,
    "O[gfx942]": 3, "target[gfx90a].O": 0, "fast_fp_math[rocdl]": True,
    "unsafe_fp_math[sm_90]": False, "target[sm_90].chip": "sm_90a",
    "target.features": "+ptx80", "func.rocdl.flat_work_group_size": "1,256",
    "passthrough.amdgpu-num-sgpr": "64", "opts": "-O3",
}


@pytest.fixture
def without_library(monkeypatch):
    """The package as on a machine where the library cannot be loaded."""
    def no_library():
        raise _capi.LibraryNotFoundError("no library in this test")
    monkeypatch.setattr(_capi, "lib", no_library)
    _hints.hint_specs.cache_clear()
    yield
    _hints.hint_specs.cache_clear()


def test_packaged_specs_are_the_librarys():
    """_hint_specs.json is the library's registry (scripts/update-hint-table.sh
    writes it; test/Tools/hint-specs-json.test checks it against fly-hint-doc)."""
    from_library = json.loads(_capi.lib().flyGetHintSpecsJSON())
    packaged = json.loads((Path(_hints.__file__).parent / "_hint_specs.json").read_text())
    assert from_library == packaged, "run scripts/update-hint-table.sh"
    assert list(_hints.hint_specs()) == from_library


def test_typed_hints_from_the_library(monkeypatch, tmp_path):
    """A package without its _hint_specs.json asks the library."""
    monkeypatch.setattr(_hints, "_SPECS_FILE", tmp_path / "missing.json")
    _hints.hint_specs.cache_clear()
    try:
        typed = _typed_hints(MANIFEST_HINTS)
    finally:
        _hints.hint_specs.cache_clear()
    assert _capi._lib is not None
    assert typed == TYPED_HINTS
    # bool is a subclass of int: check the types, not only the values.
    assert {k: type(v) for k, v in typed.items()} == \
        {k: type(v) for k, v in TYPED_HINTS.items()}


def test_typed_hints_without_the_library(without_library):
    typed = _typed_hints(MANIFEST_HINTS)
    assert {k: (type(v), v) for k, v in typed.items()} == \
        {k: (type(v), v) for k, v in TYPED_HINTS.items()}


def test_every_registry_type_is_handled():
    """A new value type in the registry needs a decision in _typed_hints."""
    assert {spec["type"] for spec in _hints.hint_specs()} <= \
        {"int", "bool", "attribute", "string"}
    for spec in _hints.hint_specs():
        if spec["type"] == "int":
            assert spec["min"] <= spec["max"]


@pytest.mark.parametrize("key, split", [
    ("maxnreg", ("maxnreg", "")),
    ("O[gfx942]", ("O", "gfx942")),
    ("target[gfx90a].O", ("target.O", "gfx90a")),
    ("target[sm_90].chip", ("target.chip", "sm_90")),
    ("fast_fp_math[rocdl]", ("fast_fp_math", "rocdl")),
    ("O[]", None), ("O[gfx942", None), ("O]", None), ("target.O[gfx942]", None),
    ("O[gfx942]x", None), ("O[gfx-942]", None), ("[gfx942].O", None),
    ("target[a][b].O", None),
])
def test_split_hint_name(key, split):
    """As HintSet.h's splitHintName takes names apart."""
    assert _hints.split_hint_name(key) == split


@pytest.mark.parametrize("key, kind", [
    ("waves_per_eu", "int"), ("target[gfx90a].O", "int"), ("O[nvvm]", "int"),
    ("unsafe_fp_math[gfx942]", "bool"), ("func.x", "attribute"),
    ("passthrough.x", "string"), ("target[sm_90].abi", "string"),
    ("func.", None), ("target.arch", None), ("nonsense", None), ("O[", None),
])
def test_hint_type(key, kind):
    assert _hints.hint_type(key) == kind


def test_read_out_dir_without_any_library(tmp_path):
    """A copy of the package with no library to find (no lib/, no
    _locations.json) reads an out-dir, hints typed by _hint_specs.json,
    without loading anything."""
    package = Path(fly_snapshot.__file__).parent
    copy = tmp_path / "site" / "fly_snapshot"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns(
        "_locations.json", "lib", "bin", "__pycache__"))
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text(json.dumps({"variants": [{
        "index": 0, "id": "v0_selectors", "hint_set": MANIFEST_HINTS,
        "status": "failed", "error": "not compiled", "files": []}]}))
    script = (
        "import json, sys\n"
        "import fly_snapshot\n"
        "from fly_snapshot import _capi\n"
        "[v] = fly_snapshot.read_out_dir(sys.argv[1])\n"
        "print(json.dumps({'loaded': _capi._lib is not None, 'hints': "
        "{k: [type(x).__name__, x] for k, x in v.hints.items()}}))\n")
    env = dict(os.environ, PYTHONPATH=str(copy.parent))
    run = subprocess.run([sys.executable, "-c", script, str(out)], env=env,
                         capture_output=True, text=True, check=True)
    report = json.loads(run.stdout)
    assert report["loaded"] is False
    assert report["hints"] == {k: [type(v).__name__, v] for k, v in TYPED_HINTS.items()}
    # The copy really has no library.
    run = subprocess.run([sys.executable, "-c", "import fly_snapshot; "
                          "fly_snapshot.library_path()"], env=env,
                         capture_output=True, text=True)
    assert run.returncode != 0 and "LibraryNotFoundError" in run.stderr
