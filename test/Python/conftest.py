"""Fixtures for the fly_snapshot tests. ctest runs them with
PYTHONPATH=build/python (the package as the build tree lays it out) and
FLY_TOOLS_DIR / FLY_LLVM_TOOLS_DIR / FLY_SRC_DIR pointing at the build's
tools, LLVM's tools and the source tree."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import fly_snapshot

SRC_DIR = Path(os.environ.get("FLY_SRC_DIR", Path(__file__).resolve().parents[2]))
TOOLS_DIR = Path(os.environ.get("FLY_TOOLS_DIR", SRC_DIR / "build" / "bin"))
LLVM_TOOLS_DIR = Path(os.environ.get("FLY_LLVM_TOOLS_DIR", "/usr/lib/llvm-22/bin"))

# Everything before gpu-module-to-binary in fly-tune's ROCDL preset.
ROCDL_PREFIX = ("builtin.module(canonicalize,cse,rocdl-attach-target{chip=gfx942 O=2},"
                "gpu.module(convert-scf-to-cf,convert-gpu-to-rocdl{chipset=gfx942}),"
                "reconcile-unrealized-casts)")


@pytest.fixture
def compiler(tmp_path):
    """A compiler with a private cache, crash isolation on."""
    with fly_snapshot.Compiler(jobs=2, cache_dir=str(tmp_path / "cache")) as c:
        yield c


@pytest.fixture
def rocdl(compiler):
    """Skips unless the library finds a ROCm-shaped toolkit."""
    try:
        compiler.preset_pipeline("rocdl:gfx942")
    except fly_snapshot.InvalidInputError as e:
        pytest.skip("no ROCm toolkit: %s" % e)
    return compiler


@pytest.fixture
def toolkit(rocdl):
    """The toolkit folder of the ROCDL preset."""
    pipeline = rocdl.preset_pipeline("rocdl:gfx942")
    return pipeline.rsplit("toolkit=", 1)[1].rstrip("})")


@pytest.fixture(scope="session")
def tile_matmul():
    return (SRC_DIR / "examples" / "tile_matmul.mlir").read_text()


@pytest.fixture(scope="session")
def prebinary(tile_matmul):
    """tile_matmul lowered for gfx942 up to gpu-module-to-binary by stock
    mlir-opt: what FlyDSL hands its LLVM dir's mlir-opt."""
    mlir_opt = LLVM_TOOLS_DIR / "mlir-opt"
    if not mlir_opt.exists():
        mlir_opt = shutil.which("mlir-opt-22") or shutil.which("mlir-opt")
    if not mlir_opt:
        pytest.skip("no mlir-opt")
    return subprocess.run([str(mlir_opt), "--pass-pipeline=" + ROCDL_PREFIX],
                          input=tile_matmul, capture_output=True, text=True,
                          check=True).stdout
