"""A PEP 517 build backend for fly_snapshot using only the standard library.

pip's build isolation installs a backend's requirements from an index; with
no index reachable (these machines see no PyPI) setuptools cannot be that
backend. This one requires nothing. It builds one wheel holding the pure
Python package plus copies of libFlySnapshotCAPI.so (as fly_snapshot/lib/)
and of the fly-tune beside it (fly_snapshot/bin/: the process executor's
child), the library found at (first hit):

  --config-settings=fly-capi-lib=PATH, $FLY_CAPI_LIB (at build time only),
  ../build/lib/libFlySnapshotCAPI.so beside this source tree.

The copied library keeps its RUNPATH (the LLVM/MLIR it was built against),
so the installed package needs no environment variables.

Run as a script (the `fly-wheel` build target, -DFLY_SELF_CONTAINED=ON) it
builds the self-contained wheel instead: the statically linked library and
fly-tune of build/self-contained, the ROCm device libraries as
fly_snapshot/rocm-toolkit/amdgcn/bitcode (where the library looks for a
ROCDL toolkit), tagged manylinux_2_<N>_x86_64 with N the newest glibc
symbol version the two binaries need (objdump -T).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

NAME = "fly_snapshot"
LIBRARY = "libFlySnapshotCAPI.so"
SOURCE_DIR = Path(__file__).resolve().parent.parent


def _version() -> str:
    text = (SOURCE_DIR / NAME / "__init__.py").read_text()
    return re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1)


def _find_library(config_settings) -> Path:
    settings = config_settings or {}
    candidates = []
    if settings.get("fly-capi-lib"):
        candidates.append(Path(settings["fly-capi-lib"]))
    if os.environ.get("FLY_CAPI_LIB"):
        candidates.append(Path(os.environ["FLY_CAPI_LIB"]))
    candidates.append(SOURCE_DIR.parent / "build" / "lib" / LIBRARY)
    for path in candidates:
        if path.is_file():
            return path.resolve()
    raise RuntimeError(
        "fly_snapshot: %s not found (looked at %s). Build it first: "
        "`cmake -G Ninja -S . -B build && ninja -C build FlySnapshotCAPI`, or "
        "pass --config-settings=fly-capi-lib=PATH."
        % (LIBRARY, ", ".join(map(str, candidates))))


def _find_fly_tune(config_settings, library: Path) -> Path:
    settings = config_settings or {}
    candidates = []
    if settings.get("fly-tune"):
        candidates.append(Path(settings["fly-tune"]))
    candidates.append(library.parent.parent / "bin" / "fly-tune")
    for path in candidates:
        if path.is_file():
            return path.resolve()
    raise RuntimeError(
        "fly_snapshot: fly-tune not found (looked at %s); the library's crash "
        "isolation starts it. Build it (ninja -C build fly-tune) or pass "
        "--config-settings=fly-tune=PATH." % ", ".join(map(str, candidates)))


def _metadata() -> str:
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
            "Summary: Cheap GPU-kernel autotuning for MLIR compilers\n"
            "Requires-Python: >=3.9\n" % (NAME, _version()))


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "%s,sha256=%s,%d" % (arcname, digest.decode(), len(data))


def _tag() -> str:
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return "py3-none-" + platform


def _package_files():
    for path in sorted((SOURCE_DIR / NAME).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.name not in (
                LIBRARY, "_locations.json"):
            yield path


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def glibc_floor(binaries) -> tuple:
    """The newest GLIBC_2.N symbol version any of `binaries` needs, as
    (2, N): the oldest glibc they run on."""
    floor = (2, 0)
    for binary in binaries:
        table = subprocess.run(["objdump", "-T", os.fspath(binary)], check=True,
                               capture_output=True, text=True).stdout
        for major, minor in re.findall(r"\bGLIBC_(\d+)\.(\d+)", table):
            floor = max(floor, (int(major), int(minor)))
    return floor


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None,
                tag=None, extra_files=()):
    version = _version()
    dist_info = "%s-%s.dist-info" % (NAME, version)
    tag = tag or _tag()
    filename = "%s-%s-%s.whl" % (NAME, version, tag)
    files = []
    for path in _package_files():
        files.append((path.relative_to(SOURCE_DIR).as_posix(), path.read_bytes()))
    # <pkg>/lib/<library> and <pkg>/bin/fly-tune: the layout of an installed
    # prefix, in which the library finds the fly-tune its process executor
    # starts (../bin/fly-tune) and the toolkit folder beside it.
    library = _find_library(config_settings)
    files.append(("%s/lib/%s" % (NAME, LIBRARY), library.read_bytes()))
    fly_tune = _find_fly_tune(config_settings, library)
    files.append(("%s/bin/fly-tune" % NAME, fly_tune.read_bytes()))
    # fly_snapshot.runtime's library (no LLVM), built beside the C API's.
    runtime_library = library.parent / "libFlyRuntimeCAPI.so"
    if runtime_library.is_file():
        files.append(("%s/lib/%s" % (NAME, runtime_library.name), runtime_library.read_bytes()))
    files.extend(extra_files)
    files.append(("%s/METADATA" % dist_info, _metadata().encode()))
    files.append(("%s/WHEEL" % dist_info,
                  ("Wheel-Version: 1.0\nGenerator: fly_build\nRoot-Is-Purelib: false\n"
                   "Tag: %s\n" % tag).encode()))
    files.append(("%s/top_level.txt" % dist_info, (NAME + "\n").encode()))
    record = [_record_line(name, data) for name, data in files]
    record.append("%s/RECORD,," % dist_info)
    files.append(("%s/RECORD" % dist_info, ("\n".join(record) + "\n").encode()))

    os.makedirs(wheel_directory, exist_ok=True)
    target = Path(wheel_directory) / filename
    tmp = target.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            # The library must stay executable/readable; sources readable.
            mode = 0o755 if name.endswith((".so", "/fly-tune")) else 0o644
            info.external_attr = (0o100000 | mode) << 16
            wheel.writestr(info, data)
    os.replace(tmp, target)
    return filename


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, _version())
    filename = base + ".tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    with tarfile.open(Path(sdist_directory) / filename, "w:gz") as sdist:
        for path in [SOURCE_DIR / "pyproject.toml", *sorted(
                (SOURCE_DIR / "_build_backend").glob("*.py")), *_package_files()]:
            sdist.add(path, arcname="%s/%s" % (base, path.relative_to(SOURCE_DIR).as_posix()))
        pkg_info = _metadata().encode()
        info = tarfile.TarInfo("%s/PKG-INFO" % base)
        info.size = len(pkg_info)
        sdist.addfile(info, io.BytesIO(pkg_info))
    return filename


def build_self_contained_wheel(wheel_directory, library, fly_tune, bitcode_dir,
                               runtime_library):
    """The wheel of a -DFLY_SELF_CONTAINED=ON build; returns its path."""
    library, fly_tune = Path(library), Path(fly_tune)
    runtime_library = Path(runtime_library)
    major, minor = glibc_floor([library, fly_tune, runtime_library])
    bitcode = [("%s/rocm-toolkit/amdgcn/bitcode/%s" % (NAME, path.name), path.read_bytes())
               for path in sorted(Path(bitcode_dir).glob("*.bc"))]
    if not bitcode:
        raise RuntimeError("fly_snapshot: no ROCm device libraries (*.bc) in %s"
                           % bitcode_dir)
    # Older wheels of this version and another tag would be installed as well.
    for old in Path(wheel_directory).glob("%s-%s-*.whl" % (NAME, _version())):
        old.unlink()
    name = build_wheel(wheel_directory, {"fly-capi-lib": os.fspath(library),
                                         "fly-tune": os.fspath(fly_tune)},
                       tag="py3-none-manylinux_%d_%d_x86_64" % (major, minor),
                       extra_files=bitcode + [("%s/lib/%s" % (NAME, runtime_library.name),
                                               runtime_library.read_bytes())])
    return Path(wheel_directory) / name


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit("usage: fly_build.py <wheel-dir> <libFlySnapshotCAPI.so> <fly-tune> "
                 "<bitcode-dir> <libFlyRuntimeCAPI.so>")
    print(build_self_contained_wheel(*sys.argv[1:]))
